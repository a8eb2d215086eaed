"""How often do our verdicts cry wolf, and how often do they catch a real change?

Synthetic fleet noise, seeded, printed. One benchmark per draw, each run's per-iteration
samples log-normal (CV 3% or 10%, ITERATIONS per run, 2% outlier iterations x1.5-3, the
busy-neighbour kind) around a run-level offset drawn from one of these models (run CV 2% or
5%, the offset's standard deviation in log space):
- normal;
- heavy-tailed: Student-t with 3 or 5 degrees of freedom, scaled to the run CV;
- bimodal: a share of runs (10% or 30%) lands on a host 5% or 10% slower, on top of normal;
- drift: a random walk whose steps are 25% or 50% of the run CV, on top of normal.
The series is history (H runs), then the base's R runs, then the head's R runs; H in
0, 1, 2, 3, 5, 10, 20 (the shorter histories are the newest runs of the longest), R in 1, 3.
The offsets are per benchmark: no run-level shift shared across a suite is removed here,
the conservative case (a shared offset would be taken out by the run-level shift).

The rule is the tool's (torch_bench.analyze.rule, vectorised; tests/test_detector_eval.py
checks that they agree): inconclusive below `min_history` runs, a Student-t threshold with
H - 1 degrees of freedom, the tail-aware spread. "previous" is the rule before them: the
MAD-only spread, z > 3 whatever H, a 10% minimum effect under 10 runs, and no noise
condition at all under 3 runs.

A "false alarm" is a regression verdict when nothing changed (--null-reps draws per cell, so
that the upper end of the 95% Wilson interval of a 1% rate is below 1.5%); "detection" a
regression verdict for a 5%, 10% or 20% slowdown (--reps draws).

Then the earlier targets (normal offsets, 100 iterations, 20 runs of history, R = 3) and
change points on 100-point series (see `series_table`).

Run:  nice .venv/bin/python benchmarks/detector_eval.py [--reps 400] [--null-reps 3000]
      [--series 300]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import mannwhitneyu

from torch_bench.analyze.changepoints import find_change_points
from torch_bench.analyze.noise import robust_log_spreads, tail_aware_spreads
from torch_bench.analyze.rule import RulePolicy, t_threshold

SEED = 20261122
ITERATIONS = 50  # samples per run (the harness takes 10-200, adaptively)
HISTORIES = (0, 1, 2, 3, 5, 10, 20)
RUN_CVS = (0.02, 0.05)
ITER_CVS = (0.03, 0.10)
RUNS_A_SIDE = (1, 3)
CHANGES = (0.05, 0.10, 0.20)
OUTLIER_SHARE = 0.02
POLICY = RulePolicy()
TARGET, TARGET_UPPER = 0.01, 0.015


def sigma(cv: float) -> float:
    return math.sqrt(math.log1p(cv * cv))


@dataclass(frozen=True)
class OffsetModel:
    """Run-level offsets (log space) of a series of runs of one benchmark."""

    name: str
    kind: str  # normal, t, bimodal, drift
    a: float = 0.0  # t: degrees of freedom; bimodal: share of slow runs; drift: step / run sd
    b: float = 0.0  # bimodal: how much slower the slow host is

    def draw(self, rng, reps: int, runs: int, run_cv: float) -> np.ndarray:
        s = sigma(run_cv)
        if self.kind == "t":
            return rng.standard_t(self.a, size=(reps, runs)) * s * math.sqrt((self.a - 2) / self.a)
        base = rng.normal(0.0, s, size=(reps, runs))
        if self.kind == "bimodal":
            return base + (rng.random((reps, runs)) < self.a) * math.log1p(self.b)
        if self.kind == "drift":
            return base + np.cumsum(rng.normal(0.0, self.a * s, size=(reps, runs)), axis=1)
        return base


MODELS = (
    OffsetModel("normal", "normal"),
    OffsetModel("t, 5 df", "t", 5),
    OffsetModel("t, 3 df", "t", 3),
    OffsetModel("10% on a host 5% slower", "bimodal", 0.10, 0.05),
    OffsetModel("10% on a host 10% slower", "bimodal", 0.10, 0.10),
    OffsetModel("30% on a host 10% slower", "bimodal", 0.30, 0.10),
    OffsetModel("drift, steps 25% of run CV", "drift", 0.25),
    OffsetModel("drift, steps 50% of run CV", "drift", 0.50),
)


def draw_samples(rng, offsets: np.ndarray, iter_cv: float, factor: float = 1.0,
                 iterations: int = ITERATIONS) -> np.ndarray:
    """(reps, runs, iterations) samples around `factor` x exp(offset) of each run."""
    shape = (*offsets.shape, iterations)
    logs = offsets[..., np.newaxis] + rng.normal(0.0, sigma(iter_cv), size=shape)
    samples = factor * np.exp(logs)
    outliers = rng.random(shape) < OUTLIER_SHARE
    return np.where(outliers, samples * rng.uniform(1.5, 3.0, size=shape), samples)


def mann_whitney(base: np.ndarray, head: np.ndarray) -> np.ndarray:
    return mannwhitneyu(base.reshape(len(base), -1), head.reshape(len(head), -1), axis=1,
                        alternative="two-sided", method="asymptotic").pvalue


def log_ratio(base: np.ndarray, head: np.ndarray) -> np.ndarray:
    """ln(head / base) of the geometric means of the per-run medians."""
    return (np.log(np.median(head, axis=2)).mean(axis=1)
            - np.log(np.median(base, axis=2)).mean(axis=1))


def our_rule(base, head, history_medians, p=None, policy: RulePolicy = POLICY):
    """The tool's regression verdict, vectorised over repetitions (rows); `history_medians`
    (reps, H) per-run medians, oldest first. One process per run, no run-level shift."""
    runs_b, runs_h = base.shape[1], head.shape[1]
    history = history_medians.shape[1]
    if history < max(policy.min_history, 3):
        return np.zeros(len(base), dtype=bool)
    ratio = log_ratio(base, head)
    p = mann_whitney(base, head) if p is None else p
    spread = tail_aware_spreads(history_medians)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = ratio / (spread * math.sqrt(1 / runs_b + 1 / runs_h))
    return ((p < policy.alpha) & (z > t_threshold(policy.z, history - 1))
            & (ratio >= math.log1p(policy.min_effect)))


def previous_rule(base, head, history_medians, p):
    """The rule before: MAD spread, z > 3, 10% under 10 runs, no noise condition under 3."""
    history = history_medians.shape[1]
    ratio = log_ratio(base, head)
    effect = 0.02 if history >= 10 else 0.10
    flagged = (p < 0.001) & (ratio >= math.log1p(effect))
    if history < 3:
        return flagged
    spread = robust_log_spreads(history_medians)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = ratio / (spread * math.sqrt(1 / base.shape[1] + 1 / head.shape[1]))
    return flagged & (z > 3.0)


CHUNK = 2000  # repetitions drawn at once (bounds memory)


def evaluate(rng, model: OffsetModel, run_cv, iter_cv, runs, change, reps):
    """Per history length: (our flag rate, previous rule's flag rate)."""
    flags = {h: np.zeros(2) for h in HISTORIES}
    done = 0
    longest = max(HISTORIES)
    while done < reps:
        size = min(CHUNK, reps - done)
        offsets = model.draw(rng, size, longest + 2 * runs, run_cv)
        history = np.median(draw_samples(rng, offsets[:, :longest], iter_cv), axis=2)
        base = draw_samples(rng, offsets[:, longest:longest + runs], iter_cv)
        head = draw_samples(rng, offsets[:, longest + runs:], iter_cv, 1.0 + change)
        p = mann_whitney(base, head)
        for h in HISTORIES:
            medians = history[:, longest - h:]
            flags[h] += [our_rule(base, head, medians, p).sum(),
                         previous_rule(base, head, medians, p).sum()]
        done += size
    return {h: flags[h] / reps for h in HISTORIES}


def wilson_upper(rate: float, n: int, z: float = 1.96) -> float:
    """Upper end of the 95% Wilson score interval of a rate measured over n trials."""
    centre = rate + z * z / (2 * n)
    spread = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def fleet_table(rng, reps: int, null_reps: int) -> dict:
    rows = {}
    print(f"{'offsets':<27} {'run':>4} {'iter':>4} {'R':>1} {'H':>2}  {'false':>6} {'<=':>6}"
          f"  {'5%':>6} {'10%':>6} {'20%':>6}  {'previous: false':>15} {'10%':>6}")
    for model in MODELS:
        for run_cv in RUN_CVS:
            for iter_cv in ITER_CVS:
                for runs in RUNS_A_SIDE:
                    null = evaluate(rng, model, run_cv, iter_cv, runs, 0.0, null_reps)
                    hits = {c: evaluate(rng, model, run_cv, iter_cv, runs, c, reps)
                            for c in CHANGES}
                    for h in HISTORIES:
                        false, old_false = null[h]
                        found = [hits[c][h][0] for c in CHANGES]
                        rows[model.name, run_cv, iter_cv, runs, h] = (false, found,
                                                                      old_false, hits[0.10][h][1])
                        print(f"{model.name:<27} {run_cv:>4.0%} {iter_cv:>4.0%} {runs:>1} {h:>2}"
                              f"  {false:>6.2%} {wilson_upper(false, null_reps):>6.2%}  "
                              + " ".join(f"{f:>6.1%}" for f in found)
                              + f"  {old_false:>15.2%} {hits[0.10][h][1]:>6.1%}", flush=True)
    return rows


def summarise(rows: dict, null_reps: int) -> None:
    print("\nBy history length (worst false alarms over every model and noise level; "
          "detection: median over cells):")
    print(f"{'H':>2}  {'false':>6} {'<=':>6}  {'det 5%':>6} {'10%':>6} {'20%':>6}  "
          f"{'previous: false':>15}")
    for h in HISTORIES:
        cells = [v for k, v in rows.items() if k[4] == h]
        worst = max(c[0] for c in cells)
        found = [float(np.median([c[1][i] for c in cells])) for i in range(len(CHANGES))]
        print(f"{h:>2}  {worst:>6.2%} {wilson_upper(worst, null_reps):>6.2%}  "
              + " ".join(f"{f:>6.1%}" for f in found)
              + f"  {max(c[2] for c in cells):>15.2%}")
    worst_key = max(rows, key=lambda k: rows[k][0])
    worst = rows[worst_key][0]
    upper = wilson_upper(worst, null_reps)
    print("\nTargets (fleet):")
    verdict(f"false alarms <= {TARGET:.0%} in every cell: worst {worst:.2%} at {worst_key} "
            f"({null_reps} repetitions)", worst <= TARGET)
    verdict(f"upper 95% bound <= {TARGET_UPPER:.1%}: {upper:.2%}", upper <= TARGET_UPPER)


def legacy_targets(rng, reps: int) -> None:
    """The earlier targets: normal offsets, 100 iterations, 20 runs of history, R = 3."""
    print("\nTargets (earlier; normal offsets, 100 iterations, 20 runs of history, R=3):")
    found = {}
    for run_cv, change in ((0.0, 0.05), (0.03, 0.10)):
        for iter_cv in (0.01, 0.05, 0.10):
            offsets = rng.normal(0.0, sigma(run_cv), size=(reps, 26))
            history = np.median(draw_samples(rng, offsets[:, :20], iter_cv, iterations=100),
                                axis=2)
            base = draw_samples(rng, offsets[:, 20:23], iter_cv, iterations=100)
            head = draw_samples(rng, offsets[:, 23:], iter_cv, 1 + change, iterations=100)
            found[run_cv, iter_cv] = float(our_rule(base, head, history).mean())
    five = [found[0.0, cv] for cv in (0.01, 0.05, 0.10)]
    ten = [found[0.03, cv] for cv in (0.01, 0.05, 0.10)]
    verdict(f"detects 5% changes >= 95% (run CV 0%): worst {min(five):.1%} "
            f"({', '.join(f'{f:.1%}' for f in five)} at iter CV 1/5/10%; {reps} repetitions)",
            min(five) >= 0.95)
    verdict(f"detects 10% changes >= 60% (run CV 3%): worst {min(ten):.1%} "
            f"({', '.join(f'{f:.1%}' for f in ten)} at iter CV 1/5/10%)", min(ten) >= 0.60)


def verdict(text: str, met: bool) -> None:
    print(f"  [{'met' if met else 'MISSED'}] {text}")


def draw_series(rng, noise_cv, step, spikes):
    n = 100
    values = np.exp(rng.normal(0.0, sigma(noise_cv), n))
    at = int(rng.integers(20, 80))
    if step:
        values[at:] *= 1.0 + step
    if spikes:
        hit = rng.random(n) < 0.03
        values = np.where(hit, values * rng.uniform(1.3, 2.0, n), values)
    return values, at


def series_table(count: int, rng) -> list[tuple]:
    print(f"\nChange points: {count} series of 100 points per cell")
    print(f"{'noise CV':>8} {'spikes':>6}  {'false change point':>18}  {'step 2x noise found':>19}")
    found = []
    for noise_cv in (0.02, 0.03):
        for spikes in (False, True):
            false = sum(bool(find_change_points(draw_series(rng, noise_cv, 0.0, spikes)[0]))
                        for _ in range(count)) / count
            hits = 0
            for _ in range(count):
                values, at = draw_series(rng, noise_cv, 2 * noise_cv, spikes)
                hits += any(abs(cp.index - at) <= 5 and cp.ratio > 1
                            for cp in find_change_points(values))
            found.append((noise_cv, spikes, false, hits / count))
            print(f"{noise_cv:>8.0%} {str(spikes):>6}  {false:>18.1%}  {hits / count:>19.1%}",
                  flush=True)
    print("\nTargets (change points):")
    for noise_cv, spikes, false, hit in found:
        limit = 0.05 if spikes else 0.02
        verdict(f"noise {noise_cv:.0%}, spikes {spikes}: false change points {false:.1%} "
                f"<= {limit:.0%}", false <= limit)
        verdict(f"noise {noise_cv:.0%}, spikes {spikes}: steps of 2x noise found {hit:.1%} "
                ">= 90%", hit >= 0.90)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="repetitions per change cell")
    parser.add_argument("--null-reps", type=int, default=3000,
                        help="repetitions per no-change cell (false alarms)")
    parser.add_argument("--series", type=int, default=300, help="series per change-point cell")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"seed {args.seed}; {ITERATIONS} iterations per run; min_history "
          f"{POLICY.min_history}; {args.reps} repetitions per change cell, {args.null_reps} "
          f"per no-change cell; outliers {OUTLIER_SHARE:.0%} of iterations\n")
    rows = fleet_table(rng, args.reps, args.null_reps)
    summarise(rows, args.null_reps)
    legacy_targets(rng, max(args.reps, 1000))
    series_table(args.series, rng)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
