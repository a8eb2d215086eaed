"""GitHub Actions outputs of a comparison: the job summary, one `::warning` annotation per
regression, step outputs with the counts, and the fork-PR hand-off files.

Formatting functions return strings; `write_*` append them to the files GitHub names in
`GITHUB_STEP_SUMMARY` / `GITHUB_OUTPUT` (both may be absent when run locally).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from torch_bench.analyze.verdicts import Comparison, Kind, Verdict
from torch_bench.fileio import write_text_atomic
from torch_bench.report.escape import annotation_data, annotation_property

FORK_REPORT = "report.md"
FORK_PR_NUMBER = "pr-number.txt"


def warning_annotations(comparison: Comparison) -> list[str]:
    """One workflow command per regression and per newly failing benchmark."""
    lines = []
    for v in comparison.of_kind(Kind.REGRESSION, Kind.NEWLY_FAILING):
        title = f"torch-bench {'regression' if v.kind is Kind.REGRESSION else 'newly failing'}"
        lines.append(f"::warning title={annotation_property(title)}::"
                     f"{annotation_data(annotation_message(v))}")
    return lines


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
    counts = comparison.counts()
    outputs = {kind.value.replace("_", "-"): str(count) for kind, count in counts.items()}
    outputs["total"] = str(len(comparison.verdicts))
    outputs["has-regression"] = "true" if counts[Kind.REGRESSION] or counts[
        Kind.NEWLY_FAILING] else "false"
    return outputs


def format_outputs(outputs: Mapping[str, str]) -> str:
    for key, value in outputs.items():
        if "\n" in key or "\n" in value or "=" in key:
            raise ValueError(f"step output {key!r} must be one line without '='")
    return "".join(f"{key}={value}\n" for key, value in outputs.items())


def append_to(path: str | os.PathLike, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def write_job_summary(markdown: str, environ: Mapping[str, str] = os.environ) -> bool:
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    append_to(path, markdown if markdown.endswith("\n") else markdown + "\n")
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
