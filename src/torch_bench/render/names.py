"""Names that tell benchmarks apart in narrow places (trend cards, table cells): the prefix
every name of a suite shares is left out, so what differs is what is seen; the full name goes
into the hover text.

Pure functions; no I/O.
"""

from __future__ import annotations

import bisect
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


# -- Card titles ----------------------------------------------------------------------------
# A trend card's title line holds about this many characters at the narrowest card (230 px,
# 12.5 px bold); the suite and the metric have a line of their own above it.
CARD_TITLE_CHARS = 24
_WORD_CHARS = str.isalnum


def boundaries(name: str) -> list[int]:
    """The positions where `name` may be cut so that whole words stay whole: its ends, next
    to a separator, between a lower- and an upper-case letter (`measureX`) and between
    letters and digits (`Fib10`)."""
    cuts = {0, len(name)}
    for i in range(1, len(name)):
        a, b = name[i - 1], name[i]
        if (not _WORD_CHARS(a)) != (not _WORD_CHARS(b)) or (a.islower() and b.isupper()) \
                or (a.isalpha() and b.isdigit()) or (a.isdigit() and b.isalpha()):
            cuts.add(i)
    return sorted(cuts)


def _shared_ends(names: Sequence[str]) -> tuple[int, int]:
    """The lengths of the prefix and the suffix all `names` share, each cut back to a word
    boundary and leaving every name at least one character of its own."""
    if len(names) < 2:
        return 0, 0
    shortest = min(len(n) for n in names)
    head = len(os.path.commonprefix(list(names)))
    tail = len(os.path.commonprefix([n[::-1] for n in names]))
    first = names[0]
    head = max((b for b in boundaries(first) if b <= min(head, shortest - 1)), default=0)
    tail = len(first) - min((b for b in boundaries(first)
                             if len(first) - b <= min(tail, shortest - head - 1)),
                            default=len(first))
    return head, tail


MIN_CUT = 3  # a shared end this short is kept: an ellipsis would save nothing
STRONG_SEPARATORS = "/:. ()[],="  # between the parts of a name; "_" and "-" join words


def _whole_words(name: str, head: int, tail: int) -> tuple[int, int]:
    """The part of `name` between its shared prefix (`head` characters) and suffix (`tail`),
    widened to the strong separators around it: "Fib10" rather than "10", "test_case_006"
    rather than "006"."""
    start = max((name.rfind(sep, 0, head) + 1 for sep in STRONG_SEPARATORS), default=0)
    end = len(name) - tail
    found = [i for sep in STRONG_SEPARATORS if (i := name.find(sep, end)) >= 0]
    return start, (min(found) if found and tail else len(name))


CUT_TRIMMED = "._-/: "  # separators dropped next to an ellipsis: "…bert", not "….bert"


def _cut_ends(name: str, start: int, end: int) -> str:
    """name[start:end] with an ellipsis for each end cut off, separators beside it dropped."""
    text = name[start:end]
    if start:
        text = ELLIPSIS + (text.lstrip(CUT_TRIMMED) or text)
    if end < len(name):
        text = (text.rstrip(CUT_TRIMMED) or text) + ELLIPSIS
    return text


def _starting_with(ordered: Sequence[str], prefix: str) -> Sequence[str]:
    """The strings of sorted `ordered` that start with `prefix` (a contiguous run of them)."""
    first = bisect.bisect_left(ordered, prefix)
    last = bisect.bisect_left(ordered, prefix + "\U0010ffff", first)
    return ordered[first:last]


def _middle(core: str, cores: Sequence[str], room: int) -> tuple[int, int]:
    """(head, tail): how many characters of `core` to keep before and after a middle
    ellipsis within `room`, chosen so that no other of the sorted `cores` starts and ends
    the same way: cut at word boundaries where that fits, keeping as much as fits, the end
    rather than the start (where names usually differ)."""
    keep = room - 1
    cuts = boundaries(core)
    pairs = sorted(((h, len(core) - b) for h in cuts for b in cuts
                    if 0 < h < b and h + len(core) - b <= keep),
                   key=lambda pair: (-(pair[0] + pair[1]), -pair[1]))
    first = max(keep // 3, 1)
    pairs += [(h, keep - h) for h in [*range(first, 0, -1), *range(first + 1, keep)]]
    for head, tail in pairs:
        end = core[len(core) - tail:]
        if not any(o != core and o.endswith(end) for o in _starting_with(cores, core[:head])):
            return head, tail
    return first, keep - first


def card_titles(names: Iterable[str], budget: int = CARD_TITLE_CHARS) -> dict[str, str]:
    """A title for each of `names` (the benchmarks of one suite) that tells it from the
    others within `budget` characters: the whole name when it fits; else the part left
    when the prefix and suffix they all share are cut (back to the separators around the
    words that differ, an ellipsis in their place); else that part with its middle replaced
    by an ellipsis, keeping as much of its start and end as tells it apart. Distinct names
    always get distinct titles (a name is kept whole, beyond the budget, where shortening
    could not keep them apart)."""
    distinct = sorted(set(names))
    head, tail = _shared_ends(distinct)
    head, tail = (head if head > MIN_CUT else 0), (tail if tail > MIN_CUT else 0)
    cores = {n: n[head:len(n) - tail] for n in distinct}
    ordered = sorted(cores.values())
    titles = {}
    for name in distinct:
        if len(name) <= budget:
            titles[name] = name
            continue
        start, end = _whole_words(name, head, tail)
        shown = _cut_ends(name, start, end)
        if len(shown) > budget:
            core = cores[name]
            before = ELLIPSIS if head else ""
            after = ELLIPSIS if tail else ""
            room = max(budget - len(before) - len(after), 3)
            if len(core) <= room:  # the words around it make it too long, not itself
                shown = _cut_ends(name, head, len(name) - tail)
            else:
                h, t = _middle(core, ordered, room)
                shown = (before + core[:h].strip(CUT_TRIMMED) + ELLIPSIS
                         + core[len(core) - t:].lstrip(CUT_TRIMMED) + after)
        titles[name] = shown
    seen: dict[str, list[str]] = {}
    for name, title in titles.items():
        seen.setdefault(title, []).append(name)
    for clash in (group for group in seen.values() if len(group) > 1):
        for name in clash:
            titles[name] = name
    return titles
