"""The Action's stages, each a thin call into the CLI or the library, so that the Action is
exactly what a user could run by hand: run or import, compare, store, publish, comment."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torch_bench.action.context import RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.analyze.baseline import NoBaseline
from torch_bench.cli import build_parser
from torch_bench.fileio import write_text_atomic
from torch_bench.report import actions
from torch_bench.report.github import GitHubError, client_from_env, upsert_comment
from torch_bench.results.document import load_run, save_run
from torch_bench.store.access import credentials_for, github_remote
from torch_bench.store.git import Credentials
from torch_bench.store.publish import checkout_data, edit_data, publish_site
from torch_bench.store.remote import Target, store_runs


def cli(*args: str) -> int:
    """Run one `torch-bench` command in this process; UserError propagates."""
    parsed = build_parser().parse_args([str(a) for a in args])
    return int(parsed.handler(parsed) or 0)


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def results(self) -> Path:
        return self.root / "results.json"

    @property
    def imported(self) -> Path:
        return self.root / "imported"

    @property
    def history(self) -> Path:
        return self.root / "history"

    @property
    def report(self) -> Path:
        return self.root / "report.md"

    @property
    def verdicts(self) -> Path:
        return self.root / "verdicts.json"

    @property
    def fork_report(self) -> Path:
        return self.root / "pr-report"

    @property
    def site(self) -> Path:
        return self.root / "site"


def produce_results(inputs: ActionInputs, paths: Paths) -> Path:
    """Run the suites, or ingest the given file; returns the run document (or, for a
    github-action-benchmark history, a folder of them)."""
    source, kind = inputs["results-file"], inputs["results-format"]
    if not source:
        shard = ["--total-partitions", inputs["total-partitions"],
                 "--partition-id", inputs["partition-id"]] \
            if inputs["total-partitions"] > 1 else []
        config = ["--config", inputs["config"]] if inputs["config"] else []
        cli("run", "--suite", inputs["suites"], "--device", inputs["device"], *config,
            *shard, *shlex.split(inputs["run-args"]), "--out", paths.results)
        return paths.results
    if kind == "canonical":
        save_run(load_run(source), paths.results)
        return paths.results
    unit = ["--unit", inputs["results-unit"]] if inputs["results-unit"] else []
    out = paths.imported if kind == "github-action-benchmark" else paths.results
    cli("import", source, "--format", kind, *unit, "--out", out)
    return out


def data_target(inputs: ActionInputs, environ: Mapping[str, str]) -> Target:
    remote = inputs["data-remote"] or github_remote(
        inputs["data-repository"] or environ.get("GITHUB_REPOSITORY", ""), environ)
    return Target(remote, inputs["data-branch"], inputs["data-folder"])


def credentials(target: Target, environ: Mapping[str, str]) -> Credentials | None:
    return credentials_for(target.remote, environ.get("GITHUB_TOKEN"))


def read_history(target: Target, creds: Credentials | None, paths: Paths) -> Path:
    return checkout_data(target, creds, paths.history)


@dataclass(frozen=True)
class Outcome:
    verdict: str  # regression, improvement, unchanged, inconclusive or no-baseline
    regressions: int
    improvements: int
    report: Path | None


def overall_verdict(counts: Mapping[str, int]) -> str:
    if counts.get("regression") or counts.get("newly_failing"):
        return "regression"
    for kind in ("improvement", "inconclusive"):
        if counts.get(kind):
            return kind
    return "unchanged"


def compare(inputs: ActionInputs, ctx: RunContext, head: Path, history: Path, paths: Paths,
            config_name: str) -> Outcome:
    baseline = inputs["baseline"]
    link = ctx.dashboard_url(inputs["site-folder"])
    extra = ["--dashboard-link", link] if link else []
    if ctx.from_fork:
        extra += ["--fork-dir", paths.fork_report, "--pr", str(ctx.pr_number)]
    try:
        choice = ["auto", "--latest"] if baseline == "latest" else [baseline]
        cli("compare", *choice, head, "--history", history,
            "--repo-dir", ctx.workspace, "--base-branch", ctx.compare_branch() or "main",
            "--markdown", paths.report, "--json", paths.verdicts,
            "--min-effect", inputs["min-effect"], "--z", inputs["z-threshold"],
            "--config-name", config_name, *extra)
    except NoBaseline as exc:
        note = ("No baseline yet: nothing in the history matches this run's branch and "
                f"environment, so this run starts the history. ({exc})")
        report = f"## torch-bench\n\n{note}\n"
        write_text_atomic(paths.report, report)
        actions.write_job_summary(report)
        if ctx.from_fork:
            actions.write_fork_handoff(paths.fork_report, report, ctx.pr_number)
        print(note, file=sys.stderr)
        return Outcome("no-baseline", 0, 0, paths.report)
    counts = json.loads(paths.verdicts.read_text())["counts"]
    return Outcome(overall_verdict(counts), counts.get("regression", 0),
                   counts.get("improvement", 0), paths.report)


def store(head: Path, target: Target, creds: Credentials | None) -> None:
    from torch_bench.cli.store import load_sources

    report = store_runs(load_sources([str(head)]), target, creds,
                        log=lambda line: print(line, file=sys.stderr))
    print(f"stored {len(report.added)} run(s) on {target.branch}", file=sys.stderr)


def retain(target: Target, creds: Credentials | None, keep: int) -> None:
    """History retention: keep the newest `keep` runs of every benchmark on the branch."""
    report = edit_data(target, creds,
                       lambda data: cli("data", "prune", "--data", data, "--keep", keep),
                       f"torch-bench: keep the newest {keep} runs per benchmark",
                       log=lambda line: print(line, file=sys.stderr))
    print("history pruned" if report.commit else "history within retention", file=sys.stderr)


def publish(target: Target, creds: Credentials | None, paths: Paths,
            site_folder: str = ".") -> None:
    def build(data: Path) -> Path:
        cli("site", "--data", data, "--out", paths.site)
        (paths.site / ".nojekyll").write_text("")  # serve every file as it is
        return paths.site

    report = publish_site(target, creds, build, site_folder=site_folder,
                          log=lambda line: print(line, file=sys.stderr))
    print("dashboard " + ("published" if report.commit else "already up to date"),
          file=sys.stderr)


def comment(inputs: ActionInputs, ctx: RunContext, outcome: Outcome, config_name: str,
            environ: Mapping[str, str]) -> str | None:
    """Post or update the PR comment when asked; a failure is a warning. The comment URL."""
    wanted = inputs["comment"] == "always" or (
        inputs["comment"] == "on-regression" and outcome.verdict == "regression")
    if not (ctx.is_pr and wanted and not ctx.from_fork and outcome.report and ctx.repository):
        return None
    try:
        client = client_from_env(environ)
        action, posted = upsert_comment(client, ctx.repository, ctx.pr_number,
                                        outcome.report.read_text(), config_name)
    except GitHubError as exc:
        print(f"::warning title=torch-bench::could not comment on the PR: {exc}")
        return None
    print(f"{action} the PR comment", file=sys.stderr)
    return posted.get("html_url")


def write_outputs(values: Mapping[str, str | int | None], environ: Mapping[str, str]) -> None:
    path = environ.get("GITHUB_OUTPUT")
    if path:
        shown = {k: "" if v is None else str(v) for k, v in values.items()}
        actions.append_to(path, actions.format_outputs(shown))
