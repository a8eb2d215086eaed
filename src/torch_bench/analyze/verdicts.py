"""Verdicts on every benchmark of a PR against its baseline.

Kinds: regression, improvement, unchanged, inconclusive (too noisy to say), new, removed,
newly failing (a success status -- ok or pass -- became a failure such as error, oom,
timeout or fail_accuracy), fixed (the reverse), and not comparable (the environments'
fingerprints differ, `environment_difference` says which versions differ; or the calls per
sample recorded in `extra["loops"]` differ, so each side timed a different loop).

The evidence of every benchmark is gathered from the runs (`evidence.py`: the baseline level
since the last change point, the run-to-run variance, each timing relative to its run's
shift) and the rule judges the suite together (`rule.judge`: moderated t tests, the
per-benchmark rate, the per-PR correction); the run-level shift gets its own verdict
(`shift.py`).

Runs whose pre-flight check failed (`Run.trusted` is False) are kept out: they never teach the
noise, and on either side they are left out when the side has trusted runs. When every run of a
side is untrusted, nothing is alerted on: regressions, improvements and newly failing
benchmarks become inconclusive with the note "pre-flight check failed" (the statuses stay in
`base_status`/`head_status`), so there are no annotations and no failing exit.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from torch_bench.analyze.contention import burst_reason, contention_reason
from torch_bench.analyze.evidence import SuiteEvidence, gather, reference_runs
from torch_bench.analyze.reading import change_reading
from torch_bench.analyze.rule import (
    DEFAULT_POLICY,
    Assessment,
    Case,
    Outcome,
    RulePolicy,
    judge,
)
from torch_bench.analyze.shift import SHIFTED_UNITS, RunShift, judge_shift
from torch_bench.measure.environment import FINGERPRINT_FIELDS
from torch_bench.metrics import Direction
from torch_bench.results.schema import SUCCESS_STATUSES, Result, Run, Status


class Kind(str, Enum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"
    NEW = "new"
    REMOVED = "removed"
    NEWLY_FAILING = "newly_failing"
    FIXED = "fixed"
    NOT_COMPARABLE = "not_comparable"


# Display order and labels, regressions first.
KIND_LABELS: dict[Kind, str] = {
    Kind.REGRESSION: "regression",
    Kind.NEWLY_FAILING: "newly failing",
    Kind.IMPROVEMENT: "improvement",
    Kind.FIXED: "fixed",
    Kind.INCONCLUSIVE: "inconclusive",
    Kind.NOT_COMPARABLE: "not comparable",
    Kind.NEW: "new",
    Kind.REMOVED: "removed",
    Kind.UNCHANGED: "unchanged",
}

OUTCOME_KINDS = {Outcome.WORSE: Kind.REGRESSION, Outcome.BETTER: Kind.IMPROVEMENT,
                 Outcome.SAME: Kind.UNCHANGED, Outcome.UNSURE: Kind.INCONCLUSIVE}


@dataclass(frozen=True)
class Verdict:
    benchmark_id: str
    suite: str
    name: str
    params: Mapping[str, Any]
    metric: str
    unit: str
    direction: str
    kind: Kind
    assessment: Assessment | None = None
    base_status: str | None = None
    head_status: str | None = None
    note: str | None = None
    confirmed: bool | None = None  # None: no re-run; True/False: outcome of the re-run

    @property
    def low_confidence(self) -> bool:
        return bool(self.assessment and self.assessment.low_confidence)

    def to_dict(self) -> dict[str, Any]:
        a = self.assessment
        return {
            "benchmark_id": self.benchmark_id,
            "suite": self.suite,
            "name": self.name,
            "params": dict(self.params),
            "metric": self.metric,
            "unit": self.unit,
            "direction": self.direction,
            "verdict": self.kind.value,
            "base_status": self.base_status,
            "head_status": self.head_status,
            "base_median": a.base_median if a else None,
            "head_median": a.head_median if a else None,
            "ratio": a.ratio if a else None,
            "p_value": a.p_value if a else None,
            "t": a.z if a else None,
            "df": a.df if a else None,
            "noise": a.noise if a else None,
            "history_runs": a.history_runs if a else None,
            "min_effect": a.min_effect if a else None,
            "threshold": a.threshold if a else None,
            "detectable": a.detectable if a else None,
            "run_shift": math.exp(a.shift) if a else None,
            "side_by_side": a.side_by_side if a else None,
            "low_confidence": self.low_confidence,
            "confirmed": self.confirmed,
            "note": self.note,
        }


@dataclass(frozen=True)
class EnvDifference:
    field: str
    base: Any
    head: Any


@dataclass(frozen=True)
class Comparison:
    verdicts: tuple[Verdict, ...]
    environment: tuple[EnvDifference, ...] = ()
    base_runs: tuple[Run, ...] = ()
    head_runs: tuple[Run, ...] = ()
    baseline_note: str = ""
    policy: RulePolicy = DEFAULT_POLICY
    extra: Mapping[str, Any] = field(default_factory=dict)
    untrusted_sides: tuple[str, ...] = ()  # "base"/"head": every run failed its pre-flight
    left_out: tuple[str, ...] = ()  # ids of untrusted runs set aside for trusted ones
    run_shift: RunShift | None = None  # the whole run's shift, when the suite has enough timings
    reference_runs: tuple[Run, ...] = ()  # the runs the baseline level and noise came from

    def counts(self) -> dict[Kind, int]:
        found = Counter(v.kind for v in self.verdicts)
        return {kind: found.get(kind, 0) for kind in KIND_LABELS}

    def of_kind(self, *kinds: Kind) -> list[Verdict]:
        return [v for v in self.verdicts if v.kind in kinds]

    @property
    def has_regression(self) -> bool:
        shifted = self.run_shift is not None and self.run_shift.outcome is Outcome.WORSE
        return shifted or any(v.kind in (Kind.REGRESSION, Kind.NEWLY_FAILING)
                              for v in self.verdicts)

    def to_dict(self) -> dict[str, Any]:
        """The verdicts as data; `torch-bench compare --json` writes them with what the
        report's headline says in front (`headline.comparison_document`)."""
        return {
            "counts": {kind.value: count for kind, count in self.counts().items()},
            "false_alarm_rate": self.policy.alpha,
            "per_pr_level": self.policy.fdr,
            "untrusted_sides": list(self.untrusted_sides),
            "run_shift": self.run_shift.to_dict() if self.run_shift else None,
            "left_out_runs": list(self.left_out),
            "baseline": self.baseline_note,
            "base_runs": [run.run_id for run in self.base_runs],
            "reference_runs": [run.run_id for run in self.reference_runs],
            "head_runs": [run.run_id for run in self.head_runs],
            "environment_difference": [
                {"field": d.field, "base": d.base, "head": d.head} for d in self.environment],
            "confirmation": self.extra["confirmation"].to_dict()
            if "confirmation" in self.extra else None,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }


def environment_difference(base: Sequence[Run], head: Sequence[Run]) -> list[EnvDifference]:
    """Fields of the fingerprint whose values differ between the two sides' first runs."""
    if not base or not head or base[0].fingerprint == head[0].fingerprint:
        return []
    b, h = base[0].env, head[0].env
    return [EnvDifference(name, b.get(name), h.get(name)) for name in FINGERPRINT_FIELDS
            if b.get(name) != h.get(name)]


def results_by_id(runs: Iterable[Run]) -> dict[str, list[Result]]:
    found: dict[str, list[Result]] = defaultdict(list)
    for run in runs:
        for result in run.results:
            found[result.benchmark_id].append(result)
    return found


UNTRUSTED_NOTE = "pre-flight check failed"
# verdicts that would alert (or claim a change) and are not given on untrusted measurements
DISTRUSTED_KINDS = (Kind.REGRESSION, Kind.IMPROVEMENT, Kind.NEWLY_FAILING)


def trusted(runs: Iterable[Run]) -> list[Run]:
    """The runs whose pre-flight check passed (or that have none recorded)."""
    return [run for run in runs if run.trusted]


def distrusted(verdict: Verdict) -> Verdict:
    """The verdict on a side that failed its pre-flight check: an alerting one becomes
    inconclusive, saying why."""
    if verdict.kind not in DISTRUSTED_KINDS:
        return verdict
    was = KIND_LABELS[verdict.kind]
    if verdict.kind is Kind.NEWLY_FAILING:
        was += f": {verdict.base_status} -> {verdict.head_status}"
    return replace(verdict, kind=Kind.INCONCLUSIVE, note=f"{UNTRUSTED_NOTE} (measured as {was})")


def compare_runs(
    base: Sequence[Run],
    head: Sequence[Run],
    history: Sequence[Run] = (),
    *,
    policy: RulePolicy = DEFAULT_POLICY,
    ignore_environment: bool = False,
    baseline_note: str = "",
    side_by_side: bool = False,
    whole_run_apart: bool = False,
) -> Comparison:
    """Verdicts for every benchmark present on either side. The baseline level and the
    run-to-run noise come from the reference runs: `history` (base-branch runs, oldest first,
    the base runs among them or added to them), or, `side_by_side`, the base runs alone (A/B
    rounds interleaved with the head's). The whole run's shift takes its share of the
    per-PR level and the benchmarks the rest, or, `whole_run_apart`, each has all of it
    (re-runs, confirmation's rounds and bisect steps settle the benchmarks they follow, not
    the report). Untrusted runs: see the module docstring."""
    history = trusted(history)
    untrusted_sides, left_out = [], []
    sides = []
    for name, runs in (("base", base), ("head", head)):
        good = trusted(runs)
        if runs and not good:
            untrusted_sides.append(name)
        elif len(good) < len(runs):
            left_out += [run.run_id for run in runs if not run.trusted]
        sides.append(good or list(runs))
    base, head = sides
    env_diff = environment_difference(base, head)
    comparable = ignore_environment or not env_diff
    base_ids, head_ids = results_by_id(base), results_by_id(head)
    both_ok = sorted(key for key in head_ids if key in base_ids
                     and _any_ok(base_ids[key]) and _any_ok(head_ids[key]))
    reference = list(base) if side_by_side else reference_runs(base, history)
    found = gather(reference, head, both_ok, {k: head_ids[k][0] for k in both_ok},
                   min_history=policy.min_history, side_by_side=side_by_side)
    cases = {key: _case(key, head_ids[key][0], found, policy) for key in both_ok}
    tested = comparable and bool(found.shifted_benchmarks)
    shared = tested and not whole_run_apart
    judged = dict(zip(cases, judge(list(cases.values()), policy,
                                   level=policy.family_level(shared)), strict=True))
    shift = judge_shift(found.reference_shifts, found.head_shifts, found.shifted_benchmarks,
                        policy, side_by_side, found.shift_memory,
                        policy.whole_run_level if shared else None) if tested else None
    # A/B rounds share the machine's states: a run that moved there is the code's doing
    moved = shift if shift is not None and not side_by_side \
        and shift.outcome in (Outcome.WORSE, Outcome.BETTER) else None
    # A/B rounds, interleaved, share their neighbours: under a steady one most rounds of both
    # sides show contention, and doubting every call for it would never let a real change be
    # called; only contention the slower side shows alone (a burst on its rounds) is doubted
    verdicts = [_verdict(key, base_ids.get(key, []), head_ids.get(key, []), judged.get(key),
                         comparable, key in found.unseen_state, moved,
                         shared_neighbours=side_by_side)
                for key in sorted(set(base_ids) | set(head_ids))]
    if untrusted_sides:
        verdicts = [distrusted(v) for v in verdicts]
        shift = replace(shift, outcome=Outcome.UNSURE, reason=UNTRUSTED_NOTE) \
            if shift and shift.outcome in (Outcome.WORSE, Outcome.BETTER) else shift
    return Comparison(tuple(verdicts), tuple(env_diff), tuple(base), tuple(head),
                      baseline_note, policy, untrusted_sides=tuple(untrusted_sides),
                      left_out=tuple(left_out), run_shift=shift,
                      reference_runs=tuple(reference))


UNSEEN_STATE_NOTE = ("the head's speed reference read beyond every state history shows: the "
                     "machine, not the code, may have changed")


def moved_with_run(assessment: Assessment, unit: str, shift: RunShift) -> str | None:
    """Why a timing's change relative to a head run that moved as a whole beyond the
    run-level shifts history shows cannot be called, when it is no larger than the run's own
    move and the benchmark's resolution together; None otherwise. Benchmarks move alike with
    a slower host of a kind history knows, not necessarily in a state it never showed
    (another load mix on the runner): one that did not move at all, or moved twice as far,
    reads as a change of the run's size the code did not make, give or take its own noise
    (half the time it reads larger). A larger change is not the machine's doing and is
    judged as usual."""
    if unit not in SHIFTED_UNITS or not 0 < assessment.relative_ratio < math.inf:
        return None
    resolution = math.log1p(assessment.detectable) if assessment.detectable is not None \
        else 0.0
    if abs(math.log(assessment.relative_ratio)) > abs(shift.shift) + resolution:
        return None
    moved = f"{abs(shift.ratio - 1) * 100:.1f}% {'slower' if shift.ratio > 1 else 'faster'}"
    return (f"the whole run was {moved}, beyond the run-level shifts history shows: "
            "benchmarks need not move alike in a state of the machine history never showed")


def _case(key: str, result: Result, found: SuiteEvidence, policy: RulePolicy) -> Case:
    return Case(found.evidence.get(key), result.direction == Direction.LOWER.value,
                policy.effect_for(result.suite, result.metric), result.metric,
                found.reference_counts.get(key, 0), found.levels[key], found.shifts.get(key, 0.0))


def _any_ok(results: Sequence[Result]) -> bool:
    return any(r.ok and r.samples for r in results)


def _status(results: Sequence[Result]) -> str | None:
    if not results:
        return None
    ok = [r.status for r in results if r.status in SUCCESS_STATUSES]
    return ok[0] if ok else results[-1].status


def _verdict(key: str, base: list[Result], head: list[Result], assessment: Assessment | None,
             comparable: bool, unseen_state: bool, moved: RunShift | None, *,
             shared_neighbours: bool = False) -> Verdict:
    """`shared_neighbours`: the sides were measured interleaved, so contention the faster side
    shows too, or interruptions at about the same rate per second, are the neighbours' on
    both and do not make a change inconclusive (`contention.burst_reason`)."""
    first = (head or base)[0]
    make = _maker(key, first, _status(base), _status(head))
    if not base:
        return make(Kind.NEW)
    if not head:
        return make(Kind.REMOVED)
    skipped = Status.SKIPPED.value
    if _status(base) == skipped or _status(head) == skipped:
        return make(Kind.INCONCLUSIVE, note="skipped on one side")
    base_ok, head_ok = _any_ok(base), _any_ok(head)
    if base_ok and not head_ok:
        return make(Kind.NEWLY_FAILING, note=next((r.error for r in head if r.error), None))
    if head_ok and not base_ok:
        return make(Kind.FIXED)
    if not base_ok or assessment is None:
        return make(Kind.UNCHANGED, note="failing on both sides")
    if not comparable:
        return make(Kind.NOT_COMPARABLE, assessment=assessment, note="environment differs")
    loops = loops_difference([r for r in base if r.ok], [r for r in head if r.ok])
    if loops:
        return make(Kind.NOT_COMPARABLE, assessment=assessment, note=loops)
    kind = OUTCOME_KINDS[assessment.outcome]
    if kind in (Kind.REGRESSION, Kind.IMPROVEMENT):
        # a burst on one side, or a machine state history never showed (see `speed_scaling`),
        # is not a change of the code
        side = "head" if kind is Kind.REGRESSION else "base"
        slower, faster = (head, base) if kind is Kind.REGRESSION else (base, head)
        busy = burst_reason(slower, faster) if shared_neighbours else _contention(slower)
        doubt = f"the {side}'s {busy}" if busy else UNSEEN_STATE_NOTE if unseen_state else None
        if doubt:
            return make(Kind.INCONCLUSIVE, assessment=assessment,
                        note=f"measured as {kind.value}, but {doubt}")
        # ... nor a run that moved as a whole beyond history (see `moved_with_run`)
        doubt = moved_with_run(assessment, first.unit, moved) if moved else None
        if doubt:
            return make(Kind.INCONCLUSIVE, assessment=assessment,
                        note=f"measured as {kind.value} relative to its run, but {doubt}")
    return make(kind, assessment=assessment, note=assessment.reason)


def _contention(results: Sequence[Result]) -> str | None:
    return next((reason for r in results if (reason := contention_reason(r))), None)


def not_confirmed(second: Verdict) -> str:
    """Why a regression the re-run did not confirm is inconclusive: what the re-run read, and
    its own verdict's reason when it gave one."""
    read = change_reading(second.assessment)
    note = second.note or (second.assessment.reason if second.assessment else None)
    return ("not confirmed by the re-run" + (f": it read {read}" if read else "")
            + (f" ({second.kind.value}: {note})" if note else ""))


def recorded_loops(results: Sequence[Result]) -> set[int]:
    return {r.extra["loops"] for r in results
            if isinstance(r.extra.get("loops"), int) and not isinstance(r.extra["loops"], bool)}


def loops_difference(base: Sequence[Result], head: Sequence[Result]) -> str | None:
    """Calls per sample differ between the sides: each side timed a different loop, an
    environment change. None when they agree or a side did not record them."""
    before, after = recorded_loops(base), recorded_loops(head)
    if not before or not after or before == after:
        return None
    shown = [", ".join(str(n) for n in sorted(side)) for side in (before, after)]
    return f"calls per sample differ (base {shown[0]}, head {shown[1]})"


def _maker(key: str, result: Result, base_status: str | None, head_status: str | None):
    def make(kind: Kind, **fields: Any) -> Verdict:
        return Verdict(key, result.suite, result.name, dict(result.params), result.metric,
                       result.unit, result.direction, kind, base_status=base_status,
                       head_status=head_status, **fields)

    return make


def confirm_regressions(comparison: Comparison, rerun: Sequence[Run],
                        policy: RulePolicy = DEFAULT_POLICY,
                        rerun_base: Sequence[Run] = ()) -> Comparison:
    """Re-judge each regression on fresh head runs of only the flagged benchmarks: against
    the same reference runs, the fresh runs alone (a replication: a fluke does not repeat);
    or, when the re-run measured the base too, as A/B mode does, with the fresh rounds added
    to the first ones, side by side (rounds alone cannot teach their noise).

    A regression the re-run confirms keeps its verdict with `confirmed=True`; one the re-run
    does not confirm becomes inconclusive with `confirmed=False`. Other verdicts are kept.
    Untrusted re-runs confirm nothing (the verdicts stay unconfirmed, as when a re-run fails).
    """
    if comparison.untrusted_sides:
        return comparison  # nothing is alerted on, so nothing to confirm
    fresh_head, fresh_base = trusted(rerun), trusted(rerun_base)
    if not fresh_head:
        return comparison
    if fresh_base:
        again = compare_runs([*comparison.base_runs, *fresh_base],
                             [*comparison.head_runs, *fresh_head], policy=policy,
                             side_by_side=True, ignore_environment=True,
                             whole_run_apart=True)
    else:
        again = compare_runs(comparison.base_runs, fresh_head, comparison.reference_runs,
                             policy=policy, ignore_environment=True, whole_run_apart=True)
    fresh = {v.benchmark_id: v for v in again.verdicts}
    updated = []
    for verdict in comparison.verdicts:
        second = fresh.get(verdict.benchmark_id)
        if verdict.kind is not Kind.REGRESSION or second is None \
                or second.kind in (Kind.NEW, Kind.REMOVED, Kind.NEWLY_FAILING):
            updated.append(verdict)
            continue
        confirmed = second.kind is Kind.REGRESSION
        updated.append(replace(
            verdict, confirmed=confirmed,
            kind=Kind.REGRESSION if confirmed else Kind.INCONCLUSIVE,
            note=None if confirmed else not_confirmed(second)))
    return replace(comparison, verdicts=tuple(updated))
