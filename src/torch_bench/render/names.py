"""Names that tell benchmarks apart in narrow places (trend cards, table cells): the prefix
every name of a suite shares is left out, so what differs is what is seen; the full name goes
into the hover text.

Pure functions; no I/O.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ELLIPSIS = "…"
# A shortened name starts after a path or pytest separator when the shared prefix has one
# (".../test_case_001" keeps "test_case_001"), else after a word separator.
SEPARATORS = ("/:", "._- ")
MIN_PREFIX = 4  # a shared prefix shorter than this is kept: nothing worth saving


def common_prefix(names: Iterable[str]) -> str:
    """The prefix all distinct `names` share, cut back to the end of a separator (so that
    "test_case_001" and "test_case_002" share "test_case_", not "test_case_00"); empty for
    fewer than two distinct names."""
    distinct = sorted(set(names))
    if len(distinct) < 2:
        return ""
    shared = os.path.commonprefix([distinct[0], distinct[-1]])
    for separators in SEPARATORS:
        cut = max(shared.rfind(sep) for sep in separators) + 1
        if cut >= MIN_PREFIX:
            return shared[:cut]
    return ""


def short_names(names: Iterable[str]) -> dict[str, str]:
    """Each name with the prefix shared by all of them replaced by "…"."""
    names = list(names)
    prefix = common_prefix(names)
    return {name: ELLIPSIS + name[len(prefix):] if prefix and len(name) > len(prefix)
            else name for name in names}


def shared_params(params: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The params every one of `params` has, with the same value (none for a single one)."""
    if len(params) < 2:
        return {}
    common = {k: str(v) for k, v in params[0].items()}
    for one in params[1:]:
        common = {k: v for k, v in common.items() if k in one and str(one[k]) == v}
    return dict(sorted(common.items()))


def own_params(name: str, params: Mapping[str, Any], shared: Mapping[str, str],
               *spreads: Mapping[str, int]) -> str:
    """The params that tell a benchmark from the others of its suite: those not shared by all
    of them and not a repeat of its name (model=bert on "bert"), the ones taking the most
    values first (`spreads`, from `param_spread`: say among the benchmarks of the same name
    and metric, then in the suite), so a cut end loses the least."""
    kept = [(k, v) for k, v in params.items() if k not in shared and str(v) != name]
    kept.sort(key=lambda item: (*(-spread.get(item[0], 0) for spread in spreads), item[0]))
    return ", ".join(f"{k}={v}" for k, v in kept)


def param_spread(params: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many distinct values each param takes."""
    values: dict[str, set[str]] = {}
    for one in params:
        for key, value in one.items():
            values.setdefault(key, set()).add(str(value))
    return {key: len(seen) for key, seen in values.items()}
