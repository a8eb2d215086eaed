"""The Action's stages, each a thin call into the CLI or the library, so that the Action is
exactly what a user could run by hand: run or import, compare, store, publish, comment."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from torch_bench.action import ab_stage, pr_budget
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.action.left_out import left_out_note, untrusted_of
from torch_bench.action.pr_budget import PrBudget
from torch_bench.analyze.baseline import NoBaseline
from torch_bench.cli import build_parser
from torch_bench.fileio import write_text_atomic
from torch_bench.report import workflow
from torch_bench.report.github import GitHubError, client_from_env, upsert_comment
from torch_bench.results.document import load_run, save_run
from torch_bench.results.schema import Run
from torch_bench.store.access import credentials_for, github_remote
from torch_bench.store.git import Credentials
from torch_bench.store.publish import BuiltSite, checkout_data, edit_data
from torch_bench.store.reader import RunFilter
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.run_index import index_history
from torch_bench.store.site_branch import publish_dashboard

if TYPE_CHECKING:
    from torch_bench.store.previous_site import PreviousSite


def cli(*args: str) -> int:
    """Run one `torch-bench` command in this process; UserError propagates."""
    argv = [str(a) for a in args]
    parsed = build_parser(argv).parse_args(argv)
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


def produce_results(inputs: ActionInputs, paths: Paths, history: Path | None = None,
                    run: Callable[..., int] | None = None) -> Path:
    """Run the suites (with `run`, `cli` by default), or ingest the given file; returns the
    run document (or, for a github-action-benchmark history, a folder of them). A run reuses
    the calls per sample recorded in `history` (the data folder), so it times the same loops
    as its baseline."""
    source, kind = inputs["results-file"], inputs["results-format"]
    if not source:
        shard = ["--total-partitions", inputs["total-partitions"],
                 "--partition-id", inputs["partition-id"]] \
            if inputs["total-partitions"] > 1 else []
        config = ["--config", inputs["config"]] if inputs["config"] else []
        calibration = ["--calibration", history] if history is not None else []
        (run or cli)("run", "--suite", inputs["suites"], "--device", inputs["device"],
                     *config, *shard, *calibration, *shlex.split(inputs["run-args"]),
                     "--out", paths.results)
        return paths.results
    if kind == "canonical":
        save_run(load_run(source), paths.results)
        return paths.results
    unit = ["--unit", inputs["results-unit"]] if inputs["results-unit"] else []
    history = kind == "github-action-benchmark"
    out = paths.imported if history else paths.results
    # the tool ran in this job: this machine and checkout, unless the file names its commit
    here = [] if history else ["--env", "here"]
    cli("import", source, "--format", kind, *unit, *here, "--out", out)
    return out


def data_target(inputs: ActionInputs, environ: Mapping[str, str]) -> Target:
    remote = inputs["data-remote"] or github_remote(
        inputs["data-repository"] or environ.get("GITHUB_REPOSITORY", ""), environ)
    return Target(remote, inputs["data-branch"], inputs["data-folder"])


def data_repository_of(inputs: ActionInputs) -> str | None:
    """The GitHub repository (owner/name) holding the data branch when it is another one
    than this: `data-repository`, or a `data-remote` on github.com; "" when it is this one
    (or a local path); None for a remote on another host, whose Pages nobody can name."""
    remote = inputs["data-remote"]
    if not remote:
        return inputs["data-repository"]
    found = re.fullmatch(r"(?:https://github\.com/|git@github\.com:)([\w.-]+/[\w.-]+?)"
                         r"(?:\.git)?/?", remote)
    if found:
        return found.group(1)
    return None if "://" in remote or re.match(r"[\w.-]+@[\w.-]+:", remote) else ""


def credentials(target: Target, environ: Mapping[str, str]) -> Credentials | None:
    return credentials_for(target.remote, environ.get("GITHUB_TOKEN"))


def read_history(target: Target, creds: Credentials | None, paths: Paths) -> Path:
    """A fresh read-only checkout of the data folder. An earlier torch-bench step of the same
    job (same `output-dir`) left its checkout there: it is replaced, not reused."""
    shutil.rmtree(paths.history, ignore_errors=True)
    return checkout_data(target, creds, paths.history)


@dataclass(frozen=True)
class Outcome:
    verdict: str  # regression, improvement, unchanged, inconclusive or no-baseline
    regressions: int  # regressed and newly failing benchmarks, and the whole run's slowdown
    improvements: int
    report: Path | None
    failing: str = ""  # what fails, as the headline says it ("whole run 10.0% slower")


def compare(inputs: ActionInputs, ctx: RunContext, head: Path, history: Path, paths: Paths,
            config_name: str, budget: PrBudget | None = None) -> Outcome:
    """Compare with the baseline (A/B or the history, then targeted confirmation); on a PR,
    within `budget` (pr_budget.py)."""
    baseline = inputs["baseline"]
    link = ctx.dashboard_url(inputs["site-folder"], data_repository_of(inputs))
    extra = ["--dashboard-link", link] if link else []
    if ctx.is_pr:  # the hand-off for a separate comment workflow, fork or not
        extra += ["--fork-dir", paths.fork_report, "--pr", str(ctx.pr_number)]
    report = ["--markdown", paths.report, "--json", paths.verdicts,
              "--min-effect", inputs["min-effect"],
              "--false-alarm-rate", inputs["false-alarm-rate"],
              "--per-pr-level", inputs["per-pr-level"],
              "--config-name", config_name, *extra]
    branch = ctx.compare_branch() or "main"
    try:
        head_run = load_run(head)
        branch = comparison_branch(ctx, head_run, history)
        side_by_side = ab_stage.wants_ab(inputs, ctx, head_run, history)
        left_out = budget.ab_left_out(inputs["ab"]) if side_by_side and budget else None
        if left_out:
            budget.notes.append(left_out)
            print(f"{left_out}; comparing with the history", file=sys.stderr)
            side_by_side = False
        if side_by_side:
            started = time.monotonic()
            try:
                compare_side_by_side(inputs, ctx, head_run, paths, report)
            except ab_stage.NoMergeBase as exc:
                if inputs["ab"] == "always":
                    raise
                print(f"::warning title=torch-bench::{exc}; comparing with the history",
                      file=sys.stderr)
                side_by_side = False
            finally:
                if budget is not None:
                    budget.record("A/B", started)
        if not side_by_side:
            choice = ["auto", "--latest"] if baseline == "latest" else [baseline]
            if budget is not None:
                inputs = pr_budget.bounded(inputs, budget, "confirmation")
            started = time.monotonic()
            with confirmation_checkout(inputs, ctx, head_run, paths) as confirm:
                cli("compare", *choice, head, "--history", history,
                    "--repo-dir", ctx.workspace, "--base-branch", branch, *report, *confirm)
            if budget is not None and confirm:
                budget.record("confirmation", started)
    except NoBaseline as exc:
        note = no_baseline_note(str(exc), head, history, branch,
                                ctx.not_stored_reason(inputs["push"]))
        report = f"## torch-bench\n\n{note}\n"
        write_text_atomic(paths.report, report)
        workflow.write_job_summary(report)
        if ctx.is_pr:
            workflow.write_fork_handoff(paths.fork_report, report, ctx.pr_number)
        print(note, file=sys.stderr)
        return Outcome("no-baseline", 0, 0, paths.report)
    said = json.loads(paths.verdicts.read_text())["overall"]  # what the headline says
    return Outcome(said["verdict"], said["regressions"], said["improvements"], paths.report,
                   said["failing"])


@contextmanager
def confirmation_checkout(inputs: ActionInputs, ctx: RunContext, head: Run,
                          paths: Paths) -> Iterator[list[str]]:
    """On a PR that measured its head here, with a `confirm-budget`: the merge-base checked
    out beside the workspace, and the `compare` arguments of targeted confirmation (only the
    flagged and undecided benchmarks are re-measured, A/B). Nothing otherwise, or with a
    warning when the merge-base is not in the clone."""
    if not (ctx.is_pr and inputs["confirm-budget"] > 0 and not inputs["results-file"]):
        yield []
        return
    branch = ctx.compare_branch() or "main"
    try:
        commit = ab_stage.merge_base(ctx.workspace, head, branch)
    except ab_stage.NoMergeBase as exc:
        print(f"::warning title=torch-bench::{exc}; no targeted confirmation",
              file=sys.stderr)
        yield []
        return
    with ab_stage.base_worktree(ctx.workspace, commit, paths.root / "confirm-base") as base:
        yield ["--confirm-base", str(base), "--confirm-head", ctx.workspace,
               "--confirm-budget", f"{inputs['confirm-budget']:g}",
               "--confirm-run-args", shlex.join(ab_stage.run_arguments(inputs, rounds=1))]


def comparison_branch(ctx: RunContext, head: Run, history: Path) -> str:
    """`ctx.compare_branch()`; for a run of another branch than the default one (a manual or
    scheduled run, a push) with no runs of its own on this environment, the default
    branch's history, as a PR is compared with its base's."""
    branch = ctx.compare_branch() or "main"
    if ctx.is_pr or ctx.queue_target or not ctx.default_branch \
            or branch == ctx.default_branch \
            or ab_stage.history_runs(history, head, branch) > 0:
        return branch
    print(f"no runs of {branch!r} on this environment yet: comparing with the default "
          f"branch, {ctx.default_branch!r}", file=sys.stderr)
    return ctx.default_branch


def no_baseline_note(reason: str, head: Path, history: Path, branch: str,
                     not_stored: str | None = None) -> str:
    """Why there is nothing to compare with: a first run, or runs of the branch and
    environment that failed their pre-flight check (named, with what to change). A run
    that is not stored (`not_stored`: why) does not start the history."""
    left_out = None
    if head.is_file() and history.is_dir():
        fingerprint = load_run(head).fingerprint
        runs = index_history(history, RunFilter(fingerprint=fingerprint)).runs
        left_out = left_out_note(untrusted_of(runs, fingerprint, branch))
    if left_out:
        return (f"No baseline yet: {left_out}. Branch {branch!r} has runs with this run's "
                "environment, but their pre-flight check failed, and an untrusted run is "
                "never a baseline.")
    if not_stored:
        return ("No baseline yet: nothing in the history matches this run's branch "
                f"({branch!r}) and environment. This run is not stored, so it does not start "
                f"the history either: {not_stored}. ({reason})")
    return ("No baseline yet: nothing in the history matches this run's branch and "
            f"environment, so this run starts the history. ({reason})")


def compare_side_by_side(inputs: ActionInputs, ctx: RunContext, head: Run, paths: Paths,
                         report: list) -> None:
    """Measure the merge-base and the head interleaved (`torch-bench ab`) and report."""
    branch = ctx.compare_branch() or "main"
    commit = ab_stage.merge_base(ctx.workspace, head, branch)
    print(f"A/B: measuring {commit[:10]} ({branch}) and the head interleaved over "
          f"{ab_stage.ROUNDS} rounds", file=sys.stderr)
    shutil.rmtree(paths.root / "ab-rounds", ignore_errors=True)  # an earlier step's rounds
    # the folder's name is how the report names the base: "3 run(s) from merge-base-<sha>"
    with ab_stage.base_worktree(ctx.workspace, commit,
                                paths.root / f"merge-base-{commit[:10]}") as base:
        cli("ab", "--base", base, "--head", ctx.workspace, "--rounds", ab_stage.ROUNDS,
            "--out-dir", paths.root / "ab-rounds", *report, "--",
            *ab_stage.run_arguments(inputs))


def explain(inputs: ActionInputs, ctx: RunContext, results: Path, paths: Paths,
            outcome: Outcome, history: Path | None = None,
            budget: PrBudget | None = None) -> list[dict]:
    """The operator diff of the regressions and improvements (input `explain`): on a PR in
    its comment, within what `budget` has left; on a push against the previous measured
    commit, as a run note to store."""
    from torch_bench.action import explain_stage
    from torch_bench.action.measuring import child_cli

    # explain plans the cases with the checkout on sys.path: never in this process
    cli = child_cli(ctx.workspace, inputs["suite-path"])
    if budget is not None and ctx.is_pr:
        inputs = pr_budget.bounded(inputs, budget, "explain")
    if outcome.report and explain_stage.wants_explain(inputs, ctx, outcome.regressions,
                                                      outcome.improvements):
        started = time.monotonic()
        explain_stage.explain_regressions(inputs, ctx, results, paths.verdicts, outcome.report,
                                          paths.root, cli, paths.fork_report)
        if budget is not None:
            budget.record("explain", started)
    if history is not None and explain_stage.wants_push_explain(
            inputs, ctx, outcome.regressions, outcome.improvements):
        note = explain_stage.explain_push(inputs, ctx, results, paths.verdicts, history,
                                          paths.root, cli)
        return [note] if note else []
    return []


def store(head: Path, target: Target, creds: Credentials | None,
          notes: Sequence[dict] = ()) -> None:
    """Store the run, with its run notes (results/run_notes.py) in the same commit."""
    from torch_bench.cli.store import load_sources

    runs = load_sources([str(head)])
    by_id = {run.run_id: run for run in runs}
    report = store_runs(runs, target, creds, log=lambda line: print(line, file=sys.stderr),
                        notes=[(by_id[note["run_id"]], note) for note in notes
                               if note["run_id"] in by_id])
    print(f"stored {len(report.added)} run(s) on {target.branch}", file=sys.stderr)


def store_notes(head: Path, target: Target, creds: Credentials | None,
                note: dict | None) -> None:
    """Add a note of the stored run `head` to the data branch (nothing without one)."""
    if note is None:
        return
    report = store_runs((), target, creds, log=lambda line: print(line, file=sys.stderr),
                        notes=[(load_run(head), note)])
    print(f"stored the {note['kind']} note of {len(report.added)} run(s) on {target.branch}",
          file=sys.stderr)


def retain(target: Target, creds: Credentials | None, keep: int) -> None:
    """History retention: keep the newest `keep` runs of every benchmark on the branch."""
    report = edit_data(target, creds,
                       lambda data: cli("data", "prune", "--data", data, "--keep", keep),
                       f"torch-bench: keep the newest {keep} runs per benchmark",
                       log=lambda line: print(line, file=sys.stderr))
    print("history pruned" if report.commit else "history within retention", file=sys.stderr)


def compaction_month(today: date, months: int) -> str:
    """"YYYY-MM" of the month `months` months before `today`'s: the months before it are
    folded into archives."""
    index = today.year * 12 + today.month - 1 - months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def compact(target: Target, creds: Credentials | None, months: int,
            today: date | None = None) -> None:
    """History retention: fold the run files of months older than `months` months into one
    compressed archive per month (`data compact`, per-iteration samples kept)."""
    before = compaction_month(today or datetime.now(timezone.utc).date(), months)
    report = edit_data(target, creds,
                       lambda data: cli("data", "compact", "--data", data, "--before", before,
                                        "--keep-samples"),
                       f"torch-bench: compact run files of months before {before}",
                       log=lambda line: print(line, file=sys.stderr))
    print("history compacted" if report.commit else "nothing to compact", file=sys.stderr)


SITE_CACHE = "torch-bench-site-cache"  # under RUNNER_TEMP; the actions restore it by name


def site_cache(environ: Mapping[str, str]) -> Path | None:
    """The dashboard's build cache, kept between jobs by the action's cache step."""
    temp = environ.get("RUNNER_TEMP")
    return Path(temp) / SITE_CACHE if temp else None


def publish(target: Target, creds: Credentials | None, paths: Paths,
            site_folder: str = ".", cache: Path | None = None, site_branch: str = "") -> None:
    """Rebuild the dashboard: in `site_folder` of the data branch, or with `site_branch`, as
    the one commit of that branch (store/site_branch.py)."""
    from torch_bench.cli.site import built_site, previous_site_files  # the renderer: lazily
    from torch_bench.render.history_cache import cached_keys

    def build(data: Path, previous: PreviousSite | None) -> BuiltSite:
        files = previous_site_files(previous, paths.root)
        cli("site", "--data", data, "--out", paths.site,
            *(("--cache", cache) if cache is not None else ()),
            *(("--previous-site", files[0], "--carried-out", files[1]) if files else ()))
        (paths.site / ".nojekyll").write_text("")  # serve every file as it is
        # Of the build cache, only the render keys are published (publish.py): each job
        # builds into a fresh folder, and the rows and memo stay in the Action's cache.
        return built_site(paths.site, files)

    # the data files whose rows the cache holds are left out of the checkout (a download of
    # most of the data branch at scale): the build reads them from the cache
    leave_out = cached_keys(cache) if cache is not None else None
    report = publish_dashboard(target, creds, build, site_branch=site_branch,
                               site_folder=site_folder, leave_out=leave_out,
                               log=lambda line: print(line, file=sys.stderr))
    print("dashboard " + ("published" if report.commit else "already up to date")
          + (f" on {site_branch}" if site_branch else ""), file=sys.stderr)


def comment(inputs: ActionInputs, ctx: RunContext, outcome: Outcome, config_name: str,
            environ: Mapping[str, str]) -> str | None:
    """Post or update the PR comment when asked; a failure is a warning. The comment URL.

    `on-regression` creates a comment only for a regression, but once one exists it keeps it
    current, so a fixed regression does not leave a stale comment behind."""
    if inputs["comment"] != "never" and ctx.is_pr and ctx.from_fork and outcome.report:
        say_fork_comment_skipped(inputs["comment"], environ)
    if inputs["comment"] == "never" or not (
            ctx.is_pr and not ctx.from_fork and outcome.report and ctx.repository):
        return None
    create = inputs["comment"] == "always" or outcome.verdict == "regression"
    try:
        client = client_from_env(environ)
        action, posted = upsert_comment(client, ctx.repository, ctx.pr_number,
                                        outcome.report.read_text(), config_name,
                                        full_report=workflow.full_report_link(environ),
                                        create=create)
    except GitHubError as exc:
        workflow.report_comment_failure(str(exc), environ)
        return None
    if posted is None:
        return None
    print(f"{action} the PR comment", file=sys.stderr)
    return posted.get("html_url")


FORK_COMMENT_SKIPPED = (
    "no PR comment (comment: {choice}): this PR comes from a fork, and a fork's run has a "
    "read-only token, so nothing is posted or pushed. The report is in the `pr-report` "
    "folder of `output-dir`: upload it as an artifact and post it from a `workflow_run` "
    "workflow (examples/fork-safe-pr.yml and examples/post-pr-comment.yml).")


def say_fork_comment_skipped(choice: str, environ: Mapping[str, str]) -> None:
    """A fork PR asked for a comment: why there is none, in the log and the job summary."""
    message = FORK_COMMENT_SKIPPED.format(choice=choice)
    print(f"::notice title=torch-bench comment::{message}", flush=True)
    workflow.append_summary_note(f"\n**torch-bench**: {message}\n", environ)
