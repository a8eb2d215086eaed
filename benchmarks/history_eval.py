"""Verdicts on histories as real base branches have them: past steps, an outlier run, drift, a
noisier head, thin history. Seeded simulations judged by the production code path
(`analyze.verdicts.compare_runs`), against a test that knows the history's features.

A PR is 12 benchmarks (`--size`), H runs of base-branch history and one head run, every run 3
worker processes of 10 samples, drawn as `detector_eval.py` draws its normal fleet (a shared
and a per-benchmark run offset at a run CV of 2% or 5%, process offsets, iteration noise of
2-10%). On top of that, one feature a fleet:
- step: benchmark 0 stepped by +-15% between three and eight runs back (at most H - 3);
- step, quarter: a quarter of the suite (benchmark 0 among them) stepped likewise, each
  benchmark its own sign, at one run (one merged change);
- outlier run: one run of the history 30-40% slower, every benchmark alike;
- outlier run, uneven: the same, each benchmark feeling 0.7-1.3x of it;
- noisy head: the head run's samples twice as noisy inside as history's (a busy runner);
- drift: the whole suite +0.5% a run; drift, quarter: a quarter of it (benchmark 0 among them);
- thin: 3 or 4 runs of history (the cells' H is replaced by 3 and 4);
- normal: none (the reference).

The known-model test ("oracle") knows each feature exactly: it takes the step, the outlier
and the trend out of the history (and the trend out of the head) before it computes its
statistic x_j: the head's ln(median) minus the corrected history's mean, minus the same for
the mean of the other benchmarks (the shared offset). Its variance var_j is measured on
`ORACLE_NULL` unchanged PRs of the cell (the suite's constants are drawn once a cell, so the
variance is the benchmark's own), which is where the noisier head enters. For a slowdown
delta it flags x_j > c var_j / delta + delta / 2 (Neyman-Pearson for a normal statistic of
known variance), c set so that the largest score of an unchanged PR passes it in the same
share of PRs as the rule's unchanged PRs named a regression (at least 5%): the test held to
the rule's per-PR rate. The whole-suite oracle does the same with the mean of the
benchmarks' corrected differences, at the rate the rule's whole-run test is held to
(`RulePolicy.whole_run_level`, 1%), as `detector_eval.py`'s whole-suite table does; ours is
the whole run called slower.

Columns per cell: per-benchmark false regressions (unchanged benchmarks of every PR), unchanged
PRs naming a regression (the whole run's included), a 10% slowdown of benchmark 0 found by us
and by the oracle, their ratio (efficiency), and a whole-suite +10% slowdown found by us (any
regression or the whole run called slower) and by its oracle.

Run:  nice .venv/bin/python benchmarks/history_eval.py [--reps 60] [--null-reps 100]
      [--fleets step,outlier] [--histories 5,10,20] [--run-cvs 0.02,0.05] [--size 12]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent))

from detector_eval import (  # noqa: E402  (the sibling script)
    MODELS,
    POLICY,
    Suite,
    documents,
    draw_samples,
    new_suite,
    run_ln_medians,
    wilson_upper,
)
from torch_bench.analyze.rule import Outcome  # noqa: E402
from torch_bench.analyze.verdicts import Kind, compare_runs  # noqa: E402

SEED = 20261129
NORMAL = MODELS[0]
STEP = math.log(1.15)
OUTLIER = (math.log(1.30), math.log(1.40))
DRIFT = math.log(1.005)  # a run
CHANGE = 0.10
ORACLE_NULL = 2000  # unchanged PRs that calibrate the oracle, each cell (--oracle-null)
FLEETS = ("normal", "step", "step-quarter", "outlier", "outlier-uneven", "noisy-head",
          "drift", "drift-quarter", "thin")


@dataclass(frozen=True)
class Features:
    """What the history and the head carry beyond the normal fleet, in log space: (runs, m)
    added to the run offsets, and the head's extra iteration noise factor."""

    history: np.ndarray
    head: np.ndarray
    head_noise: float = 1.0


def quarter(m: int) -> np.ndarray:
    return np.arange(max(1, m // 4))


def draw_features(rng, fleet: str, history: int, m: int) -> Features:
    past, now = np.zeros((history, m)), np.zeros((1, m))
    if fleet in ("step", "step-quarter"):
        back = int(rng.integers(3, max(3, min(8, history - 3)) + 1))
        hit = quarter(m) if fleet == "step-quarter" else np.array([0])
        size = STEP * rng.choice([-1.0, 1.0], size=hit.size)
        past[history - back:, hit] += size  # the newest `back` runs and the head
        now[:, hit] += size
    if fleet in ("outlier", "outlier-uneven"):
        at = int(rng.integers(0, history))
        size = rng.uniform(*OUTLIER)
        feel = rng.uniform(0.7, 1.3, m) if fleet == "outlier-uneven" else np.ones(m)
        past[at] += size * feel
    if fleet in ("drift", "drift-quarter"):
        hit = quarter(m) if fleet == "drift-quarter" else np.arange(m)
        ramp = DRIFT * np.arange(history + 1, dtype=float)
        past[:, hit] += ramp[:history, None]
        now[:, hit] += ramp[history:, None]
    return Features(past, now, 2.0 if fleet == "noisy-head" else 1.0)


def noisier(suite: Suite, factor: float) -> Suite:
    return Suite(suite.medians, suite.scales, suite.iter_cvs * factor)


def draw_pr(rng, suite: Suite, fleet: str, history: int, run_cv: float,
            factors: np.ndarray):
    """(history samples, head samples, features) of one PR."""
    m = suite.medians.size
    features = draw_features(rng, fleet, history, m)
    offsets = NORMAL.offsets(rng, history + 1, m, run_cv, suite.scales)
    past = draw_samples(rng, suite, offsets[:history] + features.history, NORMAL, np.ones(m))
    head_suite = noisier(suite, features.head_noise) if features.head_noise != 1 else suite
    now = draw_samples(rng, head_suite, offsets[history:] + features.head, NORMAL, factors)
    return past, now, features


def oracle_differences(past: np.ndarray, now: np.ndarray, features: Features) -> np.ndarray:
    """Each benchmark's head ln(median) minus its history's mean, the features taken out."""
    clean_past = run_ln_medians(past) - features.history
    clean_now = run_ln_medians(now) - features.head
    return clean_now.mean(axis=0) - clean_past.mean(axis=0)


def relative(d: np.ndarray) -> np.ndarray:
    """Each benchmark's difference less the mean of the others' (the shared offset)."""
    m = d.shape[-1]
    return d - (d.sum(axis=-1, keepdims=True) - d) / (m - 1)


def scores(x: np.ndarray, variances: np.ndarray, delta: float) -> np.ndarray:
    return (x - delta / 2) * delta / variances


@dataclass
class Oracle:
    variances: np.ndarray  # var of each benchmark's relative statistic, unchanged PRs
    null_max_scores: np.ndarray  # each unchanged PR's largest score at delta
    whole_variance: float
    whole_mean: float
    whole_null: np.ndarray  # the whole-suite statistic of unchanged PRs

    def flags_changed(self, x: np.ndarray, delta: float, rate: float) -> bool:
        threshold = float(np.quantile(self.null_max_scores, 1 - rate))
        return bool(scores(x, self.variances, delta)[0] > threshold)

    def whole_found(self, mean_d: float, rate: float) -> bool:
        return mean_d > float(np.quantile(self.whole_null, 1 - rate))


def calibrate_oracle(rng, suite: Suite, fleet: str, history_of, run_cv: float,
                     draws: int = ORACLE_NULL) -> Oracle:
    m = suite.medians.size
    rel, whole = [], []
    for _ in range(draws):
        past, now, features = draw_pr(rng, suite, fleet, history_of(rng), run_cv, np.ones(m))
        d = oracle_differences(past, now, features)
        rel.append(relative(d))
        whole.append(d.mean())
    rel_a, whole_a = np.array(rel), np.array(whole)
    variances = rel_a.var(axis=0)
    delta = math.log1p(CHANGE)
    null_max = scores(rel_a, variances[None, :], delta).max(axis=1)
    return Oracle(variances, null_max, float(whole_a.var()), float(whole_a.mean()), whole_a)


@dataclass
class Verdict:
    regressions: set[int]
    whole_slower: bool

    @property
    def fails(self) -> bool:
        return self.whole_slower or bool(self.regressions)


def judge(past: np.ndarray, now: np.ndarray) -> Verdict:
    m = past.shape[1]
    names = [f"b{j:04d}" for j in range(m)]
    history = documents(past, names, 0, "main")
    head = documents(now, names, past.shape[0], "pr")
    comparison = compare_runs(history[-1:], head, history, policy=POLICY)
    found = {int(v.name[1:]) for v in comparison.verdicts if v.kind is Kind.REGRESSION}
    slower = comparison.run_shift is not None and comparison.run_shift.outcome is Outcome.WORSE
    return Verdict(found, slower)


@dataclass
class Cell:
    fleet: str
    history: str
    run_cv: float
    false_per_benchmark: float
    false_per_benchmark_n: int
    prs_failing: float
    null_prs: int
    found: float
    oracle_found: float
    whole_found: float
    whole_oracle: float


def evaluate(rng, fleet: str, histories: tuple[int, ...], run_cv: float, m: int, reps: int,
             null_reps: int, oracle_null: int = ORACLE_NULL) -> Cell:
    suite = new_suite(rng, m)

    def history_of(r) -> int:
        return int(r.choice(histories))

    oracle = calibrate_oracle(rng, suite, fleet, history_of, run_cv, oracle_null)
    unchanged = flagged = failing = 0
    for _ in range(null_reps):
        past, now, _ = draw_pr(rng, suite, fleet, history_of(rng), run_cv, np.ones(m))
        v = judge(past, now)
        unchanged += m
        flagged += len(v.regressions)
        failing += v.fails
    rate = max(failing / null_reps, 0.05)
    delta = math.log1p(CHANGE)
    ours = best = 0
    for _ in range(reps):
        factors = np.ones(m)
        factors[0] = 1 + CHANGE
        past, now, features = draw_pr(rng, suite, fleet, history_of(rng), run_cv, factors)
        v = judge(past, now)
        unchanged += m - 1
        flagged += len(v.regressions - {0})
        ours += 0 in v.regressions
        best += oracle.flags_changed(relative(oracle_differences(past, now, features)),
                                     delta, rate)
    whole_ours = whole_best = 0
    whole_reps = reps // 2
    for _ in range(whole_reps):
        factors = np.full(m, 1 + CHANGE)
        past, now, features = draw_pr(rng, suite, fleet, history_of(rng), run_cv, factors)
        whole_ours += judge(past, now).whole_slower
        whole_best += oracle.whole_found(float(oracle_differences(past, now, features).mean()),
                                         POLICY.whole_run_level)
    whole_reps = max(whole_reps, 1)
    label = "/".join(str(h) for h in histories)
    return Cell(fleet, label, run_cv, flagged / unchanged, unchanged, failing / null_reps,
                null_reps, ours / max(reps, 1), best / max(reps, 1), whole_ours / whole_reps,
                whole_best / whole_reps)


def efficiency(ours: float, best: float) -> str:
    return f"{ours / best:.2f}" if best > 0 else "-"


def print_cell(c: Cell) -> None:
    upper = wilson_upper(c.false_per_benchmark, c.false_per_benchmark_n)
    print(f"| {c.fleet} | {c.history} | {c.run_cv:.0%} | {c.false_per_benchmark:.2%} "
          f"(<= {upper:.2%}) | {c.prs_failing:.1%} | {c.found:.0%} / {c.oracle_found:.0%} "
          f"| {efficiency(c.found, c.oracle_found)} | {c.whole_found:.0%} / {c.whole_oracle:.0%} "
          f"| {efficiency(c.whole_found, c.whole_oracle)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=60, help="PRs with a 10%% slowdown a cell")
    parser.add_argument("--null-reps", type=int, default=100, help="unchanged PRs a cell")
    parser.add_argument("--fleets", default=",".join(FLEETS))
    parser.add_argument("--histories", default="5,10,20")
    parser.add_argument("--run-cvs", default="0.02,0.05")
    parser.add_argument("--size", type=int, default=12)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--oracle-null", type=int, default=ORACLE_NULL,
                        help="unchanged PRs that calibrate the oracle, each cell")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    histories = [int(h) for h in args.histories.split(",")]
    started = time.perf_counter()
    print("| fleet | H | run CV | false per benchmark (upper 95%) | unchanged PRs failing "
          "| 10% of one found: ours / oracle | efficiency | whole suite +10%: ours / oracle "
          "| efficiency |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fleet in args.fleets.split(","):
        if fleet not in FLEETS:
            parser.error(f"--fleets: unknown fleet {fleet!r} (known: {', '.join(FLEETS)})")
        cells = [(3, 4)] if fleet == "thin" else [(h,) for h in histories]
        for history in cells:
            for run_cv in (float(c) for c in args.run_cvs.split(",")):
                print_cell(evaluate(rng, fleet, history, run_cv, args.size, args.reps,
                                    args.null_reps, args.oracle_null))
    print(f"\n{time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
