"""Targeted confirmation: more measurement where a verdict is ambiguous or flagged.

A single head run against history is one shot. The benchmarks whose verdict would alert
(regression, improvement), could not be given (inconclusive: significant alone but not
across the suite, a head whose own samples show contention, too little history) or leans
toward a change the noise hid (`leaning`) are measured again, base and head interleaved in
A/B rounds, and only they: round after round, until each is settled or the time budget is
spent. This is how a tool can beat any single-shot test: more data where the answer is not
clear yet.

After each round from the second on, the rounds so far are judged side by side
(`verdicts.compare_runs(side_by_side=True)`), each benchmark at the per-benchmark rate or,
with more than a few targets, at the benchmarks' share of the per-PR level split among them
(`target_policy`), each look at its own level
(`sequential.look_levels`: looking after every round does not raise the false-alarm rate, and
the last looks are judged near the plain rate) over the rounds the budget holds at the first
round's pace, at most `max_rounds`, counted before the first look. A benchmark is settled when
the rounds call it a regression or an improvement; a flagged or inconclusive one also when
they could have seen a change half the size first measured (their resolution is at most
max(minimum effect, |first change| / 2)) and saw none. A leaning benchmark is settled only
when called (rounds that could merely have seen its first change may still read most of it),
and let go when more rounds are not worth their time (`futile`, from a quarter of the
planned rounds on): should the change be what the rounds read so far, the rounds the budget
holds would call it less than `FUTILITY` of the time. A flagged or inconclusive one is let
go the same way only when the rounds the budget holds could not clear it either
(`out_of_reach`): with many targets, each judged at a small share of the per-PR level, they
seldom can, and measuring on only spent the budget. Rounds stop when every benchmark is
settled or let go, after the rounds the budget holds, or when the next round would pass the
budget.

What is settled replaces the first verdict (`confirmed` says whether it agreed); a flagged
benchmark the rounds did not settle (or let go) becomes inconclusive, a leaning one (let go
or not settled) stays unchanged, with what the rounds read in its note.

A whole run called slower or faster than history's run-level shifts allow is re-measured too:
a head run that was a burst (a neighbour on the runner, a slower moment of the host) moves as
a whole, and no single-run test tells that from a change of the code. So is a whole run that
leans (`leaning_shift`): within those shifts, yet moved at least the minimum effect and a
third of what the test could have seen; with a few runs of history the run-level shifts'
spread is known to a few degrees of freedom, and a real slowdown of the whole suite mostly
reads that way. Beside the targets the rounds then measure `SHIFT_WITNESSES` witnesses, the
cheapest timings that are not targets (those moved away from their run; they top the
witnesses up to `MIN_BENCHMARKS` in a small suite), the same every round until the shift is
settled. The rounds' shift over the witnesses alone is judged side by side at the same looks'
levels and settled as a benchmark is: a flagged run when called again, or cleared by rounds
that could have seen half the first move; a leaning one only when called (it is then
flagged, found by the rounds), and let go as a leaning benchmark is. Confirmed or found, the
whole run is flagged; cleared, read the other way, let go, or not settled within the budget,
it is not (the report says which and why).

Pure but for `measure_round`, the callable that measures one round (`analyze.ab.run_round`
in the tool).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

from torch_bench.analyze import sequential
from torch_bench.analyze.reading import change_reading
from torch_bench.analyze.rule import Assessment, Outcome, RulePolicy, growth
from torch_bench.analyze.shift import MIN_BENCHMARKS, SHIFTED_UNITS, RunShift
from torch_bench.analyze.verdicts import (
    UNTRUSTED_NOTE,
    Comparison,
    Kind,
    Verdict,
    compare_runs,
)
from torch_bench.results.schema import Run

TARGET_KINDS = (Kind.REGRESSION, Kind.IMPROVEMENT, Kind.INCONCLUSIVE)
MIN_ROUNDS = 2  # rounds judge their own noise from two on (one mean per side)
MAX_ROUNDS = 20  # the most rounds a confirmation plans for
DEFAULT_BUDGET_S = 600.0  # the CLI's default (the Action's `confirm-budget` says the same)
MOST_ROUNDS = 100  # the largest plan a user may ask for (its looks' levels are computed)
SHIFT_WITNESSES = 8  # timings that re-measure the whole run's shift (at least MIN_BENCHMARKS)
ALERTS = (Outcome.WORSE, Outcome.BETTER)
FUTILITY = 0.10  # a leaning benchmark whose rounds would call it less often than this: let go
FUTILITY_FROM = 0.25  # ... asked from this share of the planned rounds on


def targets(comparison: Comparison) -> list[Verdict]:
    """The verdicts worth more measurement, measured on both sides: alerting, undecided, or
    leaning (see `leaning`)."""
    if comparison.untrusted_sides:
        return []
    return [v for v in comparison.verdicts
            if (v.kind in TARGET_KINDS or leaning(v)) and v.assessment is not None
            and not (v.note or "").startswith(UNTRUSTED_NOTE)
            and v.note != "skipped on one side"]


def leaning(verdict: Verdict) -> bool:
    """An "unchanged" that could hide a change users care about: the change seen is at least
    the minimum effect and at least a third of what the rule could have detected. On a noisy
    runner a real 10% slowdown often reads "+12%, no change beyond ±20%"; only more
    measurement tells it from noise."""
    a, size = verdict.assessment, _change_size(verdict.assessment)
    if verdict.kind is not Kind.UNCHANGED or size is None or a.detectable is None:
        return False
    return math.expm1(size) >= max(a.min_effect, a.detectable / 3)


def _change_size(assessment) -> float | None:
    """|ln ratio| of the change an assessment saw; None without a positive, finite ratio."""
    if assessment is None or not 0 < assessment.relative_ratio < math.inf:
        return None
    return abs(math.log(assessment.relative_ratio))


def leaning_shift(shift: RunShift | None, min_effect: float) -> bool:
    """A whole run within history's run-level shifts that could hide a change of the whole
    suite: it moved at least the minimum effect and at least a third of what the shift test
    could have detected. With 5 runs of history at a run CV of 5% a real 10% slowdown of every
    timing reads "+10%, within the run-level shifts seen in history" more often than not."""
    if shift is None or shift.outcome in ALERTS or shift.detectable is None:
        return False
    return math.expm1(abs(shift.shift)) >= max(min_effect, shift.detectable / 3)


def shift_witnesses(comparison: Comparison, chosen: Sequence[Verdict]) -> list[Verdict]:
    """When the whole run was called slower or faster, or leans (`leaning_shift`): the
    timings that re-measure its shift, the cheapest (smallest head median) `SHIFT_WITNESSES`
    of those judged on both sides and not among `chosen`: those moved away from their run,
    and a few of them among eight would pull the shift along. Topped up with `chosen`
    timings, cheapest first, when fewer than `MIN_BENCHMARKS` are left; none when the run
    neither alerted nor leans, or the suite has fewer timings."""
    shift = comparison.run_shift
    if shift is None or comparison.untrusted_sides or not (
            shift.outcome in ALERTS or leaning_shift(shift, comparison.policy.min_effect)):
        return []

    def usable(v: Verdict) -> bool:
        return v.unit in SHIFTED_UNITS and v.assessment is not None \
            and v.kind is not Kind.NOT_COMPARABLE \
            and not (v.note or "").startswith(UNTRUSTED_NOTE)

    def cost(v: Verdict) -> float:
        return v.assessment.head_median

    own = {v.benchmark_id for v in chosen}
    found = sorted((v for v in comparison.verdicts if usable(v) and v.benchmark_id not in own),
                   key=cost)[:SHIFT_WITNESSES]
    if len(found) < MIN_BENCHMARKS:
        found += sorted(filter(usable, chosen), key=cost)[:MIN_BENCHMARKS - len(found)]
    return found if len(found) >= MIN_BENCHMARKS else []


def name_filter(verdicts: Sequence[Verdict]) -> str:
    """A `--filter` regex that selects exactly these benchmarks' suite/name."""
    names = sorted({f"{v.suite}/{v.name}" for v in verdicts})
    return "^(" + "|".join(re.escape(n) for n in names) + ")$"


def rounds_the_budget_holds(budget_s: float, first_round_s: float, max_rounds: int) -> int:
    """The rounds `budget_s` holds at the first round's pace: at least MIN_ROUNDS, at most
    `max_rounds`. The looks are counted over these, fixed before the first look."""
    if first_round_s <= 0:
        return max_rounds
    return max(MIN_ROUNDS, min(max_rounds, int(budget_s // first_round_s)))


def target_policy(policy: RulePolicy, targets: int) -> RulePolicy:
    """The policy the rounds judge each of `targets` benchmarks by: its false-alarm rate the
    per-benchmark rate, or the benchmarks' share of the per-PR level split evenly among the
    targets (Bonferroni), whichever is smaller. A target the rounds call a regression fails
    the PR, whatever its first verdict was, so an unchanged PR fails at most at the per-PR
    level however many benchmarks lean: a suite of 1,000 has about 80 targets, each judged
    at 0.05%. Up to 4 targets, the plain rate."""
    if targets <= 0:
        return policy
    return replace(policy, alpha=min(policy.alpha, policy.family_level(True) / targets))


def look_policy(policy: RulePolicy, rounds: int, planned: int) -> RulePolicy:
    """The policy of the look after `rounds` of the `planned` rounds: its false-alarm rate is
    that look's level (`sequential.look_levels`; at most the plain rate past the plan)."""
    plan = max(planned, MIN_ROUNDS)
    levels = sequential.look_levels(plan, policy.alpha, MIN_ROUNDS)
    return replace(policy, alpha=levels[min(max(rounds, MIN_ROUNDS), plan) - MIN_ROUNDS])


def settled(first: Verdict, now: Verdict | None) -> bool:
    if now is None or now.assessment is None:
        return False
    if now.kind in (Kind.REGRESSION, Kind.IMPROVEMENT):
        return True
    # a leaning "unchanged" stays one unless called: rounds that could have seen its first
    # change may still read most of it (+11% with ±12% on a real +10%), and only `futile`
    # tells that from rounds reading nothing
    if first.kind is Kind.UNCHANGED or now.kind is not Kind.UNCHANGED \
            or now.assessment.detectable is None or first.assessment is None:
        return False
    return now.assessment.detectable <= clearing_resolution(first)


def clearing_resolution(first: Verdict) -> float:
    """The resolution rounds need to clear a flagged or undecided verdict: half the change
    first measured, and at least the minimum effect."""
    first_change = _change_size(first.assessment) or 0.0
    return max(first.assessment.min_effect, math.expm1(first_change / 2))


def futile(first: Verdict, now: Verdict | None, rounds: int, planned: int,
           policy: RulePolicy) -> bool:
    """A target not worth more rounds: were its change what the rounds read so far, the
    rounds the budget holds would call it (either way: at the last look's level and at least
    the minimum effect) less than `FUTILITY` of the time (`sequential.conditional_power`),
    and, for a flagged or undecided one, could not clear it either (`out_of_reach`). Asked
    only from `FUTILITY_FROM` of the planned rounds on: the first rounds' t, read as a z,
    knows its noise too poorly. An unchanged benchmark reads about nothing and is let go
    then; a real change of the size that made it a target reads far above that and is kept;
    a real change below the minimum effect, which the rounds will never call, is let go too.
    A flagged or undecided target the rounds can clear is measured until they do."""
    if now is None or now.assessment is None:
        return False
    a = now.assessment
    if not futile_reading(a.z, _change_size(a), a.min_effect, rounds, planned, policy):
        return False
    return first.kind is Kind.UNCHANGED or out_of_reach(first, a, rounds, planned, policy)


def out_of_reach(first: Verdict, now: Assessment, rounds: int, planned: int,
                 policy: RulePolicy) -> bool:
    """Clearing a flagged or undecided target is out of the budget's reach: with the noise the
    rounds show so far, the rounds the budget holds would still not resolve half its first
    change (`clearing_resolution`). Judged with many targets, each at a small share of the
    per-PR level, the last look's resolution is often several times the first change."""
    if first.assessment is None or now.detectable is None or now.threshold is None \
            or not 0 < now.threshold < math.inf:
        return False
    # the scale now, or more: the resolution is never below the minimum effect
    scale = math.log1p(now.detectable) / now.threshold
    final = growth(last_look_z(policy, planned) * scale * math.sqrt(rounds / planned))
    return final > clearing_resolution(first)


def last_look_z(policy: RulePolicy, planned: int) -> float:
    """The normal z of the last planned look's level (`look_policy`)."""
    return NormalDist().inv_cdf(1 - look_policy(policy, planned, planned).alpha)


def futile_reading(z: float | None, size: float | None, min_effect: float, rounds: int,
                   planned: int, policy: RulePolicy) -> bool:
    """`futile` on what the rounds read so far: their statistic `z` and |ln ratio| `size`."""
    if z is None or math.isnan(z) or size is None \
            or rounds >= planned or rounds < max(MIN_ROUNDS + 1, FUTILITY_FROM * planned):
        return False
    smallest = math.log1p(min_effect)
    if math.isinf(z):  # a constant series: called as soon as it reaches the minimum effect
        return size < smallest
    fraction = rounds / planned
    final_z = last_look_z(policy, planned)
    z = abs(z)
    if z > 0:  # the last look's scale is this look's times sqrt(fraction)
        final_z = max(final_z, smallest / (size / z * math.sqrt(fraction)))
    return sequential.conditional_power(z, fraction, final_z) < FUTILITY


def shift_settled(first: RunShift, now: RunShift | None, min_effect: float) -> bool:
    """The rounds' shift called the run slower or faster, or could have seen half the
    first move and saw none."""
    if now is None:
        return False
    if now.outcome in ALERTS:
        return True
    return now.detectable is not None \
        and now.detectable <= max(min_effect, math.expm1(abs(first.shift) / 2))


@dataclass(frozen=True)
class Confirmation:
    """What the rounds did, for the report."""

    rounds: int
    seconds: float
    budget: float
    benchmarks: int
    settled: int
    whole_run: str | None = None  # its shift: confirmed, cleared, found, let go or not settled
    shift_timings: int = 0  # the timings its shift was re-measured on
    let_go: int = 0  # targets whose rounds were not worth going on (`futile`)
    rate: float | None = None  # each benchmark's false-alarm rate over the rounds
    split: bool = False  # that rate is the per-PR level's share split among many targets
    documents: str | None = None  # the folder the rounds' run documents were kept in

    @property
    def unsettled(self) -> bool:
        """Whether some target (or the whole run's shift) was neither settled nor let go."""
        return self.settled + self.let_go < self.benchmarks or self.whole_run == "not settled"

    def to_dict(self) -> dict:
        return {"rounds": self.rounds, "seconds": round(self.seconds, 1),
                "budget_seconds": self.budget, "benchmarks": self.benchmarks,
                "settled": self.settled, "let_go": self.let_go, "whole_run": self.whole_run,
                "shift_timings": self.shift_timings, "rate": self.rate,
                "documents": self.documents}

    def describe(self) -> str:
        what = [f"{self.benchmarks} benchmark(s)"] if self.benchmarks else []
        if self.whole_run:
            what.append(f"the whole run's shift ({self.shift_timings} timings)")
        said = (f"{' and '.join(what)} re-measured side by side with the base over "
                f"{self.rounds} A/B round(s) ({self.seconds:.0f} s of a {self.budget:.0f} s "
                "budget)")
        if self.benchmarks:
            said += f"; {self.settled} settled"
            if self.split and self.rate is not None:
                said += (f" (each judged at {self.rate * 100:.2g}%: the per-PR level split "
                         f"among {self.benchmarks})")
        if self.let_go:
            said += f", {self.let_go} let go (more rounds would hardly have settled them)"
        return said + (f"; the whole run's shift {self.whole_run}"
                       + WHOLE_RUN_WHY.get(self.whole_run, "") if self.whole_run else "")


SETTLED_HARDLY = "more rounds within the budget could neither call nor clear it"
WHOLE_RUN_WHY = {"found": " (one head run could not call it)",
                 "let go": " (more rounds would hardly have called it)"}

RoundMeasurer = Callable[[int, str], tuple[Run, Run]]  # (round index, filter) -> (base, head)


def confirm(comparison: Comparison, measure_round: RoundMeasurer, budget_s: float,
            policy: RulePolicy, max_rounds: int = MAX_ROUNDS,
            clock: Callable[[], float] = time.monotonic,
            log: Callable[[str], None] = lambda line: None) -> Comparison:
    """Measure A/B rounds of the targets until settled or out of budget; the comparison with
    their verdicts replaced (see the module docstring)."""
    wanted = {v.benchmark_id: v for v in targets(comparison)}
    witnesses = shift_witnesses(comparison, list(wanted.values()))
    whole = _WholeRun(comparison.run_shift, witnesses) if witnesses else None
    if not (wanted or whole) or budget_s <= 0 or max_rounds < MIN_ROUNDS:
        return comparison
    planned = max_rounds
    judging = target_policy(policy, len(wanted))
    whole_run_policy = replace(policy, alpha=policy.whole_run_level)
    pending = dict(wanted)
    done: dict[str, Verdict] = {}
    let_go: dict[str, tuple[int, Verdict]] = {}  # not worth more rounds: after how many, read
    base_rounds: list[Run] = []
    head_rounds: list[Run] = []
    started = clock()
    last: dict[str, Verdict] = {}
    while (index := len(head_rounds)) < planned:  # planned: at most max_rounds
        elapsed = clock() - started
        if index and elapsed + elapsed / index > budget_s:
            log(f"confirmation: the budget ({budget_s:g} s) leaves no room for round "
                f"{index + 1}")
            break
        watching = whole is not None and whole.pending
        measuring = list(pending.values()) + (whole.witnesses if watching else [])
        log(f"confirmation round {index + 1}: {len(pending)} benchmark(s)"
            + (f", the whole run's shift on {len(witnesses)} timings" if watching else ""))
        base, head = measure_round(index, name_filter(measuring))
        base_rounds.append(base)
        head_rounds.append(head)
        if index == 0:
            planned = rounds_the_budget_holds(budget_s, clock() - started, max_rounds)
            log(f"confirmation: the budget holds {planned} rounds at this pace")
        if index + 1 < MIN_ROUNDS:
            continue
        judged = compare_runs(base_rounds, head_rounds,
                              policy=look_policy(judging, index + 1, planned),
                              side_by_side=True, ignore_environment=True,
                              whole_run_apart=True)
        last = {v.benchmark_id: v for v in judged.verdicts if v.benchmark_id in wanted}
        for key in list(pending):
            if settled(wanted[key], last.get(key)):
                done[key] = last[key]
                del pending[key]
            elif futile(wanted[key], last.get(key), index + 1, planned, judging):
                let_go[key] = (index + 1, last[key])
                del pending[key]
        if watching:  # a fresh test of a leaning run: its share of the per-PR level
            whole.look(base_rounds, head_rounds, whole_run_policy, planned)
        if not pending and not (whole is not None and whole.pending):
            break
    rounds = len(head_rounds)
    summary = Confirmation(rounds, clock() - started, budget_s, len(wanted), len(done),
                           whole.said if whole else None, len(witnesses), len(let_go),
                           judging.alpha if wanted else None, judging.alpha < policy.alpha)

    def after(v: Verdict) -> Verdict:
        key = v.benchmark_id
        read_after, latest = let_go.get(key, (rounds, last.get(key)))
        return _after(v, done.get(key), read_after, latest, let_go=key in let_go)

    verdicts = tuple(after(v) if v.benchmark_id in wanted else v for v in comparison.verdicts)
    return replace(comparison, verdicts=verdicts,
                   run_shift=whole.verdict(rounds) if whole else comparison.run_shift,
                   extra={**comparison.extra, "confirmation": summary})


def with_documents(comparison: Comparison, folder: str) -> Comparison:
    """The confirmed comparison, its summary naming where the rounds' documents are kept."""
    summary = comparison.extra.get("confirmation")
    if not isinstance(summary, Confirmation):
        return comparison
    return replace(comparison, extra={**comparison.extra,
                                      "confirmation": replace(summary, documents=folder)})


def _only(run: Run, keys: set[str]) -> Run:
    return replace(run, results=tuple(r for r in run.results if r.benchmark_id in keys))


@dataclass
class _WholeRun:
    """The whole run's shift under re-measurement, judged on its witnesses alone: the same
    timings every round, so the rounds' shifts are comparable, and none that moved away from
    the run. A flagged shift is settled as a flagged benchmark is, a leaning one as a leaning
    benchmark is (called, or let go when more rounds are not worth their time)."""

    first: RunShift
    witnesses: list[Verdict]
    now: RunShift | None = None
    settled_after: int = 0  # the rounds that settled it; 0 while pending
    let_go: bool = False

    @property
    def pending(self) -> bool:
        return not self.settled_after

    @property
    def leaning(self) -> bool:
        return self.first.outcome not in ALERTS

    def look(self, base_rounds: Sequence[Run], head_rounds: Sequence[Run],
             policy: RulePolicy, planned: int) -> None:
        keys = {v.benchmark_id for v in self.witnesses}
        rounds = len(head_rounds)
        judged = compare_runs([_only(r, keys) for r in base_rounds],
                              [_only(r, keys) for r in head_rounds],
                              policy=look_policy(policy, rounds, planned),
                              side_by_side=True, ignore_environment=True,
                              whole_run_apart=True)
        self.now = None if judged.untrusted_sides else judged.run_shift
        if not self.leaning:
            if shift_settled(self.first, self.now, policy.min_effect):
                self.settled_after = rounds
        elif self.now is not None and self.now.outcome in ALERTS:
            self.settled_after = rounds
        elif self.now is not None and futile_reading(
                self.now.z, abs(self.now.shift), policy.min_effect, rounds, planned, policy):
            self.settled_after, self.let_go = rounds, True

    @property
    def said(self) -> str:
        if self.pending:
            return "not settled"
        if self.leaning:
            return "let go" if self.let_go else "found"
        return "confirmed" if self.now.outcome is self.first.outcome else "cleared"

    def verdict(self, rounds: int) -> RunShift:
        if self.leaning:
            return _leaning_shift_after(self.first, self.now, self.settled_after or rounds,
                                        found=not self.pending and not self.let_go,
                                        let_go=self.let_go)
        return _shift_after(self.first, None if self.pending else self.now,
                            self.settled_after or rounds)


def _shift_after(first: RunShift, settled_as: RunShift | None, rounds: int) -> RunShift:
    """The whole run's verdict after `rounds`: still flagged when they called it the same
    way, not flagged otherwise, with what they read."""
    moved = "slower" if first.outcome is Outcome.WORSE else "faster"
    if settled_as is None:
        return replace(first, outcome=Outcome.UNSURE, confirmed=False,
                       reason=f"{moved} beyond history on the head's runs; {rounds} A/B "
                              "round(s) with the base did not settle it within the budget")
    read = f"{rounds} A/B rounds with the base read {(settled_as.ratio - 1) * 100:+.1f}%"
    if settled_as.outcome is first.outcome:
        return replace(first, confirmed=True, reason=f"confirmed: {read}")
    if settled_as.outcome in ALERTS:
        return replace(first, outcome=Outcome.UNSURE, confirmed=False,
                       reason=f"{read}, the other way: not flagged either way")
    if settled_as.detectable is not None:
        read += f" (no change beyond ±{settled_as.detectable * 100:.1f}%)"
    return replace(first, outcome=Outcome.UNSURE, confirmed=False,
                   reason=f"{read}: the head's runs moved, not the code")


def _leaning_shift_after(first: RunShift, latest: RunShift | None, rounds: int, found: bool,
                         let_go: bool) -> RunShift:
    """A leaning whole run after `rounds`: flagged as the rounds called it (their reading
    replaces the head run's, which history's shifts could not judge), or as it was, with what
    the rounds read."""
    head_read = (f"one head run read {(first.ratio - 1) * 100:+.1f}%, "
                 f"{first.reason or 'within the run-level shifts seen in history'}")
    if found:
        return replace(latest, history_runs=first.history_runs, found_in_rounds=rounds,
                       reason=f"found by {rounds} A/B rounds with the base; {head_read}")
    if latest is None or not 0 < latest.ratio < math.inf:
        return first
    read = f"{rounds} A/B rounds with the base read {(latest.ratio - 1) * 100:+.1f}%"
    if let_go:
        read += ", more rounds within the budget would hardly have called a move that size"
    else:
        read += (f" (could have seen ±{latest.detectable * 100:.1f}%)"
                 if latest.detectable is not None else "") + ", not settled within the budget"
    return replace(first, reason=f"{first.reason}; {read}" if first.reason else read)


def _after(first: Verdict, settled_as: Verdict | None, rounds: int,
           latest: Verdict | None, let_go: bool = False) -> Verdict:
    alerted = first.kind in (Kind.REGRESSION, Kind.IMPROVEMENT)
    if settled_as is None:
        if not alerted:
            return _unsettled_reading(first, latest, rounds, let_go)
        if let_go and latest is not None and latest.assessment is not None:
            read = (latest.assessment.relative_ratio - 1) * 100
            return replace(first, kind=Kind.INCONCLUSIVE, confirmed=False,
                           note=f"{first.kind.value} on one run; {rounds} A/B rounds read "
                                f"{read:+.1f}%, {SETTLED_HARDLY}")
        read = rounds_reading(latest)
        return replace(first, kind=Kind.INCONCLUSIVE, confirmed=False,
                       note=f"{first.kind.value} on one run; {rounds} A/B round(s) did not "
                            "settle it within the budget" + (f": they read {read}" if read
                                                             else ""))
    a = settled_as.assessment
    said = f"{rounds} A/B rounds: {(a.relative_ratio - 1) * 100:+.1f}%"
    if settled_as.kind is Kind.UNCHANGED:
        said += f", no change beyond ±{a.detectable * 100:.1f}%"
    return replace(first, kind=settled_as.kind, assessment=a,
                   confirmed=(settled_as.kind is first.kind) if alerted else None,
                   note=said)


def rounds_reading(latest: Verdict | None, level: float = 0.95) -> str:
    """What the rounds' latest look measured: the change and its `level` interval
    (`reading.change_reading`); "" without a look."""
    return change_reading(latest.assessment if latest is not None else None, level)


def _unsettled_reading(first: Verdict, latest: Verdict | None, rounds: int,
                       let_go: bool = False) -> Verdict:
    """An undecided or leaning verdict the rounds did not settle keeps its kind, with what
    the rounds read so far in its note (a leaning one let go: why)."""
    a = latest.assessment if latest is not None else None
    if a is None or not 0 < a.relative_ratio < math.inf \
            or (a.detectable is None and not let_go):
        return first
    read = f"{rounds} A/B rounds read {(a.relative_ratio - 1) * 100:+.1f}%"
    if let_go:
        # after a few strict early looks their resolution (often tens of percent) says less
        # than the futility itself, and reads as a contradiction beside it
        read += ", more rounds within the budget would hardly have called a change that size" \
            if first.kind is Kind.UNCHANGED else f", {SETTLED_HARDLY}"
    else:
        read += (f" (could have seen ±{a.detectable * 100:.1f}%), not settled within the "
                 "budget")
    return replace(first, note=f"{first.note}; {read}" if first.note else read)
