"""What a PR job costs beside a push job, on the Action's end-to-end harness (the composite
step's script, a local data remote, a local GitHub API): a library's own suite (one tiny
model made 50% slower on the PR's branch), two pushes to main, then the same PR with
`pr-budget: auto` (the default) and with an unbounded budget (the inputs before it existed:
600 s of confirmation, 600 s of explain, a full A/B).

    python benchmarks/pr_budget.py

Prints each job's seconds, the PR jobs' ratio to the push job, and the summary's budget
line. Wall-clock figures: they depend on the machine and its load; the ratios are the point.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_github import FakeGitHub  # noqa: E402
from test_action_e2e import World, git, run_action  # noqa: E402
from test_action_own_suites import INPUTS, commit_library  # noqa: E402


def timed(world: World, event: str, **inputs: str) -> tuple[float, str, str]:
    github = world.event(event)
    started = time.monotonic()
    done, outputs, _ = run_action(world, github, **INPUTS, **inputs)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    line = next((x for x in done.stderr.splitlines() if x.startswith("**PR budget**")), "")
    return seconds, outputs["verdict"], line


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, FakeGitHub() as api:
        os.environ["OWNBENCH_ENV_DIR"] = folder
        world = World(Path(folder) / "world", api)
        commit_library(world)
        git(world.project, "checkout", "-q", "main")
        pushes = [timed(world, "push", **{"build-site": "false"})[0] for _ in range(2)]
        git(world.project, "checkout", "-q", "feature")
        push_s = pushes[-1]
        print(f"push job (measure, compare, store): {push_s:.1f} s")
        for label, budget in (("pr-budget: auto", "auto"), ("unbounded", "100000")):
            seconds, verdict, line = timed(world, "pull_request", **{"pr-budget": budget})
            print(f"PR job, {label}: {seconds:.1f} s = {seconds / push_s:.2f} x the push job; "
                  f"verdict {verdict}")
            print(f"    {line}")


if __name__ == "__main__":
    main()
