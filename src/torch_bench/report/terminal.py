"""The comparison as a terminal shows it: what `torch-bench compare` prints.

A headline (`analyze/headline.py`: what fails, the changes not judged with why and what to
do, the resolution of the rest), where the two sides come from and what changed the
judgement (targeted confirmation, the run-level shift, failed pre-flight checks); the parameters
every benchmark shares, said once; one table of verdicts, regressions first, coloured by
verdict; the rule in one line. The Markdown report (`markdown.py`) stays what GitHub shows.

Untrusted text (benchmark, parameter and branch names, notes, error messages) is never rich
markup: it goes into `Text` objects through `terminal_text`, which also shows control
characters (ESC and the rest of C0 and C1, bidirectional overrides) as escapes, so a name
can neither style nor move the cursor nor reorder what the terminal shows.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from torch_bench.analyze.headline import overall
from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.summaries import compile_changes
from torch_bench.analyze.verdicts import KIND_LABELS, Comparison, Kind, Verdict
from torch_bench.metrics import format_quantity
from torch_bench.report.markdown import (
    HEADLINE_LIMIT,
    REST_KINDS,
    change_text,
    confidence_cell,
    resolution_text,
    shift_text,
    whole_run_share,
)

KIND_STYLES: Mapping[Kind, str] = {
    Kind.REGRESSION: "bold red",
    Kind.NEWLY_FAILING: "bold red",
    Kind.IMPROVEMENT: "green",
    Kind.FIXED: "green",
    Kind.INCONCLUSIVE: "yellow",
    Kind.NOT_COMPARABLE: "magenta",
    Kind.NEW: "cyan",
    Kind.REMOVED: "cyan",
    Kind.UNCHANGED: "dim",
}
MAX_UNCHANGED_ROWS = 40  # beyond this many, unchanged benchmarks are counted, not listed
_WHITESPACE = re.compile(r"[ \t\n\r\f\v\u2028\u2029]+")
_BIDI_CONTROLS = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}


def _visible(char: str) -> str:
    """A control or bidirectional formatting character as an escape (`\\x1b`, `\\u202e`)."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(value: object, limit: int = 200) -> str:
    """`value` as one line that shows literally on a terminal: runs of whitespace as one
    space, control characters (Unicode category Cc) and bidirectional formatting characters
    as escapes, at most `limit` characters before escaping. Not markup: put it in a `Text`."""
    text = _WHITESPACE.sub(" ", str(value)).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "".join(_visible(c) if unicodedata.category(c) == "Cc"
                   or unicodedata.bidirectional(c) in _BIDI_CONTROLS else c for c in text)



def shared_params(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """Parameters with the same value in every verdict (nothing when there is one verdict
    or none: its parameters are shown on its row)."""
    if len(verdicts) < 2:
        return {}
    common = dict(verdicts[0].params)
    for verdict in verdicts[1:]:
        common = {k: v for k, v in common.items()
                  if k in verdict.params and verdict.params[k] == v}
    return common


def params_text(params: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    skipped = set(skip)
    return " ".join(f"{k}={v}" for k, v in params.items() if k not in skipped)


def render_report(comparison: Comparison, title: str = "torch-bench") -> RenderableType:
    """Everything `torch-bench compare` prints, as one rich renderable."""
    parts: list[RenderableType] = [headline_text(comparison, title), *provenance(comparison)]
    verdicts = ordered(comparison.verdicts)
    if comparison.environment:
        parts.append(environment_table(comparison))
    shown, hidden = listed(verdicts)
    common = shared_params(verdicts)
    if common:
        parts.append(Text.assemble(("parameters of every benchmark: ", "bold"),
                                   terminal_text(params_text(common), limit=400)))
    if shown:
        parts.append(verdict_table(shown, common))
    if hidden:
        parts.append(Text(f"{hidden} unchanged benchmark(s) not listed; --markdown and --json "
                          "have every one", style="dim"))
    compiled = compile_table(comparison)
    if compiled is not None:
        parts.append(compiled)
    parts.append(rule_line(comparison))
    return Group(*parts)


VERDICT_STYLES = {"regression": "bold red", "inconclusive": "bold yellow",
                  "improvement": "bold green", "unchanged": "bold"}


def headline_text(comparison: Comparison, title: str) -> Text:
    said = overall(comparison)
    return Text.assemble((terminal_text(title), "bold"), ": ",
                         (terminal_text(said.headline, limit=HEADLINE_LIMIT),
                          VERDICT_STYLES[said.verdict]))


def side_text(runs) -> str:
    if not runs:
        return "nothing"
    git = runs[0].git
    text = terminal_text(str(git["sha"])[:10]) if git.get("sha") else "a run"
    if git.get("branch"):
        text += f" on {terminal_text(git['branch'])}"
    return text + f" ({len(runs)} run{'s' if len(runs) != 1 else ''})"


def provenance(comparison: Comparison) -> list[Text]:
    head = comparison.head_runs[0].git if comparison.head_runs else {}
    lines = []
    if head.get("pr_number"):
        title = f": {terminal_text(head['pr_title'])}" if head.get("pr_title") else ""
        lines.append(Text(f"PR #{int(head['pr_number'])}{title}"))
    note = f": {terminal_text(comparison.baseline_note)}" if comparison.baseline_note else ""
    lines.append(Text(f"head {side_text(comparison.head_runs)} against base "
                      f"{side_text(comparison.base_runs)}{note}"))
    for side in comparison.untrusted_sides:
        lines.append(Text(f"the pre-flight check failed on the {side}: its measurements are "
                          "not trusted, so nothing is alerted on", style="yellow"))
    if comparison.left_out:
        lines.append(Text(f"{len(comparison.left_out)} run(s) whose pre-flight check failed "
                          "were left out", style="yellow"))
    done = comparison.extra.get("confirmation")
    if done:
        lines.append(Text(f"targeted confirmation: {done.describe()}"))
    shift = shift_line(comparison)
    if shift is not None:
        lines.append(shift)
    return lines


def shift_line(comparison: Comparison) -> Text | None:
    shift = comparison.run_shift
    if shift is None or shift.outcome is Outcome.SAME:
        return None
    said = (f"run-level shift: the whole run is {shift_text(shift.ratio)} than its baseline "
            f"(median over {shift.benchmarks} timings)")
    if shift.outcome is Outcome.UNSURE:
        return Text(f"{said}; {terminal_text(shift.reason)}, so it is not flagged")
    worse = shift.outcome is Outcome.WORSE
    if shift.found_in_rounds:
        return Text(f"{said}, {terminal_text(shift.reason)}; each timing was judged relative "
                    "to the head run's own shift", style="bold red" if worse else "green")
    confirmed = f"; {terminal_text(shift.reason)}" if shift.reason else ""
    return Text(f"{said}, beyond the shifts seen in {shift.history_runs} runs (t "
                f"{shift.z:.1f}){confirmed}; each timing is judged relative to it",
                style="bold red" if worse else "green")


def ordered(verdicts: Iterable[Verdict]) -> list[Verdict]:
    """Regressions first (the order of KIND_LABELS), the largest changes first within one."""
    rank = {kind: i for i, kind in enumerate(KIND_LABELS)}

    def size(v: Verdict) -> float:
        a = v.assessment
        return abs(math.log(a.ratio)) if a and 0 < a.ratio < math.inf else 0.0

    return sorted(verdicts, key=lambda v: (rank[v.kind], -size(v)))


def listed(verdicts: Sequence[Verdict]) -> tuple[list[Verdict], int]:
    """The verdicts the table lists, and how many unchanged ones it leaves out."""
    unchanged = [v for v in verdicts if v.kind is Kind.UNCHANGED]
    if len(unchanged) <= MAX_UNCHANGED_ROWS:
        return list(verdicts), 0
    return [v for v in verdicts if v.kind is not Kind.UNCHANGED], len(unchanged)


def verdict_table(verdicts: Sequence[Verdict], common: Mapping[str, Any]) -> Table:
    own = [params_text(v.params, common) for v in verdicts]
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("benchmark", overflow="fold")
    if any(own):
        table.add_column("params", overflow="fold")
    for name, justify in (("metric", "left"), ("verdict", "left"), ("base", "right"),
                          ("head", "right"), ("change", "right"), ("evidence", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for verdict, params in zip(verdicts, own, strict=True):
        cells = [Text(terminal_text(f"{verdict.suite}/{verdict.name}"))]
        if any(own):
            cells.append(Text(terminal_text(params)))
        table.add_row(*cells, *row_cells(verdict))
    return table


def row_cells(v: Verdict) -> list[Text]:
    a = v.assessment
    style = KIND_STYLES[v.kind]
    if a is not None:
        base, head = format_quantity(a.base_median, v.unit), format_quantity(a.head_median,
                                                                             v.unit)
    else:
        base, head = v.base_status or "", v.head_status or ""
    return [Text(terminal_text(v.metric)), Text(KIND_LABELS[v.kind], style=style),
            Text(terminal_text(base)), Text(terminal_text(head)),
            Text(change_text(a.ratio) if a else "", style=style if v.kind in (
                Kind.REGRESSION, Kind.IMPROVEMENT) else ""),
            Text(terminal_text(evidence(v), limit=300))]


def evidence(v: Verdict) -> str:
    """What the verdict rests on: the test's figures for a change, the resolution for an
    unchanged benchmark, the note (an error, a reason) otherwise."""
    if v.kind in (Kind.REGRESSION, Kind.IMPROVEMENT):
        said = confidence_cell(v)
        return f"{said}; {v.note}" if v.note else said
    if v.kind in REST_KINDS:
        return v.note or resolution_text(v) or ("low confidence" if v.low_confidence else "")
    return v.note or ""


def environment_table(comparison: Comparison) -> Table:
    table = Table(title="environment differs: timings are not compared", title_justify="left",
                  show_edge=False, pad_edge=False, header_style="bold")
    for name in ("field", "base", "head"):
        table.add_column(name, overflow="fold")
    for diff in comparison.environment:
        table.add_row(*(Text(terminal_text(x)) for x in (diff.field, diff.base, diff.head)))
    return table


def compile_table(comparison: Comparison) -> Table | None:
    changes = compile_changes(comparison.base_runs, comparison.head_runs)
    if not changes:
        return None
    table = Table(title="compile suite", title_justify="left", show_edge=False,
                  pad_edge=False, header_style="bold")
    for name, justify in (("summary", "left"), ("configuration", "left"), ("base", "right"),
                          ("head", "right"), ("change", "right")):
        table.add_column(name, justify=justify, overflow="fold")
    for c in changes:
        if c.metric == "pass_rate":
            shown = ("pass rate", f"{c.base:.1%}", f"{c.head:.1%}",
                     f"{(c.head - c.base) * 100:+.1f} points")
        else:
            shown = ("geometric-mean speedup", f"{c.base:.3f}x", f"{c.head:.3f}x",
                     change_text(c.ratio))
        table.add_row(shown[0], Text(terminal_text(c.params) or "all"), *shown[1:])
    return table


def rule_line(comparison: Comparison) -> Text:
    policy = comparison.policy
    return Text(f"rule: moderated t test against the base branch's level since its last change "
                f"point; {policy.alpha:.0%} false alarms per benchmark, {policy.fdr:.0%} per "
                f"report (Benjamini-Hochberg{whole_run_share(comparison)}), minimum effect "
                f"{policy.min_effect:.0%}",
                style="dim")
