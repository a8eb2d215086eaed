"""Bisection: which commit between a good and a bad one made the benchmarks slower.

    bisect(commits, classify, max_steps) -> Bisection

`commits` runs oldest to newest from the last good commit to the first bad one (both
included). Each step measures one candidate against the current good and bad bounds and
`classify(good, candidate, bad)` says what it is:

- GOOD: like the good bound, and the bad bound is worse than it;
- BAD: worse than the good bound, and like the bad bound;
- AMBIGUOUS: anything else (worse than both, between the two, too noisy to say);
- NO_CHANGE: the good and bad bounds measured in this step do not differ beyond noise;
- UNTRUSTED: every run of a commit was untrusted (its pre-flight check failed), so nothing
  could be called; the detail says why.

The first step also checks the endpoints (they are its bounds): when they do not differ,
there is nothing to find, "no single commit found"; when they could not be judged because
every run of one of them was untrusted, the search ends "untrusted", saying why. With no
commit in between, the first step measures the endpoints alone (`candidate` None) and BAD
means they differ.

A binary search follows: the candidate is the untried commit nearest the middle of the
bounds; GOOD moves the good bound up to it, BAD the bad bound down. An ambiguous commit is set
aside and its neighbour tried next (an untrusted step likewise); once no untried commit is
left between the bounds, the ambiguous ones are measured once more (noise rarely repeats; a
commit that is really half-way does). Noise so costs steps, never a wrong answer: when every
commit left between the bounds was ambiguous twice, the search ends "ambiguous" between the bounds.
The search ends "found" when the bounds are adjacent, and "budget" when `max_steps` steps
were measured first (the bounds then say how far it got). 16 commits (15 candidates for the
first bad one) take 4 steps when nothing is ambiguous.

`grade_step` is the A/B-grade classifier over one step's comparisons (`verdicts.Comparison`s
of interleaved rounds): which benchmarks the search follows is learnt from the endpoints
(their regressions). The candidate is at one of two levels, so a grade takes both
comparisons: GOOD needs the bad bound to be a regression against the candidate (the bad
level is rejected at the rule's false-alarm rate) and the candidate unchanged against the good
bound (the good level is not); BAD the reverse. A candidate half-way between the bounds is a
regression against the good bound and the bad bound a regression against it: ambiguous.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from torch_bench.analyze.verdicts import Comparison, Kind, Verdict

TRIES = 2  # times a commit may be measured as ambiguous before the search gives up on it


class Grade(str, Enum):
    GOOD = "good"
    BAD = "bad"
    AMBIGUOUS = "ambiguous"
    NO_CHANGE = "no change"
    UNTRUSTED = "untrusted"


class Ending(str, Enum):
    FOUND = "found"
    AMBIGUOUS = "ambiguous"
    NOT_FOUND = "not found"
    BUDGET = "budget"
    UNTRUSTED = "untrusted"


@dataclass(frozen=True)
class Judgement:
    grade: Grade
    detail: str = ""  # what the measurement said, e.g. "+310% vs good, +0.4% vs bad"
    bounds_untrusted: bool = False  # UNTRUSTED because of the bounds' runs: nothing to search


@dataclass(frozen=True)
class Step:
    number: int  # 1-based
    good: str
    candidate: str | None
    bad: str
    grade: Grade
    seconds: float
    detail: str = ""

    def to_dict(self) -> dict:
        return {"step": self.number, "good": self.good, "candidate": self.candidate,
                "bad": self.bad, "grade": self.grade.value, "seconds": round(self.seconds, 1),
                "detail": self.detail}


@dataclass(frozen=True)
class Bisection:
    ending: Ending
    good: str  # the last commit known good when the search ended
    bad: str  # the first commit known bad when it ended
    steps: tuple[Step, ...]
    commits: int  # in the range, endpoints included
    between: int  # commits strictly between `good` and `bad` at the end
    ambiguous: tuple[str, ...] = ()  # candidates measured as ambiguous
    max_steps: int = 0

    @property
    def first_bad(self) -> str | None:
        return self.bad if self.ending is Ending.FOUND else None

    def to_dict(self) -> dict:
        return {"ending": self.ending.value, "first_bad": self.first_bad, "good": self.good,
                "bad": self.bad, "commits": self.commits, "between": self.between,
                "ambiguous": list(self.ambiguous), "max_steps": self.max_steps,
                "steps": [step.to_dict() for step in self.steps]}


Classifier = Callable[[str, "str | None", str], Judgement]


def bisect(commits: Sequence[str], classify: Classifier, max_steps: int,
           clock: Callable[[], float] = time.monotonic,
           on_step: Callable[[Step], None] = lambda step: None,
           before_step: Callable[[int, str | None, int], None] = lambda n, c, left: None,
           ) -> Bisection:
    """Search `commits` (oldest first, good first, bad last); see the module docstring.
    `before_step(number, candidate, commits left between the bounds)` and `on_step(step)`
    report progress."""
    if len(commits) < 2:
        raise ValueError("a bisection needs a good and a bad commit")
    low, high = 0, len(commits) - 1
    unclear: Counter[int] = Counter()  # index -> times measured as ambiguous
    steps: list[Step] = []

    def ended(ending: Ending) -> Bisection:
        return Bisection(ending, commits[low], commits[high], tuple(steps), len(commits),
                         high - low - 1, tuple(commits[i] for i in sorted(unclear)), max_steps)

    while True:
        left = [i for i in range(low + 1, high) if unclear[i] < TRIES]
        if steps and not left:
            return ended(Ending.FOUND if high - low == 1 else Ending.AMBIGUOUS)
        if len(steps) >= max_steps:
            return ended(Ending.BUDGET)
        middle = (low + high) / 2
        pick = min(left, key=lambda i: (unclear[i], abs(i - middle), i)) if left else None
        candidate = commits[pick] if pick is not None else None
        before_step(len(steps) + 1, candidate, high - low - 1)
        started = clock()
        judged = classify(commits[low], candidate, commits[high])
        step = Step(len(steps) + 1, commits[low], candidate, commits[high], judged.grade,
                    clock() - started, judged.detail)
        steps.append(step)
        on_step(step)
        if judged.grade is Grade.NO_CHANGE and len(steps) == 1:
            return ended(Ending.NOT_FOUND)
        if judged.grade is Grade.UNTRUSTED and judged.bounds_untrusted and len(steps) == 1:
            return ended(Ending.UNTRUSTED)
        if pick is None:  # the endpoints alone, adjacent
            return ended(Ending.FOUND if judged.grade is Grade.BAD else Ending.AMBIGUOUS)
        if judged.grade is Grade.GOOD:
            low = pick
        elif judged.grade is Grade.BAD:
            high = pick
        else:
            unclear[pick] += 1


def targets(endpoints: Comparison) -> dict[str, Verdict]:
    """The benchmarks the search follows: those the bad endpoint regressed on."""
    return {v.benchmark_id: v for v in endpoints.of_kind(Kind.REGRESSION)}


def percent(verdict: Verdict | None) -> str:
    a = verdict.assessment if verdict else None
    return f"{(a.relative_ratio - 1) * 100:+.1f}%" if a else "n/a"


def grade_step(followed: Mapping[str, Verdict], vs_good: Comparison,
               vs_bad: Comparison) -> Judgement:
    """The candidate's grade from its rounds against the good bound (`vs_good`: base good,
    head candidate) and the bad bound (`vs_bad`: base candidate, head bad), over the
    benchmarks `followed` (their verdicts between the endpoints). Every followed benchmark
    must say the same for GOOD or BAD."""
    if not followed:
        return Judgement(Grade.NO_CHANGE, "no benchmark regressed between the endpoints")
    why = untrusted_reason([(vs_good, "good", "candidate"), (vs_bad, "candidate", "bad")])
    if why:
        return Judgement(Grade.UNTRUSTED, why)
    good_side = {v.benchmark_id: v for v in vs_good.verdicts}
    bad_side = {v.benchmark_id: v for v in vs_bad.verdicts}
    grades, details = set(), []
    for key, endpoint in sorted(followed.items()):
        to_good, to_bad = good_side.get(key), bad_side.get(key)
        grades.add(_grade_one(to_good, to_bad))
        details.append(f"{endpoint.suite}/{endpoint.name}: {percent(to_good)} vs good, "
                       f"bad {percent(to_bad)} vs it")
    grade = grades.pop() if len(grades) == 1 else Grade.AMBIGUOUS
    return Judgement(grade, "; ".join(details))


def _grade_one(to_good: Verdict | None, to_bad: Verdict | None) -> Grade:
    def same(verdict: Verdict | None) -> bool:
        return verdict is not None and verdict.kind is Kind.UNCHANGED

    def slower(verdict: Verdict | None) -> bool:
        return verdict is not None and verdict.kind is Kind.REGRESSION

    if same(to_good) and slower(to_bad):
        return Grade.GOOD
    if slower(to_good) and same(to_bad):
        return Grade.BAD
    return Grade.AMBIGUOUS


def grade_endpoints(endpoints: Comparison) -> Judgement:
    """The endpoints alone: BAD when the bad one regressed, else NO_CHANGE."""
    found = targets(endpoints)
    why = untrusted_reason([(endpoints, "good", "bad")])
    if not found and why:
        return Judgement(Grade.UNTRUSTED, why, bounds_untrusted=True)
    if not found:
        return Judgement(Grade.NO_CHANGE, "no benchmark regressed between the endpoints")
    return Judgement(Grade.BAD, "; ".join(f"{v.suite}/{v.name}: {percent(v)}"
                                          for _, v in sorted(found.items())))


def untrusted_reason(compared: Sequence[tuple[Comparison, str, str]]) -> str:
    """Why a step's comparisons could call nothing: which commits' runs were all untrusted,
    and what their pre-flight check said; "" when none were. `compared`: each comparison
    with what its base and its head are ("good", "candidate", "bad")."""
    said: dict[str, str] = {}
    for comparison, base, head in compared:
        for side in comparison.untrusted_sides:
            commit, runs = (base, comparison.base_runs) if side == "base" \
                else (head, comparison.head_runs)
            said.setdefault(commit, preflight_failure(runs))
    return "; ".join(f"every run of the {commit} commit was untrusted: {why}"
                     for commit, why in said.items())


def preflight_failure(runs: Sequence) -> str:
    """The failed pre-flight findings of `runs` (the first run's that has any), in one line."""
    for run in runs:
        found = [f.get("message") for f in (run.env.get("preflight") or {}).get("findings", [])
                 if isinstance(f, dict) and f.get("severity") == "fail" and f.get("message")]
        if found:
            return "; ".join(str(message) for message in found)
    return "its pre-flight check failed"
