"""GitHub Actions outputs of a comparison: `::warning` annotations for the worst regressions
and the whole run, the `::error` of a failed job, and step outputs with the counts and the
headline, written through `workflow.py`.

GitHub's limits shape them: a step shows at most 10 warning annotations (the worst are
emitted, then one saying how many more are in the job summary, and one slot stays free for
the comment's own failure).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from torch_bench.analyze.headline import overall, shift_text
from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.verdicts import Comparison, Kind, Verdict
from torch_bench.report.workflow import append_to, error, format_outputs, warning

ANNOTATION_LIMIT = 10  # warning annotations GitHub shows per step
RESERVED_FOR_COMMENT = 1  # kept free for "could not comment", raised later in the same step


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


def write_step_outputs(comparison: Comparison, environ: Mapping[str, str] = os.environ) -> bool:
    path = environ.get("GITHUB_OUTPUT")
    if not path:
        return False
    append_to(path, format_outputs(step_outputs(comparison)))
    return True


