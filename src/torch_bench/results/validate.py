"""Validation of run documents: the JSON Schema first, then the rules a schema cannot say.

Every problem is reported as `<field path>: <what is wrong>`, e.g. `results[3].unit: ...`.
Valid documents (the common case, thousands of them when a history loads) pass through a
compiled validator (fastjsonschema); only an invalid one is run through jsonschema, whose
messages list every problem with its path.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator

from torch_bench.metrics import METRICS, UNITS
from torch_bench.results.schema import SCHEMA_VERSION, SUCCESS_STATUSES


@cache
def _schema(version: int) -> dict:
    text = resources.files("torch_bench").joinpath(f"schemas/run-v{version}.json").read_text()
    return json.loads(text)


@cache
def _validator(version: int) -> Draft202012Validator:
    return Draft202012Validator(_schema(version))


@cache
def _fast_check(version: int):
    # Without $id, so local $refs resolve inside the document instead of against a URI;
    # `$defs` and the keywords used are within what fastjsonschema's draft 7 supports.
    schema = {k: v for k, v in _schema(version).items() if k not in ("$id", "$schema")}
    return fastjsonschema.compile(schema)


def _schema_problems(doc: dict) -> list[str]:
    try:
        _fast_check(SCHEMA_VERSION)(doc)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    errors = sorted(_validator(SCHEMA_VERSION).iter_errors(doc),
                    key=lambda e: list(map(str, e.path)))
    return [f"{format_path(e.absolute_path)}: {_message(e)}" for e in errors]


def _message(error) -> str:
    """The schema's own description of what was expected where it has one (names), else
    jsonschema's message."""
    for candidate in (error, *(error.context or ())):
        if isinstance(candidate.schema, dict) and "description" in candidate.schema:
            return f"{_shown(candidate.instance)} is not {candidate.schema['description']}"
    return _short(error.message)


def format_path(parts) -> str:
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(document)"


def problems(doc: Any) -> list[str]:
    """All problems found in a current-version document, as `path: message` lines."""
    if not isinstance(doc, dict):
        return [f"(document): expected a JSON object, found {type(doc).__name__}"]
    found = _schema_problems(doc)
    if not found:
        found.extend(_semantic_problems(doc))
    return found


def _shown(value: Any) -> str:
    return _short(repr(value), 40)


def _short(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


SUMMARY_NUMBERS = ("median", "mean", "std", "iqr", "min", "max", "p90")


def is_finite_number(value: Any) -> bool:
    """A JSON number a float can hold: not a bool, not NaN or Infinity, and not an integer
    too large to convert (math.isfinite would raise on a 400-digit integer)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _value_problem(value: Any, signed: bool, unit: str) -> str | None:
    if not is_finite_number(value):
        return f"{_shown(value)} is not a finite number"
    if value < 0 and not signed:
        return f"{_shown(value)} is negative, and a value in {unit!r} cannot be"
    return None


_PLAIN_NUMBER_TYPES = frozenset({int, float})


def _plainly_in_range(values: list, signed: bool) -> bool:
    """True when every value is an int or a float, finite, and not negative unless `signed`;
    judged in a few C-speed passes (a finite sum means no value was NaN or infinite). False
    means "look at each value", not that one is wrong: a sum may overflow where no value does."""
    if not set(map(type, values)) <= _PLAIN_NUMBER_TYPES:
        return False
    try:
        if not math.isfinite(sum(values)):
            return False
    except OverflowError:  # an integer too large for a float
        return False
    return signed or not values or min(values) >= 0


def _value_problems(values: list, signed: bool, unit: str) -> Iterator[tuple[int, str]]:
    """(index, problem) for every value that is not a finite number in range."""
    if _plainly_in_range(values, signed):
        return
    for index, value in enumerate(values):
        problem = _value_problem(value, signed, unit)
        if problem:
            yield index, problem


# What the schema's names refuse: control characters, bidirectional marks and overrides.
_NOT_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e"
                           "\u2066-\u2069]")
MAX_NAME_CHARS = 500


def storable_name(text: str) -> str:
    """`text` as a name a run document can hold: each character names refuse written as its
    escape (a newline as `\\n`), cut to MAX_NAME_CHARS; `?` when only spaces are left."""
    shown = _NOT_IN_NAMES.sub(
        lambda found: found.group().encode("unicode_escape").decode("ascii"), text)
    shown = shown[:MAX_NAME_CHARS]
    return shown if shown.strip() else "?"


@lru_cache(maxsize=4096)  # a history repeats a few suite names thousands of times
def _suite_problem(suite: str) -> str | None:
    # Suite names become parts of file names and dashboard paths.
    if "/" in suite or "\\" in suite or suite.startswith(".") or any(
            ord(c) < 32 for c in suite):
        return f"{suite!r} is not a valid suite name (no '/', '\\', control characters " \
               f"or leading '.')"
    return None


def _semantic_problems(doc: dict) -> Iterator[str]:
    for index, result in enumerate(doc["results"]):
        where = f"results[{index}]"
        suite_problem = _suite_problem(result["suite"])
        if suite_problem:
            yield f"{where}.suite: {suite_problem}"
        spec = METRICS.get(result["metric"])
        if spec is not None:
            if result["unit"] != spec.unit:
                yield f"{where}.unit: {result['metric']!r} is measured in {spec.unit!r}, " \
                      f"not {result['unit']!r}"
            if result["direction"] != spec.direction.value:
                yield f"{where}.direction: {result['metric']!r} is {spec.direction.value}-is-better"
        signed = UNITS[result["unit"]].signed
        for i, problem in itertools.islice(
                _value_problems(result["samples"], signed, result["unit"]), 1):
            yield f"{where}.samples[{i}]: {problem}"
        summary = result["summary"] or {}
        keys = [key for key in SUMMARY_NUMBERS if summary.get(key) is not None]
        for i, problem in _value_problems([summary[key] for key in keys], signed,
                                          result["unit"]):
            yield f"{where}.summary.{keys[i]}: {problem}"
        if result["status"] in SUCCESS_STATUSES and result["summary"] is None:
            yield f"{where}.summary: a result with status {result['status']!r} needs a summary"
        if result["summary"] is not None and result["samples"] and \
                result["summary"]["n"] != len(result["samples"]):
            yield f"{where}.summary.n: {result['summary']['n']} but there are " \
                  f"{len(result['samples'])} samples"
