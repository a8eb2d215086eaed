"""Which cases to explain, and explaining them within a time budget.

A *target* is a case to profile on both sides, with the metric whose window to profile and,
when it comes from a verdict, the verdict's kind (regression or improvement). Targets come
from a comparison's verdicts (only regressions and improvements: nothing else is explained)
or, for local use, from every planned case. Targets are explained in order (regressions
first) until the budget is spent: a target is started only while the time spent, plus what
the slowest target so far took, stays within the budget; the rest are listed as skipped.
Pure but for `profile`, the callable that profiles one target on one side.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from torch_bench.analyze.op_diff import OpDiff, diff_profiles
from torch_bench.execute.profile_sides import SideOutcome
from torch_bench.measure.case import CaseSpec

EXPLAINED_KINDS = ("regression", "improvement")
SIDES = ("base", "head")


@dataclass(frozen=True)
class Target:
    suite_ref: str
    case: CaseSpec
    metric: str | None = None  # the flagged metric (None: the case's first timed one)
    runtime: str | None = None  # the flagged result's runtime (compile suite)
    kind: str | None = None  # the verdict: regression or improvement
    change: float | None = None  # the verdict's head/base ratio

    @property
    def label(self) -> str:
        return self.case.label + (f" · {self.metric}" if self.metric else "") \
            + (f" ({self.runtime})" if self.runtime else "")


@dataclass(frozen=True)
class Explained:
    target: Target
    diff: OpDiff | None
    errors: Mapping[str, str]  # side -> why it has no profile
    traces: Mapping[str, str]  # side -> Chrome trace file


@dataclass(frozen=True)
class Explanation:
    explained: tuple[Explained, ...]
    skipped: tuple[Target, ...]  # not started: the budget was spent
    budget_s: float
    seconds: float


def _matches(case: CaseSpec, verdict: Mapping[str, Any]) -> bool:
    params = verdict.get("params") or {}
    return verdict.get("suite") == case.suite and verdict.get("name") == case.name \
        and all(params.get(k) == v for k, v in case.params.items())


def targets_from_verdicts(planned: Sequence[tuple[str, CaseSpec]],
                          verdicts: Sequence[Mapping[str, Any]]) -> list[Target]:
    """A target per regression or improvement among `verdicts` whose case is planned,
    regressions first, largest change first."""
    found = []
    for verdict in verdicts:
        if verdict.get("verdict") not in EXPLAINED_KINDS:
            continue
        for ref, case in planned:
            if _matches(case, verdict):
                ratio = verdict.get("ratio")
                found.append(Target(ref, case, verdict.get("metric"),
                                    (verdict.get("params") or {}).get("runtime"),
                                    verdict["verdict"],
                                    ratio if isinstance(ratio, (int, float)) else None))
                break

    def order(t: Target):
        return (EXPLAINED_KINDS.index(t.kind), -abs((t.change or 1.0) - 1.0), t.label)

    return sorted(found, key=order)


def targets_from_plan(planned: Sequence[tuple[str, CaseSpec]]) -> list[Target]:
    return [Target(ref, case) for ref, case in planned]


Profiler = Callable[[Target, str], tuple[SideOutcome, str | None]]  # -> outcome, trace file


def explain(targets: Sequence[Target], profile: Profiler, budget_s: float,
            clock: Callable[[], float] = time.monotonic,
            log: Callable[[str], None] = lambda line: None) -> Explanation:
    started = clock()
    slowest = 0.0
    done: list[Explained] = []
    for index, target in enumerate(targets):
        spent = clock() - started
        if spent + slowest > budget_s:
            log(f"explain: the budget ({budget_s:g} s) is spent; {len(targets) - index} "
                "case(s) not profiled")
            return Explanation(tuple(done), tuple(targets[index:]), budget_s, clock() - started)
        log(f"explain: profiling {target.label}")
        begun = clock()
        done.append(explain_one(target, profile))
        slowest = max(slowest, clock() - begun)
    return Explanation(tuple(done), (), budget_s, clock() - started)


def explain_one(target: Target, profile: Profiler) -> Explained:
    outcomes, traces = {}, {}
    for side in SIDES:
        outcome, trace = profile(target, side)
        outcomes[side] = outcome
        if trace and outcome.profile is not None:
            traces[side] = trace
    errors = {side: o.error or "no profile" for side, o in outcomes.items() if o.profile is None}
    diff = None if errors else diff_profiles(outcomes["base"].profile, outcomes["head"].profile)
    return Explained(target, diff, errors, traces)
