"""The Markdown report of a comparison: what a PR comment, a job summary and
`torch-bench compare` show.

The headline (`analyze/headline.py`), counts per verdict; regressions first (newly failing
next) with their size, confidence and a link to the benchmark's dashboard page; then
improvements and fixes; the compile suite's geometric-mean speedup and pass rate; the
environment difference when fingerprints differ; the rest folded in a details block. Every
untrusted string goes through `markdown_text`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from torch_bench.analyze.headline import overall, shift_text
from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.summaries import compile_changes
from torch_bench.analyze.verdicts import KIND_LABELS, Comparison, Kind, Verdict
from torch_bench.metrics import format_quantity
from torch_bench.report.escape import markdown_text

HEADLINE_LIMIT = 2_000  # characters: several reasons for unjudged changes may be said


@dataclass(frozen=True)
class ReportContext:
    title: str = "torch-bench"
    config: str = "default"  # the configuration this report is about (matrix entry)
    dashboard_link: str | None = None  # URL template; "{id}" becomes the benchmark id


def format_report(comparison: Comparison, context: ReportContext = ReportContext()) -> str:
    return "\n".join(report_lines(comparison, context)).rstrip() + "\n"


def report_lines(comparison: Comparison, context: ReportContext) -> list[str]:
    lines = [f"### {markdown_text(context.title)}: "
             f"{markdown_text(headline(comparison), limit=HEADLINE_LIMIT)}", ""]
    lines += provenance_lines(comparison, context)
    lines += counts_table(comparison)
    if comparison.environment:
        lines += environment_section(comparison)
    regressions = comparison.of_kind(Kind.REGRESSION)
    if regressions:
        lines += [f"#### Regressions ({len(regressions)})", ""]
        lines += change_table(regressions, context)
    failing = comparison.of_kind(Kind.NEWLY_FAILING)
    if failing:
        lines += [f"#### Newly failing ({len(failing)})", ""] + status_table(failing, context)
    improvements = comparison.of_kind(Kind.IMPROVEMENT)
    if improvements:
        lines += [f"#### Improvements ({len(improvements)})", ""]
        lines += change_table(improvements, context)
    fixed = comparison.of_kind(Kind.FIXED)
    if fixed:
        lines += [f"#### Fixed ({len(fixed)})", ""] + status_table(fixed, context)
    lines += compile_section(comparison)
    lines += rest_section(comparison, context)
    lines += [rule_footer(comparison)]
    return lines


def headline(comparison: Comparison) -> str:
    """The headline (`analyze/headline.py`), as plain text: escape it where it is shown."""
    return overall(comparison).headline


def commit_text(sha: object) -> str:
    text = str(sha)[:10]
    return f"`{text}`" if re.fullmatch(r"[0-9a-f]+", text) else markdown_text(text)


def side_label(runs) -> str:
    if not runs:
        return "nothing"
    git = runs[0].git
    text = commit_text(git["sha"]) if git.get("sha") else "a run"
    if git.get("branch"):
        text += f" on {markdown_text(git['branch'])}"
    return text + f" ({len(runs)} run{'s' if len(runs) != 1 else ''})"


def provenance_lines(comparison: Comparison, context: ReportContext) -> list[str]:
    head = comparison.head_runs[0].git if comparison.head_runs else {}
    lines = []
    if head.get("pr_number"):
        title = f": {markdown_text(head['pr_title'])}" if head.get("pr_title") else ""
        lines.append(f"PR &#35;{int(head['pr_number'])}{title}")
        lines.append("")
    lines.append(f"Head {side_label(comparison.head_runs)} against base "
                 f"{side_label(comparison.base_runs)}"
                 + (f": {markdown_text(comparison.baseline_note)}."
                    if comparison.baseline_note else "."))
    lines.append(f"Configuration: {markdown_text(context.config)}.")
    lines += trust_lines(comparison)
    lines += confirmation_lines(comparison)
    lines += shift_lines(comparison)
    return lines + [""]


def confirmation_lines(comparison: Comparison) -> list[str]:
    """What targeted confirmation measured, when it ran."""
    done = comparison.extra.get("confirmation")
    return ["", f"Targeted confirmation: {done.describe()}."] if done else []


def shift_lines(comparison: Comparison) -> list[str]:
    """The whole run's shift, once: flagged when beyond the history's run-level shifts."""
    shift = comparison.run_shift
    if shift is None:
        return []
    said = (f"the whole run is {shift_text(shift.ratio)} than its baseline (median over "
            f"{shift.benchmarks} timings)")
    if shift.outcome is Outcome.SAME:
        return ["", f"Run-level shift: {said}, within the minimum effect."]
    if shift.outcome is Outcome.UNSURE:
        return ["", f"Run-level shift: {said}; {shift.reason}, so it is not flagged. Each "
                    "timing is judged relative to it."]
    kind = "regression" if shift.outcome is Outcome.WORSE else "improvement"
    if shift.found_in_rounds:
        return ["", f"**Run-level {kind}: {said}**, {shift.reason}. Each timing was judged "
                    "relative to the head run's own shift."]
    confirmed = f"; {shift.reason}" if shift.reason else ""
    return ["", f"**Run-level {kind}: {said}**, beyond the run-level shifts seen in "
                f"{shift.history_runs} runs (t {shift.z:.1f}){confirmed}. Each timing is "
                "judged relative to it."]

def trust_lines(comparison: Comparison) -> list[str]:
    """What the pre-flight checks changed: sides not alerted on, untrusted runs left out."""
    lines = []
    for side in comparison.untrusted_sides:
        lines += ["", f"**The pre-flight check failed on the {side}**: its measurements are not "
                      "trusted, so nothing is alerted on; changes are reported as inconclusive."]
    if comparison.left_out:
        lines += ["", f"{len(comparison.left_out)} run(s) whose pre-flight check failed were "
                      "left out."]
    return lines


def counts_table(comparison: Comparison) -> list[str]:
    counts = comparison.counts()
    rows = [f"| {KIND_LABELS[kind]} | {count} |" for kind, count in counts.items() if count]
    if not rows:
        return ["No results on either side.", ""]
    return ["| Verdict | Count |", "| --- | ---: |", *rows, ""]


def environment_section(comparison: Comparison) -> list[str]:
    lines = ["#### Environment differs", "",
             "The two sides ran in different environments, so timings are not compared:", "",
             "| Field | Base | Head |", "| --- | --- | --- |"]
    for diff in comparison.environment:
        lines.append(f"| {markdown_text(diff.field)} | {markdown_text(diff.base)} | "
                     f"{markdown_text(diff.head)} |")
    return lines + [""]


def benchmark_cell(verdict: Verdict, context: ReportContext) -> str:
    params = ", ".join(f"{k}={v}" for k, v in verdict.params.items())
    text = markdown_text(f"{verdict.suite}/{verdict.name}")
    if params:
        text += f" ({markdown_text(params)})"
    if context.dashboard_link:
        url = context.dashboard_link.replace("{id}", quote(verdict.benchmark_id, safe=""))
        text = f"[{text}](<{url.replace('>', '%3E').replace(' ', '%20')}>)"
    return text


def value_cell(value: float | None, unit: str) -> str:
    return markdown_text(format_quantity(value, unit))


def change_text(ratio: float) -> str:
    if not math.isfinite(ratio):
        return "n/a"
    return f"{(ratio - 1) * 100:+.1f}%"


def confidence_cell(verdict: Verdict) -> str:
    a = verdict.assessment
    if a is None:
        return ""
    parts = ["low" if a.low_confidence else "high"]
    if a.low_confidence:
        parts.append(f"{a.history_runs} runs of history")
    if a.z is not None and math.isfinite(a.z):
        parts.append(f"t {a.z:.1f}")
    if a.p_value is not None:
        parts.append(f"p {a.p_value:.1e}")
    if a.side_by_side:
        parts.append("A/B")
    if verdict.confirmed is True:
        parts.append("confirmed by A/B rounds" if a.side_by_side else "confirmed by re-run")
    return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


def change_table(verdicts: Iterable[Verdict], context: ReportContext) -> list[str]:
    ordered = sorted(verdicts, key=lambda v: -abs(math.log(v.assessment.ratio))
                     if v.assessment and 0 < v.assessment.ratio < math.inf else 0)
    lines = ["| Benchmark | Metric | Base | Head | Change | Confidence |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for v in ordered:
        a = v.assessment
        lines.append(
            f"| {benchmark_cell(v, context)} | {markdown_text(v.metric)} "
            f"({markdown_text(v.direction)} is better) "
            f"| {value_cell(a.base_median if a else None, v.unit)} "
            f"| {value_cell(a.head_median if a else None, v.unit)} "
            f"| {change_text(a.ratio) if a else ''} | {confidence_cell(v)} |")
    return lines + [""]


def status_table(verdicts: Iterable[Verdict], context: ReportContext) -> list[str]:
    lines = ["| Benchmark | Metric | Base | Head | Error |", "| --- | --- | --- | --- | --- |"]
    for v in verdicts:
        lines.append(f"| {benchmark_cell(v, context)} | {markdown_text(v.metric)} "
                     f"| {markdown_text(v.base_status or '')} "
                     f"| {markdown_text(v.head_status or '')} "
                     f"| {markdown_text(v.note or '', limit=120)} |")
    return lines + [""]


def compile_section(comparison: Comparison) -> list[str]:
    changes = compile_changes(comparison.base_runs, comparison.head_runs)
    if not changes:
        return []
    lines = ["#### Compile suite", "", "| Summary | Configuration | Base | Head | Change |",
             "| --- | --- | ---: | ---: | ---: |"]
    for c in changes:
        if c.metric == "pass_rate":
            shown = (f"{c.base:.1%}", f"{c.head:.1%}", f"{(c.head - c.base) * 100:+.1f} points")
            label = "pass rate"
        else:
            shown = (f"{c.base:.3f}x", f"{c.head:.3f}x", change_text(c.ratio))
            label = "geometric-mean speedup"
        lines.append(f"| {label} | {markdown_text(c.params) or 'all'} | "
                     + " | ".join(shown) + " |")
    return lines + [""]


REST_KINDS = (Kind.INCONCLUSIVE, Kind.NOT_COMPARABLE, Kind.NEW, Kind.REMOVED, Kind.UNCHANGED)


def rest_section(comparison: Comparison, context: ReportContext) -> list[str]:
    rest = [v for kind in REST_KINDS for v in comparison.of_kind(kind)]
    if not rest:
        return []
    lines = ["<details>", f"<summary>Other results ({len(rest)})</summary>", "",
             "| Benchmark | Metric | Verdict | Base | Head | Change | Note |",
             "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for v in rest:
        a = v.assessment
        base = value_cell(a.base_median, v.unit) if a else markdown_text(v.base_status or "")
        head = value_cell(a.head_median, v.unit) if a else markdown_text(v.head_status or "")
        note = v.note or resolution_text(v) or ("low confidence" if v.low_confidence else "")
        lines.append(f"| {benchmark_cell(v, context)} | {markdown_text(v.metric)} "
                     f"| {KIND_LABELS[v.kind]} | {base} | {head} "
                     f"| {change_text(a.ratio) if a else ''} | {markdown_text(note)} |")
    return lines + ["", "</details>", ""]


def resolution_text(verdict: Verdict) -> str:
    """"no change beyond ±4.1%" for an unchanged benchmark: the smallest change the rule
    would have called."""
    a = verdict.assessment
    if verdict.kind is not Kind.UNCHANGED or a is None or a.detectable is None:
        return ""
    return f"no change beyond ±{a.detectable * 100:.1f}%"


def whole_run_share(comparison: Comparison) -> str:
    """What the whole run's test took of the per-PR level, when it was tested beside the
    benchmarks ("" when it was not)."""
    if comparison.run_shift is None:
        return ""
    return f"; the whole run's test takes {comparison.policy.whole_run_level * 100:g}% of it"


def rule_footer(comparison: Comparison) -> str:
    policy = comparison.policy
    return (f"<sub>Regression: a moderated t test (each benchmark's run-to-run variance "
            f"pooled with the suite's) of the head against the baseline level of the base "
            f"branch's runs since their last change point (or of A/B rounds), relative to the "
            f"run-level shift; at most a {policy.alpha:.0%} false-alarm rate per benchmark, "
            f"{policy.fdr:.0%} per report (Benjamini-Hochberg{whole_run_share(comparison)}), "
            f"and at least the minimum effect "
            f"({policy.min_effect:.0%}). Unchanged benchmarks say the smallest change that "
            f"would have been seen.</sub>")
