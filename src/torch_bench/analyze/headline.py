"""What a report says first: the overall verdict and its headline, one reading shared by the
terminal, the Markdown report (PR comment, job summary), the JSON verdicts and the step
outputs.

The headline says, in this order: what fails (the whole run's slowdown, regressions, newly
failing benchmarks); then the changes whose verdict was withheld (inconclusive or not
comparable), how many, why and what to do; then improvements; last "no change beyond ±X%"
for the benchmarks that were judged unchanged, X their resolution. It never calls a
comparison unchanged while a change went unjudged, and the overall verdict agrees with it:
regression, else inconclusive while anything went unjudged, else improvement, else
unchanged.

Why a verdict was withheld is read from its note, the rule's own words; `WITHHELD` turns
each kind of note into a short reason and the step that would settle it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.verdicts import Comparison, Kind, Verdict

A_B = "measure base and head side by side (A/B)"
MORE_ROUNDS = "measure more A/B rounds"


def _history(found: re.Match) -> str:
    runs, needed = int(found.group(1)), int(found.group(2))
    return f"not enough history ({runs} run{'' if runs == 1 else 's'}; {needed} needed)"


# (note pattern, reason -- text or made from the match --, what to do); the first match wins,
# so a later state (confirmation's rounds) comes before the first one (short history).
WITHHELD: tuple[tuple[re.Pattern[str], str | Callable[[re.Match], str], str], ...] = (
    (re.compile(r"did not settle it within the budget|not settled within the budget"
                r"|could neither call nor clear it"),
     "targeted confirmation did not settle it within its budget",
     "raise the confirmation budget (confirm-budget, --confirm-budget) or run again"),
    (re.compile(r"not confirmed by the re-run"), "not confirmed by the re-run",
     "run again to settle it"),
    (re.compile(r"^\d+ A/B rounds: "), "targeted confirmation's A/B rounds left it undecided",
     "run again, or raise the confirmation budget (confirm-budget, --confirm-budget)"),
    (re.compile(r"^pre-flight check failed"), "the pre-flight check failed",
     "fix what the pre-flight check found (the run's env.preflight) and run again"),
    (re.compile(r"speed reference read beyond every state"),
     "the machine was in a state its history never showed",
     "run again on a runner in its usual state"),
    (re.compile(r"relative to its run, but the whole run was"),
     "the whole run moved beyond the run-level shifts its history shows",
     "run again on a runner in its usual state"),
    (re.compile(r"^measured as \w+, but the (head|base)'s"),
     lambda found: f"the {found.group(1)}'s samples show contention from other processes",
     f"run again on a quieter runner, or {A_B}"),
    (re.compile(r"not significant among the suite's benchmarks"),
     "significant on its own, not among the suite's benchmarks at the per-PR level",
     f"confirm it: {A_B}, or run again"),
    (re.compile(r"not below the whole run's share of the per-PR level"),
     "significant on its own, not at the whole run's share of the per-PR level",
     f"confirm it: {A_B}, or run again"),
    (re.compile(r"not enough history \((\d+) runs?; (\d+) needed\)"), _history,
     f"store more base-branch runs, or {A_B}"),
    (re.compile(r"^environment differs"), "the environments differ",
     "compare runs of one environment (--ignore-environment compares anyway)"),
    (re.compile(r"^calls per sample differ"), "each side timed a different loop (calls per "
                                              "sample differ)",
     "measure both sides with the same calls per sample"),
)


def withheld_reason(note: str | None) -> tuple[str, str] | None:
    """(reason, what to do) for a withheld verdict's note, None when no entry knows it."""
    for pattern, reason, advice in WITHHELD:
        found = pattern.search(note or "")
        if found:
            return (reason if isinstance(reason, str) else reason(found)), advice
    return None


@dataclass(frozen=True)
class Withheld:
    """Changes left unjudged for one reason."""

    reason: str
    advice: str
    verdicts: tuple[Verdict, ...] = ()
    whole_run: float | None = None  # the whole run's ratio, when its verdict was withheld too

    @property
    def changes(self) -> list[float]:
        """The measured changes (+0.30 = 30% higher), as the report's rows show them."""
        return [v.assessment.ratio - 1 for v in self.verdicts
                if v.assessment and 0 < v.assessment.ratio < math.inf]

    def text(self) -> str:
        """"3 changes of +29.6% to +30.4% not judged: not enough history (1 run; 3 needed)
        — store more base-branch runs, or measure base and head side by side (A/B)"."""
        said = []
        if self.verdicts:
            n, changes = len(self.verdicts), self.changes
            what = "change" if len(changes) == n else "benchmark"
            said.append(f"{n} {what}{'' if n == 1 else 's'}"
                        + (f" of {change_range(changes)}" if len(changes) == n else ""))
        if self.whole_run is not None:
            said.append(f"the whole run's {percent(self.whole_run - 1)}")
        advice = f" — {self.advice}" if self.advice else ""
        return f"{' and '.join(said)} not judged: {self.reason}{advice}"

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "advice": self.advice,
                "benchmarks": [v.benchmark_id for v in self.verdicts],
                "changes": self.changes, "whole_run": self.whole_run}


def percent(change: float) -> str:
    return f"{change * 100:+.1f}%"


def change_range(changes: Sequence[float]) -> str:
    low, high = percent(min(changes)), percent(max(changes))
    return low if low == high else f"{low} to {high}"


def resolution_range(fractions: Sequence[float]) -> str:
    low, high = f"{min(fractions) * 100:.1f}", f"{max(fractions) * 100:.1f}"
    return f"±{low}%" if low == high else f"±{low}–{high}%"


WITHHELD_KINDS = (Kind.INCONCLUSIVE, Kind.NOT_COMPARABLE)
JUDGED_SHIFT = (Outcome.WORSE, Outcome.BETTER)


def withheld_groups(comparison: Comparison) -> list[Withheld]:
    """The withheld verdicts grouped by reason, in the order they first appear; the whole
    run joins its reason's group when its own verdict was withheld."""
    groups: dict[tuple[str, str], list[Verdict]] = {}
    for v in comparison.of_kind(*WITHHELD_KINDS):
        reason, advice = withheld_reason(v.note) or (v.note or "no reason recorded", "")
        if v.assessment and v.assessment.side_by_side:  # measured so already
            advice = advice.replace(A_B, MORE_ROUNDS)
        groups.setdefault((reason, advice), []).append(v)
    found = {key: Withheld(*key, tuple(verdicts)) for key, verdicts in groups.items()}
    shift = comparison.run_shift
    key = withheld_reason(shift.reason) if shift and shift.outcome is Outcome.UNSURE else None
    if key is not None and shift is not None:
        group = found.get(key, Withheld(*key))
        found[key] = Withheld(group.reason, group.advice, group.verdicts, shift.ratio)
    return list(found.values())


HEADLINE_GROUPS = 3  # reasons the headline spells out; the rest are counted


def withheld_texts(groups: Sequence[Withheld]) -> list[str]:
    """The largest groups' texts, in their order, and how many more went unjudged."""
    size = {id(g): len(g.verdicts) + (g.whole_run is not None) for g in groups}
    shown = {id(g) for g in sorted(groups, key=lambda g: -size[id(g)])[:HEADLINE_GROUPS]}
    rest = sum(n for key, n in size.items() if key not in shown)
    return [g.text() for g in groups if id(g) in shown] + (
        [f"{_count(rest, 'more change', 'more changes')} not judged for other reasons (the "
         "report's rows say why)"] if rest else [])


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class Overall:
    """The comparison in a few words: its verdict, the counts behind it, the headline."""

    verdict: str  # regression, inconclusive, improvement or unchanged
    failing: tuple[str, ...]  # what fails, e.g. ("whole run 10.0% slower", "2 regressions")
    withheld: tuple[Withheld, ...]
    better: tuple[str, ...]  # improvements, fixed benchmarks, a faster whole run
    other: tuple[str, ...]  # new and removed benchmarks
    resolution: str  # "no change beyond ±2.0–4.1% in 9 benchmarks", or ""
    regressions: int  # regressed and newly failing benchmarks, and the whole run
    improvements: int  # improved and fixed benchmarks, and the whole run

    @property
    def not_judged(self) -> int:
        """Changes whose verdict was withheld, the whole run's counted once."""
        return sum(len(g.verdicts) + (g.whole_run is not None) for g in self.withheld)

    @property
    def headline(self) -> str:
        parts = [", ".join(self.failing), *withheld_texts(self.withheld),
                 ", ".join(self.better), ", ".join(self.other), self.resolution]
        return "; ".join(p for p in parts if p) or "no significant change"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "headline": self.headline,
                "failing": ", ".join(self.failing), "regressions": self.regressions,
                "improvements": self.improvements, "not_judged": self.not_judged,
                "withheld": [g.to_dict() for g in self.withheld]}


def shift_text(ratio: float) -> str:
    return f"{abs(ratio - 1) * 100:.1f}% {'slower' if ratio > 1 else 'faster'}"


def overall(comparison: Comparison) -> Overall:
    counts = comparison.counts()
    shift = comparison.run_shift
    moved = shift.outcome if shift is not None and shift.outcome in JUDGED_SHIFT else None
    failing = [f"whole run {shift_text(shift.ratio)}"] if moved is Outcome.WORSE and shift \
        else []
    failing += [_count(counts[Kind.REGRESSION], "regression", "regressions")] \
        if counts[Kind.REGRESSION] else []
    failing += [f"{counts[Kind.NEWLY_FAILING]} newly failing"] \
        if counts[Kind.NEWLY_FAILING] else []
    better = [f"whole run {shift_text(shift.ratio)}"] if moved is Outcome.BETTER and shift \
        else []
    better += [_count(counts[Kind.IMPROVEMENT], "improvement", "improvements")] \
        if counts[Kind.IMPROVEMENT] else []
    better += [f"{counts[Kind.FIXED]} fixed"] if counts[Kind.FIXED] else []
    other = [f"{counts[kind]} {kind.value}" for kind in (Kind.NEW, Kind.REMOVED) if counts[kind]]
    withheld = withheld_groups(comparison)
    regressions = counts[Kind.REGRESSION] + counts[Kind.NEWLY_FAILING] \
        + (moved is Outcome.WORSE)
    improvements = counts[Kind.IMPROVEMENT] + counts[Kind.FIXED] + (moved is Outcome.BETTER)
    verdict = "regression" if regressions else "inconclusive" if withheld \
        else "improvement" if improvements else "unchanged"
    return Overall(verdict, tuple(failing), tuple(withheld), tuple(better), tuple(other),
                   resolution(comparison), regressions, improvements)


def relative_to(comparison: Comparison) -> str:
    """How the unchanged benchmarks were judged when the whole run moved by at least the
    minimum effect: relative to its shift, each timing's own change hidden in it."""
    shift = comparison.run_shift
    if shift is None or abs(shift.ratio - 1) < comparison.policy.min_effect:
        return ""
    if shift.outcome in JUDGED_SHIFT or withheld_reason(shift.reason):
        return " relative to the run's shift"  # said already, first or among the unjudged
    return f" relative to the run's shift ({percent(shift.ratio - 1)}, not flagged)"


def resolution(comparison: Comparison) -> str:
    """What the benchmarks judged unchanged could have shown: "no change beyond ±X%" with
    their resolution (one figure or the range; relative to the run's shift when it
    moved), or, for those no test could judge (their noise unknown), only that they
    measured within the minimum effect."""
    unchanged = [v for v in comparison.of_kind(Kind.UNCHANGED) if v.assessment]
    seen = [v.assessment.detectable for v in unchanged
            if v.assessment and v.assessment.detectable is not None]
    unknown = len(unchanged) - len(seen)
    said = []
    if seen:
        said.append(f"no change beyond {resolution_range(seen)} in "
                    f"{_count(len(seen), 'benchmark', 'benchmarks')}{relative_to(comparison)}")
    if unknown:
        effects = [v.assessment.min_effect for v in unchanged
                   if v.assessment and v.assessment.detectable is None]
        said.append(f"{_count(unknown, 'benchmark', 'benchmarks')} within the minimum effect "
                    f"({resolution_range(effects)}) as measured{relative_to(comparison)}, "
                    "their noise not known yet")
    return "; ".join(said)


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """The machine-readable verdicts (`torch-bench compare --json`): `overall`, what the
    report's headline says, then the verdicts themselves."""
    return {"overall": overall(comparison).to_dict(), **comparison.to_dict()}
