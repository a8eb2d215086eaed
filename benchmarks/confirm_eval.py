"""Targeted confirmation on simulated A/B rounds: how often it confirms a regression that is
not there, how often it confirms one that is, and how many rounds each costs.

    python benchmarks/confirm_eval.py [--prs 300] [--noise 0.04,0.08] [--seed 1]

Each PR: 4 benchmarks flagged as regressions (+10%) on a first look against a quiet history,
then `analyze.confirm.confirm` (the production path) measures A/B rounds until each is settled
or the budget is spent: 30 s a round, a 600 s budget (the Action's default), so 20 rounds.
Each round measures base and head once; a benchmark's per-run median moves by `noise` (log
sd) from round to round, on either side. The benchmarks' code is really 1.00x (the first look
was a fluke) or 1.10x slower. Printed per noise and truth: the share of benchmarks that end a
regression, cleared (unchanged) or unsettled, and the mean rounds the PR measured.

`--whole-run`: the head's run was called slower as a whole instead (all 12 timings read 20%
slower, or 10% when the truth is 1.10), nothing else flagged; the code of every benchmark is
really 1.00x (the head run was a burst) or 1.10x slower. Each round's run on either side
moves as a whole by `noise` and each timing by half that on its own. Printed: the share of
PRs whose whole run ends confirmed, cleared or not settled, and the mean rounds. With
`--real 0.3`, two benchmarks' code is also that much slower, on the first look and in the
rounds: they are re-measured for themselves, and the share of them ending a regression is
printed too.
"""

from __future__ import annotations

import argparse
import math
import re
import time

import numpy as np

from torch_bench.analyze.confirm import DEFAULT_BUDGET_S, confirm
from torch_bench.analyze.rule import Outcome, RulePolicy
from torch_bench.analyze.verdicts import Kind, compare_runs
from torch_bench.results.schema import measured, new_run

FLAGGED = {f"b{i}": 10.0 + i for i in range(4)}
QUIET = {f"q{i}": 5.0 + i for i in range(8)}  # the rest of the suite, unchanged
ENV = {"torch": "2.13.0", "python": "3.11", "cpu_model": "sim", "fingerprint": "sim"}
SECONDS_PER_ROUND, BUDGET = 30.0, DEFAULT_BUDGET_S


def run(levels: dict[str, float], rng, tag: str, day: int, within: float = 0.01):
    results = [measured("sim", name, "latency",
                        [float(v) for v in m * np.exp(rng.normal(0, within, 10))])
               for name, m in levels.items()]
    return new_run(results, created_at=f"2026-01-{1 + day // 24:02d}T{day % 24:02d}:00:00Z",
                   run_id=f"{tag}-{day}", git={"sha": "a" * 40, "branch": "main"},
                   env=dict(ENV), ci={"provider": "local"})


def first_look(rng):
    """A head whose 4 flagged benchmarks read 10% slower than 12 quiet runs of history."""
    every = {**FLAGGED, **QUIET}
    history = [run({n: m * float(np.exp(rng.normal(0, 0.01))) for n, m in every.items()},
                   rng, "hist", i) for i in range(12)]
    head = run({n: m * (1.10 if n in FLAGGED else 1.0) for n, m in every.items()}, rng,
               "head", 100)
    first = compare_runs(history[-1:], [head], history)
    assert {v.name for v in first.of_kind(Kind.REGRESSION)} == set(FLAGGED), "not flagged"
    return first


class Rounds:
    def __init__(self, rng, truth: float, noise: float):
        self.rng, self.truth, self.noise, self.now, self.count = rng, truth, noise, 0.0, 0

    def clock(self) -> float:
        return self.now

    def __call__(self, index: int, only: str):
        self.now += SECONDS_PER_ROUND
        self.count += 1
        chosen = {n: m for n, m in FLAGGED.items() if re.fullmatch(only, f"sim/{n}")}

        def side(factor, tag):
            return run({n: m * factor * float(np.exp(self.rng.normal(0, self.noise)))
                        for n, m in chosen.items()}, self.rng, tag, 200 + index)

        return side(1.0, "base"), side(self.truth, "ab-head")


REALLY_SLOWER = ("b0", "b1")  # with --real: their code is slower too


def first_whole_look(rng, factor: float, real: float = 0.0):
    """A head whose every timing reads `factor` x its 12 quiet runs of history, and
    `REALLY_SLOWER` 1 + `real` times that."""
    every = {**FLAGGED, **QUIET}
    history = [run({n: m * float(np.exp(rng.normal(0, 0.01))) for n, m in every.items()},
                   rng, "hist", i) for i in range(12)]
    head = run({n: m * factor * (1 + real if n in REALLY_SLOWER else 1.0)
                for n, m in every.items()}, rng, "head", 100)
    first = compare_runs(history[-1:], [head], history)
    assert first.run_shift.outcome is Outcome.WORSE, "whole run not flagged"
    return first


class WholeRounds(Rounds):
    """Rounds of any of the suite's benchmarks, each side's run moving as a whole."""

    def __init__(self, rng, truth: float, noise: float, real: float = 0.0):
        super().__init__(rng, truth, noise)
        self.real = real

    def __call__(self, index: int, only: str):
        self.now += SECONDS_PER_ROUND
        self.count += 1
        chosen = {n: m for n, m in {**FLAGGED, **QUIET}.items()
                  if re.fullmatch(only, f"sim/{n}")}

        def side(factor, tag):
            state = float(np.exp(self.rng.normal(0, self.noise)))
            return run({n: m * factor(n) * state
                        * float(np.exp(self.rng.normal(0, self.noise / 2)))
                        for n, m in chosen.items()}, self.rng, tag, 200 + index)

        return side(lambda n: 1.0, "base"), side(
            lambda n: self.truth * (1 + self.real if n in REALLY_SLOWER else 1.0), "ab-head")


def whole_run_table(options) -> None:
    print(f"{options.prs} PRs per cell, the whole run flagged; {SECONDS_PER_ROUND:g} s a round, "
          f"budget {BUDGET:g} s")
    print(f"{'noise':>6} {'truth':>6} {'confirmed':>10} {'cleared':>8} {'unsettled':>10} "
          f"{'rounds':>7}" + (f" {'real ones found':>16}" if options.real else ""))
    for noise in (float(x) for x in options.noise.split(",")):
        for truth in (float(x) for x in options.truths.split(",")):
            rng = np.random.default_rng([options.seed, int(noise * 1e4), int(truth * 1e4), 7])
            said: list[str] = []
            rounds = []
            found = []
            for _ in range(options.prs):
                first = first_whole_look(rng, 1.20 if math.isclose(truth, 1.0) else truth,
                                         options.real)
                measurer = WholeRounds(rng, truth, noise, options.real)
                after = confirm(first, measurer, BUDGET, RulePolicy(), clock=measurer.clock)
                rounds.append(measurer.count)
                said.append(after.extra["confirmation"].whole_run)
                found += [v.kind is Kind.REGRESSION for v in after.verdicts
                          if v.name in REALLY_SLOWER]
            # the first look flagged every run here, so "found" and "let go" (leaning runs) never
            # come up
            share = {k: said.count(k) / len(said) for k in ("confirmed", "cleared", "not settled")}
            print(f"{noise:6.0%} {truth:6.2f} {share['confirmed']:10.1%} {share['cleared']:8.1%} "
                  f"{share['not settled']:10.1%} {np.mean(rounds):7.1f}"
                  + (f" {np.mean(found):16.1%}" if options.real else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--noise", default="0.04,0.08")
    parser.add_argument("--truths", default="1.0,1.1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--whole-run", action="store_true",
                        help="the whole run flagged, not 4 benchmarks (see above)")
    parser.add_argument("--real", type=float, default=0.0,
                        help="with --whole-run: two benchmarks really this much slower")
    options = parser.parse_args()
    started = time.monotonic()
    if options.whole_run:
        whole_run_table(options)
        print(f"{time.monotonic() - started:.0f} s")
        return
    print(f"{options.prs} PRs x {len(FLAGGED)} flagged benchmarks per cell; "
          f"{SECONDS_PER_ROUND:g} s a round, budget {BUDGET:g} s")
    print(f"{'noise':>6} {'truth':>6} {'regression':>11} {'cleared':>8} {'unsettled':>10} "
          f"{'rounds':>7}")
    for noise in (float(x) for x in options.noise.split(",")):
        for truth in (float(x) for x in options.truths.split(",")):
            rng = np.random.default_rng([options.seed, int(noise * 1e4), int(truth * 1e4)])
            kinds: list[str] = []
            rounds = []
            for _ in range(options.prs):
                first = first_look(rng)
                measurer = Rounds(rng, truth, noise)
                after = confirm(first, measurer, BUDGET, RulePolicy(), clock=measurer.clock)
                rounds.append(measurer.count)
                for v in after.verdicts:
                    if v.name in FLAGGED:
                        kinds.append("regression" if v.kind is Kind.REGRESSION else
                                     "cleared" if v.kind is Kind.UNCHANGED else "unsettled")
            n = len(kinds)
            share = {k: kinds.count(k) / n for k in ("regression", "cleared", "unsettled")}
            print(f"{noise:6.0%} {truth:6.2f} {share['regression']:11.1%} "
                  f"{share['cleared']:8.1%} {share['unsettled']:10.1%} "
                  f"{np.mean(rounds):7.1f}", flush=True)
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
