"""The operator-level diff as text: a short collapsed table per case for the PR comment, the
full tables for the job summary, a terminal table, and JSON.

Operator names, shapes, graph-break reasons and error texts come from the code under test:
every one is escaped (`markdown_text`, rich's `escape`) before it reaches Markdown or a
terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.markup import escape
from rich.table import Table

from torch_bench.analyze.explain import Explained, Explanation, Target
from torch_bench.analyze.op_diff import OpChange, OpDiff
from torch_bench.report.escape import markdown_text

SHORT_ROWS = 5  # changes per case in the PR comment
FULL_ROWS = 40  # changes per case in the job summary and the terminal
HEADLINE_PHRASES = 3
MARKER = "<!-- torch-bench explain -->"


def ms_text(us: float, sign: bool = True) -> str:
    return f"{us / 1000:{'+' if sign else ''}.3g} ms"


def calls_text(calls: float) -> str:
    return f"{calls:.3g}"


def change_phrase(change: OpChange, name: str | None = None) -> str:
    """'aten::addmm +0.41 ms (+38%)', 'new aten::sort (+0.2 ms, 2 calls)' ... per step;
    `name` is the operator's name as the caller wants it shown (escaped for Markdown)."""
    name = change.name if name is None else name
    calls = f"{calls_text(change.head_calls)} call(s)"
    if change.kind == "new":
        return f"new {name} ({ms_text(change.delta_us)}, {calls})"
    if change.kind == "vanished":
        return f"{name} gone ({ms_text(change.delta_us)})"
    details = [f"{change.relative:+.0%}"] if change.relative is not None else []
    if change.calls_changed:
        details.append(f"calls {calls_text(change.base_calls)} → "
                       f"{calls_text(change.head_calls)}")
    return f"{name} {ms_text(change.delta_us)}" + (f" ({', '.join(details)})" if details
                                                    else "")


def compilation_phrases(diff: OpDiff) -> list[str]:
    if not diff.compilation_changed:
        return []
    b, h = diff.base_compilation, diff.head_compilation
    phrases = []
    for what, attr in (("graph breaks", "graph_breaks"), ("graphs", "graphs"),
                       ("frames compiled", "frames")):
        before, after = getattr(b, attr, 0) if b else 0, getattr(h, attr, 0) if h else 0
        if before != after:
            phrases.append(f"{what} {before} → {after}")
    return phrases


def kernel_phrase(diff: OpDiff) -> list[str]:
    if round(diff.base_kernels, 3) == round(diff.head_kernels, 3):
        return []
    return [f"kernels per step {calls_text(diff.base_kernels)} → "
            f"{calls_text(diff.head_kernels)}"]


def headline(diff: OpDiff, escape_name=markdown_text) -> str:
    """The few changes that say most, in one line: compilation first (a graph break
    explains the rest), then the largest operator changes, then kernel counts."""
    phrases = compilation_phrases(diff)
    phrases += [change_phrase(c, escape_name(c.name)) for c in diff.notable()[:HEADLINE_PHRASES]]
    phrases += kernel_phrase(diff)
    return ", ".join(phrases) or "no operator changed beyond " + ms_text(diff.floor_us, False)


def _target_title(target: Target) -> str:
    what = f"{target.kind}: " if target.kind else ""
    change = f" ({target.change - 1:+.1%})" if target.change is not None else ""
    return what + markdown_text(target.label) + change


def _row(change: OpChange, shown_name: str) -> str:
    relative = f"{change.relative:+.0%}" if change.relative is not None else change.kind
    return (f"| {shown_name} | {markdown_text(change.device)} | {ms_text(change.base_us, False)}"
            f" | {ms_text(change.head_us, False)} | {ms_text(change.delta_us)} | {relative} | "
            f"{calls_text(change.base_calls)} → {calls_text(change.head_calls)} |")


TABLE_HEAD = ["| operator | on | base / step | head / step | change | relative | calls / step |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- |"]


def change_rows(changes: Iterable[OpChange], limit: int, with_shapes: bool) -> list[str]:
    rows = []
    for change in list(changes)[:limit]:
        rows.append(_row(change, markdown_text(change.name)))
        if with_shapes:
            for part in change.by_shape:
                shown = f"↳ {markdown_text(part.shapes or 'no shapes', 300)}"
                rows.append(_row(part, shown))
    return rows


def _problem_lines(item: Explained) -> list[str]:
    return [f"- {side}: no profile ({markdown_text(reason, 400)})"
            for side, reason in item.errors.items()]


def short_section(item: Explained) -> list[str]:
    """A collapsed block for the PR comment: the headline, then a few rows."""
    if item.diff is None:
        return [f"<details><summary>Operators of {_target_title(item.target)}: not explained"
                "</summary>", "", *_problem_lines(item), "", "</details>"]
    diff = item.diff
    lines = [f"<details><summary>Operators of {_target_title(item.target)}: "
             f"{headline(diff)}</summary>", ""]
    notable = diff.notable()
    if notable:
        lines += TABLE_HEAD + change_rows(notable, SHORT_ROWS, with_shapes=False)
        if len(notable) > SHORT_ROWS:
            lines.append(f"\n{len(notable) - SHORT_ROWS} more change(s) in the job summary.")
    return lines + ["", "</details>"]


def full_section(item: Explained) -> list[str]:
    lines = [f"#### {_target_title(item.target)}", ""]
    if item.diff is None:
        return lines + _problem_lines(item) + [""]
    diff = item.diff
    lines += [f"{headline(diff)}.", "",
              f"Profiled: {markdown_text(diff.window)}, per step; self time of every operator "
              f"{ms_text(diff.base_total_us, False)} → {ms_text(diff.head_total_us, False)}. "
              f"Changes under {ms_text(diff.floor_us, False)} are left out.", ""]
    notable = diff.notable()
    if notable:
        lines += TABLE_HEAD + change_rows(notable, FULL_ROWS, with_shapes=True)
        if len(notable) > FULL_ROWS:
            lines.append(f"\n{len(notable) - FULL_ROWS} smaller change(s) left out.")
        lines.append("")
    lines += _break_lines(diff)
    if item.traces:
        lines.append("Traces (Chrome trace JSON, open in https://ui.perfetto.dev): "
                     + ", ".join(f"{side} `{markdown_text(path.rsplit('/', 1)[-1])}`"
                                 for side, path in item.traces.items()))
        lines.append("")
    return lines


def _break_lines(diff: OpDiff) -> list[str]:
    lines = []
    for side, comp in (("base", diff.base_compilation), ("head", diff.head_compilation)):
        if comp and comp.break_reasons and diff.compilation_changed:
            reasons = "; ".join(f"{markdown_text(reason, 160)} ×{count}"
                                for reason, count in comp.break_reasons[:5])
            lines.append(f"- graph breaks on the {side}: {reasons}")
    return lines + ([""] if lines else [])


def skipped_lines(explanation: Explanation) -> list[str]:
    if not explanation.skipped:
        return []
    names = ", ".join(markdown_text(t.label) for t in explanation.skipped[:20])
    more = f" and {len(explanation.skipped) - 20} more" if len(explanation.skipped) > 20 else ""
    return [f"Not profiled, the explain budget ({explanation.budget_s:g} s) being spent: "
            f"{names}{more}.", ""]


def markdown_short(explanation: Explanation) -> str:
    """The PR comment's part: one collapsed block per explained case."""
    if not explanation.explained and not explanation.skipped:
        return ""
    lines = [MARKER, "**Why** (operator-level diff, base → head):", ""]
    for item in explanation.explained:
        lines += short_section(item) + [""]
    return "\n".join(lines + skipped_lines(explanation)).rstrip() + "\n"


def markdown_full(explanation: Explanation) -> str:
    """The job summary's part: every explained case in full."""
    lines = ["### Operator-level diff (base → head)", ""]
    if not explanation.explained and not explanation.skipped:
        return "\n".join(lines + ["No regression or improvement to explain.", ""])
    for item in explanation.explained:
        lines += full_section(item)
    lines += skipped_lines(explanation)
    lines.append(f"Profiling took {explanation.seconds:.0f} s of a "
                 f"{explanation.budget_s:g} s budget.")
    return "\n".join(lines) + "\n"


def terminal_tables(explanation: Explanation) -> list[Any]:
    """Rich renderables: a table per explained case, a line per problem."""
    shown: list[Any] = []
    for item in explanation.explained:
        title = escape(item.target.label)
        if item.diff is None:
            shown += [f"[red]{title}: not explained[/]"] + [
                f"  {side}: {escape(reason)}" for side, reason in item.errors.items()]
            continue
        table = Table(title=f"{title}\n{escape(headline(item.diff, str))}",
                      title_justify="left")
        for column, justify in (("operator", "left"), ("on", "left"), ("base/step", "right"),
                                ("head/step", "right"), ("change", "right"),
                                ("relative", "right"), ("calls/step", "left")):
            table.add_column(column, justify=justify, overflow="fold")
        for change in item.diff.notable()[:FULL_ROWS]:
            relative = f"{change.relative:+.0%}" if change.relative is not None else change.kind
            table.add_row(escape(change.name), change.device, ms_text(change.base_us, False),
                          ms_text(change.head_us, False), ms_text(change.delta_us), relative,
                          f"{calls_text(change.base_calls)} → {calls_text(change.head_calls)}")
        shown.append(table)
    if explanation.skipped:
        shown.append(f"not profiled (budget {explanation.budget_s:g} s spent): "
                     + escape(", ".join(t.label for t in explanation.skipped)))
    return shown


def _change_dict(change: OpChange) -> dict[str, Any]:
    return {"name": change.name, "device": change.device, "shapes": change.shapes,
            "kind": change.kind, "base_us": change.base_us, "head_us": change.head_us,
            "delta_us": change.delta_us, "relative": change.relative,
            "base_calls": change.base_calls, "head_calls": change.head_calls,
            "by_shape": [_change_dict(c) for c in change.by_shape]}


def _compilation_dict(comp) -> dict[str, Any] | None:
    return None if comp is None else {
        "graphs": comp.graphs, "graph_breaks": comp.graph_breaks, "frames": comp.frames,
        "break_reasons": [list(pair) for pair in comp.break_reasons]}


def _target_dict(target: Target) -> dict[str, Any]:
    return {"suite": target.case.suite, "name": target.case.name,
            "params": dict(target.case.params), "metric": target.metric,
            "runtime": target.runtime, "verdict": target.kind, "ratio": target.change}


def explanation_dict(explanation: Explanation) -> dict[str, Any]:
    def item_dict(item: Explained) -> dict[str, Any]:
        d = item.diff
        return {**_target_dict(item.target), "errors": dict(item.errors),
                "traces": dict(item.traces),
                "diff": None if d is None else {
                    "window": d.window, "headline": headline(d, str),
                    "base_total_us": d.base_total_us, "head_total_us": d.head_total_us,
                    "base_kernels": d.base_kernels, "head_kernels": d.head_kernels,
                    "floor_us": d.floor_us,
                    "base_compilation": _compilation_dict(d.base_compilation),
                    "head_compilation": _compilation_dict(d.head_compilation),
                    "changes": [_change_dict(c) for c in d.notable()]}}

    return {"explained": [item_dict(i) for i in explanation.explained],
            "skipped": [_target_dict(t) for t in explanation.skipped],
            "budget_seconds": explanation.budget_s, "seconds": round(explanation.seconds, 1)}
