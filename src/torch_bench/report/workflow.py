"""GitHub Actions' workflow commands and files, for any step: `::warning`/`::error` lines, step
outputs, the job summary (GitHub drops one over 1 MiB entirely: a longer report is trimmed
like the PR comment, worst rows kept, with room left for the notes written after it, such as
"could not comment"), and the fork-PR hand-off files. Nothing here reads verdicts
(`actions.py` turns a comparison into these), so the comment sub-action imports none of
analyze.

Formatting functions return strings; `write_*` append them to the files GitHub names in
`GITHUB_STEP_SUMMARY` / `GITHUB_OUTPUT` (both may be absent when run locally).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from torch_bench.fileio import write_text_atomic
from torch_bench.redact import scrub
from torch_bench.report.escape import annotation_data, annotation_property, markdown_text
from torch_bench.report.fit import SUMMARY_LIMIT, fit_report, utf8_length

FORK_REPORT = "report.md"
FORK_PR_NUMBER = "pr-number.txt"
NOTES_ROOM = 8_192  # job-summary bytes kept free for notes written after the report


def warning(message: str, title: str = "torch-bench") -> str:
    return f"::warning title={annotation_property(title)}::{annotation_data(message)}"


def error(message: str, title: str = "torch-bench") -> str:
    return f"::error title={annotation_property(title)}::{annotation_data(message)}"


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


def write_fork_handoff(folder: str | os.PathLike, markdown: str, pr_number: int) -> Path:
    """The files a `workflow_run` workflow with a write token downloads and posts: the report
    and the PR number, nothing else (the PR's own run never needs a write token)."""
    target = Path(folder)
    write_text_atomic(target / FORK_REPORT, markdown)
    write_text_atomic(target / FORK_PR_NUMBER, f"{int(pr_number)}\n")
    return target


def write_outputs(values: Mapping[str, str | int | None], environ: Mapping[str, str]) -> None:
    """Step outputs (None: empty) appended to `GITHUB_OUTPUT`, when there is one."""
    path = environ.get("GITHUB_OUTPUT")
    if path:
        shown = {k: "" if v is None else str(v) for k, v in values.items()}
        append_to(path, format_outputs(shown))
