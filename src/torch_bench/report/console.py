"""The results table printed at the end of a run."""

from __future__ import annotations

from collections.abc import Iterable

from rich.markup import escape
from rich.table import Table

from torch_bench.metrics import format_quantity
from torch_bench.results.schema import Result

HIDDEN_PARAMS = {"device"}


def _common_params(results: list[Result]) -> dict:
    """Parameters every result shares: shown once in the caption, not on every row."""
    if not results:
        return {}
    common = dict(results[0].params)
    for result in results[1:]:
        common = {k: v for k, v in common.items() if result.params.get(k, object()) == v}
    return common


def _params_text(result: Result, common: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in result.params.items()
                    if k not in HIDDEN_PARAMS and k not in common)


def results_table(results: Iterable[Result], title: str = "Results") -> Table:
    results = list(results)
    common = _common_params(results)
    caption = escape(" ".join(f"{k}={v}" for k, v in common.items()))
    table = Table(title=title, title_justify="left", caption=caption or None,
                  caption_justify="left")
    show_params = any(_params_text(r, common) for r in results)
    columns = [("benchmark", "left"), ("params", "left"), ("metric", "left"), ("median", "right"),
               ("IQR/median", "right"), ("n", "right"), ("status", "left")]
    for column, justify in columns:
        if column != "params" or show_params:
            table.add_column(column, justify=justify, overflow="fold")
    for r in results:  # every name and message is the user's text: escaped, never markup
        label = f"{r.suite}/{r.name}" if not r.group else f"{r.group}/{r.name}"
        if r.ok:
            spread = f"{r.summary.relative_iqr:.1%}" if r.summary.median else "-"
            median, count = format_quantity(r.summary.median, r.unit), str(r.summary.n)
            status = escape(r.status)
        else:
            spread, median, count = "-", "N/A", "0"
            colour = "yellow" if r.status == "skipped" else "red"
            status = f"[{colour}]{escape(r.status)}[/]: {escape(r.error or '')}"
        cells = [escape(label), escape(_params_text(r, common)), escape(r.metric), median, spread,
                 count, status]
        table.add_row(*(cells if show_params else cells[:1] + cells[2:]))
    return table
