"""What the run notes (results/run_notes.py) add to a benchmark page: at each change point,
the operator diff of the run where the change begins and the first bad commit a bisection
found for it. Pure: the notes are read by the caller. Every text here comes from the code
under test or from git (operator names, commit subjects, authors): the template escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch_bench.render.markers import ChangeMark
from torch_bench.render.model import RunInfo, Series

Notes = Mapping[str, Mapping[str, Mapping[str, Any]]]  # run id -> kind -> note


def ms(us: float, sign: bool = False) -> str:
    return f"{us / 1000:{'+' if sign else ''}.3g} ms"


def case_of(series: Series, note: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The note's case that is this series' case: same suite and name, and every parameter
    the case names equal to the series' (the series may carry more, e.g. its runtime)."""
    for case in note.get("cases", ()):
        if case["suite"] == series.suite and case["name"] == series.name and all(
                k in series.params and str(series.params[k]) == str(v)
                for k, v in case["params"].items()):
            return case
    return None


def op_diff_view(case: Mapping[str, Any]) -> dict[str, Any]:
    rows = [{"name": r["name"], "device": r.get("device", ""), "kind": r["kind"],
             "base": ms(r["base_us"]), "head": ms(r["head_us"]),
             "change": ms(r["head_us"] - r["base_us"], sign=True),
             "calls": f"{r.get('base_calls', 0):.3g} → {r.get('head_calls', 0):.3g}"}
            for r in case["rows"]]
    breaks = case.get("graph_breaks") or [0, 0]
    return {"headline": case.get("headline", ""), "error": case.get("error"), "rows": rows,
            "more": case.get("more", 0),
            "total": f"{ms(case.get('base_total_us', 0))} → {ms(case.get('head_total_us', 0))}",
            "breaks": f"{breaks[0]} → {breaks[1]}" if breaks[0] != breaks[1] else None}


def commit_url(run: RunInfo, sha: str) -> str | None:
    """The link of another commit of the run's repository, from the run's own commit link."""
    if not run.url or "/commit/" not in run.url:
        return None
    return run.url.rsplit("/commit/", 1)[0] + "/commit/" + sha


def bisect_view(series: Series, run: RunInfo, note: Mapping[str, Any]) -> dict | None:
    found = note["bisect"]
    named = found.get("benchmarks") or []
    if named and f"{series.suite}/{series.name}" not in named:
        return None
    first = found["first_bad"]
    return {"sha": first["sha"], "short": first["sha"][:7], "subject": first.get("subject", ""),
            "author": first.get("author", ""), "url": commit_url(run, first["sha"])}


def marker_notes(series: Series, marks: Sequence[ChangeMark],
                 notes: Notes) -> list[dict[str, Any]]:
    """Per change point (in the order of `marks`): {"op_diff", "bisect"}, each None when the
    run where the change begins has no such note for this benchmark."""
    shown = []
    for mark in marks:
        run = series.points[mark.index].run
        of_run = notes.get(run.run_id, {})
        case = case_of(series, of_run["op-diff"]) if "op-diff" in of_run else None
        shown.append({"op_diff": op_diff_view(case) if case else None,
                      "bisect": bisect_view(series, run, of_run["bisect"])
                      if "bisect" in of_run else None})
    return shown


def marker_label(noted: Mapping[str, Any]) -> str | None:
    """What a chart's change-point marker adds when its run has notes (our own words and a
    hexadecimal commit name only), e.g. "first bad commit 1a2b3c4, operator diff below"."""
    parts = ([f"first bad commit {noted['bisect']['short']}"] if noted.get("bisect") else []) \
        + (["operator diff"] if noted.get("op_diff") else [])
    return ", ".join(parts) + " below" if parts else None


def marker_labels(series: Series, marks: Sequence[ChangeMark],
                  notes: Notes) -> dict[int, str]:
    """Point index of a change point -> its marker's addition, for the noted ones."""
    labels = {}
    for mark, noted in zip(marks, marker_notes(series, marks, notes), strict=True):
        label = marker_label(noted)
        if label:
            labels[mark.index] = label
    return labels
