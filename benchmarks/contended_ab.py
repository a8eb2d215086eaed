"""Side-by-side judgements beside a busy neighbour: `torch-bench ab` of the demo's doubled MLP
and a bisection of a 2x step, each tried several times while 4 busy loops and 4 loops
starting short processes share the machine.

    python benchmarks/contended_ab.py [--tries 5] [--bisect-tries 5] [--rounds 3]
        [--keep DIR] [--no-load]

The project is the demo's (scripts/demo-project: tinynet), made a git repository in a
temporary folder (or --keep DIR): main, a branch whose MLP has 4 hidden layers instead of 2
(twice the work), and six commits c1..c6 for the bisection, c4 the one that doubles the
MLP. Every try runs, with the neighbour on:

    torch-bench ab --base MAIN --head PR --rounds 3 -- --suite tinynet.bench --filter mlp
        --threads 1 --max-time 0.3 --processes 1 --case-start fork --no-preflight
    torch-bench bisect --good c1 --bad c6 --rounds 3 -- (the same run arguments)

and prints, per try, the MLP's verdict (or the bisection's conclusion) and the load average;
then how many tries called the regression / named c4. The neighbour is a process group of
its own (`while true; do :; done` 4 times, `while true; do /bin/true; done` 4 times), started
before the first try and killed after the last (and on any error): it slows everything else
on the machine, so keep the tries few. Cost on a 2-core machine: about 2.5 minutes an A/B try
(3 rounds and 3 confirming rounds) and 4-7 minutes a bisection.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scripts" / "demo-project"
RUN_ARGS = ["--suite", "tinynet.bench", "--filter", "mlp", "--threads", "1", "--max-time",
            "0.3", "--processes", "1", "--case-start", "fork", "--no-preflight"]
NEIGHBOUR = ("for i in 1 2 3 4; do (while true; do :; done) & done; "
             "for i in 1 2 3 4; do (while true; do /bin/true; done) & done; wait")
DOUBLED = ("MLP_LAYERS = 2 ", "MLP_LAYERS = 4 ")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=tinynet dev",
                           "-c", "user.email=dev@tinynet.invalid", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def project(where: Path) -> Path:
    """The demo's project as a git repository on main."""
    shutil.copytree(DEMO, where, ignore=shutil.ignore_patterns("__pycache__"))
    git(where, "init", "--quiet", "--initial-branch", "main")
    git(where, "add", ".")
    git(where, "commit", "--quiet", "-m", "c1: tinynet")
    return where


def double_the_mlp(checkout: Path, message: str) -> None:
    models = checkout / "tinynet" / "models.py"
    text = models.read_text()
    if DOUBLED[0] not in text:
        raise SystemExit(f"{models}: no {DOUBLED[0]!r} to change")
    models.write_text(text.replace(DOUBLED[0], DOUBLED[1], 1))
    git(checkout, "commit", "--quiet", "-am", message)


def ab_pair(where: Path) -> tuple[Path, Path]:
    main = project(where / "main")
    head = where / "pr"
    git(main, "worktree", "add", "--quiet", "-b", "deeper-mlp", str(head))
    double_the_mlp(head, "Deepen the MLP to 4 hidden layers")
    return main, head


def bisect_repo(where: Path) -> tuple[Path, list[str]]:
    """c1..c6 on main; c4 doubles the MLP, the others touch nothing measured."""
    repo = project(where / "bisect")
    for number in range(2, 7):
        if number == 4:
            double_the_mlp(repo, "c4: deepen the MLP")
        else:
            with (repo / "tinynet" / "__init__.py").open("a") as init:
                init.write(f"# c{number}\n")
            git(repo, "commit", "--quiet", "-am", f"c{number}: a comment")
    return repo, git(repo, "rev-list", "--reverse", "HEAD").split()


def torch_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torch_bench", *args], capture_output=True,
                          text=True, check=False)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def ab_try(main: Path, head: Path, rounds: int, out: Path) -> str:
    done = torch_bench("ab", "--base", str(main), "--head", str(head), "--rounds", str(rounds),
                       "--out-dir", str(out), "--json", str(out / "verdicts.json"),
                       "--no-github", "--", *RUN_ARGS)
    if done.returncode not in (0, 1) or not (out / "verdicts.json").exists():
        return f"failed ({done.returncode}): {done.stderr.strip()[-300:]}"
    verdicts = json.loads((out / "verdicts.json").read_text())["verdicts"]
    mlp = [v for v in verdicts if v["name"] == "mlp"]
    return "; ".join(f"{v['verdict']}" + (f" ({v['note']})" if v.get("note") else "")
                     for v in mlp) or "no mlp verdict"


def bisect_try(repo: Path, commits: list[str], rounds: int, out: Path) -> tuple[str, str]:
    done = torch_bench("bisect", "--repo", str(repo), "--good", commits[0], "--bad",
                       commits[-1], "--rounds", str(rounds), "--out-dir", str(out),
                       "--json", str(out / "bisect.json"), "--no-github", "--", *RUN_ARGS)
    if done.returncode != 0 or not (out / "bisect.json").exists():
        return "", f"failed ({done.returncode}): {done.stderr.strip()[-300:]}"
    found = json.loads((out / "bisect.json").read_text())
    return found.get("first_bad") or "", found["conclusion"]


class Neighbour:
    """4 busy loops and 4 loops starting /bin/true, in a process group of their own."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Neighbour:
        if self.on:
            self.process = subprocess.Popen(["bash", "-c", NEIGHBOUR], start_new_session=True)
            time.sleep(30)  # let the load average climb
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=5, help="A/B tries (default 5)")
    parser.add_argument("--bisect-tries", type=int, default=5,
                        help="bisections (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it all")
    parser.add_argument("--no-load", action="store_true", help="no neighbour (a control)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="contended-ab-") as scratch:
        where = Path(options.keep or scratch).resolve()
        where.mkdir(parents=True, exist_ok=True)
        main_checkout, head = ab_pair(where)
        repo, commits = bisect_repo(where)
        called = found = 0
        with Neighbour(not options.no_load):
            print(f"neighbour {'on' if not options.no_load else 'off'}; load {load()}",
                  flush=True)
            for n in range(options.tries):
                started = time.monotonic()
                said = ab_try(main_checkout, head, options.rounds, where / f"ab-{n + 1}")
                called += said.startswith("regression")
                print(f"ab {n + 1}: {said} [{time.monotonic() - started:.0f} s, load "
                      f"{load()}]", flush=True)
            for n in range(options.bisect_tries):
                started = time.monotonic()
                first_bad, said = bisect_try(repo, commits, options.rounds,
                                             where / f"bisect-{n + 1}")
                found += first_bad == commits[3]
                print(f"bisect {n + 1}: {said} [{time.monotonic() - started:.0f} s, load "
                      f"{load()}]", flush=True)
        print(f"ab: regression called in {called} of {options.tries}; bisect: c4 "
              f"({commits[3][:10]}) named in {found} of {options.bisect_tries}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
