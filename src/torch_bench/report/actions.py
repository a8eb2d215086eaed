"""GitHub Actions outputs of a comparison: the job summary, `::warning` annotations for the
worst regressions, step outputs with the counts, and the fork-PR hand-off files.

GitHub's limits shape them: a step shows at most 10 warning annotations (the worst are
emitted, then one saying how many more are in the job summary, and one slot stays free for
the comment's own failure); a step's job summary holds at most 1 MiB, and GitHub drops a
longer one entirely (a longer report is trimmed like the PR comment, worst rows kept, with
room left for the notes written after it, such as "could not comment").

Formatting functions return strings; `write_*` append them to the files GitHub names in
`GITHUB_STEP_SUMMARY` / `GITHUB_OUTPUT` (both may be absent when run locally).
"""

from __future__ import annotations

import math
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from torch_bench.analyze.headline import overall, shift_text
from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.verdicts import Comparison, Kind, Verdict
from torch_bench.fileio import write_text_atomic
from torch_bench.redact import scrub
from torch_bench.report.escape import annotation_data, annotation_property, markdown_text
from torch_bench.report.fit import SUMMARY_LIMIT, fit_report, utf8_length

FORK_REPORT = "report.md"
FORK_PR_NUMBER = "pr-number.txt"
ANNOTATION_LIMIT = 10  # warning annotations GitHub shows per step
RESERVED_FOR_COMMENT = 1  # kept free for "could not comment", raised later in the same step
NOTES_ROOM = 8_192  # job-summary bytes kept free for notes written after the report


def warning_annotations(comparison: Comparison,
                        limit: int = ANNOTATION_LIMIT - RESERVED_FOR_COMMENT) -> list[str]:
    """Workflow commands for a whole-run regression (first: it is the broadest), then the
    worst regressions and newly failing benchmarks, at most `limit` lines in all; the last
    says how many more the job summary lists."""
    lines = whole_run_annotation(comparison)
    limit -= len(lines)
    flagged = worst_first(comparison.of_kind(Kind.REGRESSION, Kind.NEWLY_FAILING))
    shown = flagged if len(flagged) <= limit else flagged[: limit - 1]
    for v in shown:
        title = f"torch-bench {'regression' if v.kind is Kind.REGRESSION else 'newly failing'}"
        lines.append(warning(annotation_message(v), title))
    if len(shown) < len(flagged):
        lines.append(warning(f"{len(flagged) - len(shown)} more regressions or newly failing "
                             "benchmarks in the job summary", "torch-bench"))
    return lines


def whole_run_annotation(comparison: Comparison) -> list[str]:
    """The whole run's regression, which no benchmark's verdict names (each timing is judged
    relative to it): one warning, or none."""
    shift = comparison.run_shift
    if shift is None or shift.outcome is not Outcome.WORSE:
        return []
    why = f"found by {shift.found_in_rounds} A/B rounds with the base" \
        if shift.found_in_rounds else \
        f"beyond the run-level shifts seen in {shift.history_runs} runs"
    return [warning(f"the whole run is {shift_text(shift.ratio)} than its baseline (median "
                    f"over {shift.benchmarks} timings), {why}",
                    "torch-bench whole-run regression")]


def failure_annotation(failing: str) -> str:
    """The `::error` of a job failed by `fail-on-regression`, naming what fails (the
    headline's first part, e.g. "whole run 10.0% slower, 2 regressions"). GitHub counts
    error annotations apart from warnings, so it takes none of their 10 slots."""
    return error(f"failing the job (fail-on-regression): {failing or 'a regression'}; the "
                 "job summary has the report", "torch-bench regression")


def severity(v: Verdict) -> float:
    """How bad a flagged result is: the size of its change; a newly failing one after all
    measured regressions of the same report."""
    a = v.assessment
    if v.kind is Kind.REGRESSION and a and 0 < a.ratio < math.inf:
        return abs(math.log(a.ratio))
    return -1.0


def worst_first(verdicts: list[Verdict]) -> list[Verdict]:
    return sorted(verdicts, key=lambda v: (v.kind is not Kind.REGRESSION, -severity(v)))


def warning(message: str, title: str = "torch-bench") -> str:
    return f"::warning title={annotation_property(title)}::{annotation_data(message)}"


def error(message: str, title: str = "torch-bench") -> str:
    return f"::error title={annotation_property(title)}::{annotation_data(message)}"


def annotation_message(v: Verdict) -> str:
    params = ", ".join(f"{k}={val}" for k, val in v.params.items())
    label = f"{v.suite}/{v.name}" + (f" ({params})" if params else "")
    if v.kind is Kind.NEWLY_FAILING:
        return f"{label} {v.metric}: {v.base_status} -> {v.head_status}"
    a = v.assessment
    change = f"{(a.ratio - 1) * 100:+.1f}%" if a else "?"
    low = " (low confidence)" if v.low_confidence else ""
    return f"{label} {v.metric}: {change}{low}"


def step_outputs(comparison: Comparison) -> dict[str, str]:
    """The counts per verdict, and what the headline says (`analyze/headline.py`): the
    overall verdict, the headline, the changes not judged and whether anything fails, the
    whole run's slowdown included."""
    counts = comparison.counts()
    said = overall(comparison)
    outputs = {kind.value.replace("_", "-"): str(count) for kind, count in counts.items()}
    outputs["total"] = str(len(comparison.verdicts))
    outputs["has-regression"] = "true" if said.regressions else "false"
    outputs["verdict"] = said.verdict
    outputs["not-judged"] = str(said.not_judged)
    outputs["headline"] = said.headline
    return outputs


def format_outputs(outputs: Mapping[str, str]) -> str:
    """GITHUB_OUTPUT lines: `key=value`, or GitHub's delimiter form for a multi-line value."""
    text = []
    for key, value in outputs.items():
        if not key or any(c in key for c in "\r\n=<"):
            raise ValueError(f"step output name {key!r} must be one line without '=' or '<'")
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            text.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            text.append(f"{key}={value}\n")
    return "".join(text)


def append_to(path: str | os.PathLike, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(scrub(text))


def run_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """The workflow run's page, where its job summaries are shown."""
    repo, run = environ.get("GITHUB_REPOSITORY"), environ.get("GITHUB_RUN_ID")
    if not (repo and run and run.isdigit()):
        return None
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "")
    return f"{server}/{repo}/actions/runs/{run}" + (
        f"/attempts/{attempt}" if attempt.isdigit() else "")


def full_report_link(environ: Mapping[str, str] = os.environ) -> str | None:
    """Where a trimmed PR comment points: the job summary on the run's page."""
    url = run_url(environ)
    return f"[the job summary of this workflow run](<{url}>)" if url else None


def summary_file(environ: Mapping[str, str]) -> tuple[str, int] | None:
    """The step's summary file and how many bytes it holds already (None: no summary)."""
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        return path, os.path.getsize(path)
    except OSError:
        return path, 0


def write_job_summary(markdown: str, environ: Mapping[str, str] = os.environ,
                      full_report: str | None = None) -> bool:
    """Append to the step's summary, trimmed to what is left of GitHub's 1 MiB."""
    summary = summary_file(environ)
    if summary is None:
        return False
    path, used = summary
    text = markdown if markdown.endswith("\n") else markdown + "\n"
    room = SUMMARY_LIMIT - NOTES_ROOM - used - 1
    if room <= 0:
        return False
    append_to(path, fit_report(text, room, measure=utf8_length,
                               full_report=full_report or "the report file (output "
                                                          "`report-path`)"))
    return True


def report_comment_failure(reason: str, environ: Mapping[str, str] = os.environ) -> None:
    """A PR comment that could not be posted is visible on the run: one warning annotation
    (its slot is kept free) and a line in the job summary."""
    message = f"could not comment on the PR: {reason}"
    print(warning(message, "torch-bench comment"), flush=True)
    append_summary_note(f"\n**torch-bench could not comment on the PR**: "
                        f"{markdown_text(reason, limit=500)}\n", environ)


def append_summary_note(note: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Append a short note to the step's summary, cut to what is left of the 1 MiB (the
    report leaves `NOTES_ROOM` for such notes): never pushes the summary over the limit."""
    summary = summary_file(environ)
    if summary is None:
        return False
    path, used = summary
    room = SUMMARY_LIMIT - used
    if utf8_length(note) > room:  # "…" and the newline take 4 bytes
        cut = note.encode("utf-8")[:max(0, room - 4)].decode("utf-8", "ignore")
        cut = re.sub(r"&#?[0-9A-Za-z]*$", "", cut)  # no half character reference
        note = cut + "…\n" if cut.strip() else ""
    if not note:
        return False
    append_to(path, note)
    return True


def write_step_outputs(comparison: Comparison, environ: Mapping[str, str] = os.environ) -> bool:
    path = environ.get("GITHUB_OUTPUT")
    if not path:
        return False
    append_to(path, format_outputs(step_outputs(comparison)))
    return True


def write_fork_handoff(folder: str | os.PathLike, markdown: str, pr_number: int) -> Path:
    """The files a `workflow_run` workflow with a write token downloads and posts: the report
    and the PR number, nothing else (the PR's own run never needs a write token)."""
    target = Path(folder)
    write_text_atomic(target / FORK_REPORT, markdown)
    write_text_atomic(target / FORK_PR_NUMBER, f"{int(pr_number)}\n")
    return target
