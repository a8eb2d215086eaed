"""Run notes: small findings attached to a stored run after it was measured, kept beside
the run on the data branch (store/notes.py) and shown on the dashboard at the change point
the run begins.

Two kinds, one file each, so the writers of each never touch the same path:

    op-diff  the operator diff of the run's regressed or improved cases against the previous
             measured commit (`torch-bench explain`): per case a headline and the largest
             MAX_ROWS operator changes, never the traces
    bisect   the first bad commit `torch-bench bisect` found for the run's regression

Both are built from the JSON the commands already write (`explain --json`, `bisect --json`)
and bounded in size, so a note stays a few kilobytes whatever the profile held. Validated
against `schemas/run-note-v1.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from torch_bench.errors import UserError

NOTE_SCHEMA = {"name": "torch-bench/run-note", "version": 1}
KINDS = ("op-diff", "bisect")
MAX_CASES = 20
MAX_ROWS = 10  # operator changes kept per case
MAX_TEXT = 400


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("torch_bench").joinpath("schemas/run-note-v1.json").read_text()
    return Draft202012Validator(json.loads(text))


def note_problems(note: Any) -> list[str]:
    """What is wrong with a note, as `<field path>: <message>` lines (none: valid)."""
    errors = sorted(_validator().iter_errors(note), key=lambda e: list(map(str, e.path)))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(note)'}: {e.message[:200]}"
            for e in errors]


def check_note(note: Any, source: str) -> dict[str, Any]:
    problems = note_problems(note)
    if problems:
        raise UserError(f"{source}: not a run note: {problems[0]}")
    return note


def _text(value: Any) -> str:
    return str(value if value is not None else "")[:MAX_TEXT]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _row(change: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": _text(change.get("name")), "device": _text(change.get("device")),
            "kind": change.get("kind", "same"),
            **{k: _number(change.get(k)) for k in ("base_us", "head_us", "base_calls",
                                                     "head_calls")}}


def _breaks(diff: Mapping[str, Any]) -> list[int]:
    return [int((diff.get(f"{side}_compilation") or {}).get("graph_breaks") or 0)
            for side in ("base", "head")]


def _case(item: Mapping[str, Any]) -> dict[str, Any]:
    case = {"suite": _text(item.get("suite")), "name": _text(item.get("name")),
            "params": dict(list((item.get("params") or {}).items())[:40]),
            "metric": item.get("metric"), "verdict": item.get("verdict"),
            "ratio": item.get("ratio") if isinstance(item.get("ratio"), (int, float)) else None}
    diff = item.get("diff")
    if diff is None:
        errors = item.get("errors") or {}
        return {**case, "rows": [], "error": _text("; ".join(f"{side}: {why}" for side, why
                                                            in errors.items()) or "no profile")}
    changes = diff.get("changes") or []
    return {**case, "headline": _text(diff.get("headline")),
            **{k: _number(diff.get(k)) for k in ("base_total_us", "head_total_us",
                                                 "base_kernels", "head_kernels")},
            "graph_breaks": _breaks(diff),
            "rows": [_row(c) for c in changes[:MAX_ROWS]],
            "more": max(0, len(changes) - MAX_ROWS)}


def op_diff_note(run_id: str, explanation: Mapping[str, Any]) -> dict[str, Any] | None:
    """The note of an `explain --json` document, or None when it explained no case."""
    explained = explanation.get("explained") or []
    if not explained:
        return None
    return {"schema": NOTE_SCHEMA, "run_id": run_id, "kind": "op-diff",
            "cases": [_case(item) for item in explained[:MAX_CASES]]}


def bisect_note(run_id: str, bisection: Mapping[str, Any],
                benchmarks: Sequence[str] = ()) -> dict[str, Any] | None:
    """The note of a `bisect --json` document, or None when it found no first bad commit."""
    found = bisection.get("first_bad_commit")
    if not found or not found.get("sha"):
        return None
    return {"schema": NOTE_SCHEMA, "run_id": run_id, "kind": "bisect",
            "bisect": {"first_bad": {"sha": str(found["sha"]),
                                     "subject": _text(found.get("subject")),
                                     "author": _text(found.get("author"))},
                       "good": _text(bisection.get("good"))[:64],
                       "bad": _text(bisection.get("bad"))[:64],
                       "benchmarks": [_text(b) for b in benchmarks[:50]]}}
