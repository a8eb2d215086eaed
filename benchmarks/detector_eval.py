"""How often do our verdicts cry wolf, and how often do they catch a real change?

Synthetic shared-runner noise, seeded, printed:
- per-iteration samples are log-normal (CV 1%, 5%, 10%) with 2% outlier iterations
  (x1.5-3, the busy-neighbour kind); each run adds a log-normal run-to-run factor (CV 0% or
  3%); ITERATIONS samples per run; 1 or 3 runs a side; injected slowdowns of 0, 2, 5, 10, 20%;
- the rule's noise is learned from 20 base-branch history runs drawn from the same model.

Rules compared, on the same draws:
- ours: Mann-Whitney p < 0.001 and z > 3 and change >= 2% (see torch_bench.analyze.rule);
- ours with only 5 runs of history (low confidence: minimum effect 10%);
- the single-ratio rule of github-action-benchmark: the latest run's mean over the previous
  run's mean, alert at 150% and at 200%;
- a plain 5% threshold on the ratio of medians.
A "false alarm" is a regression verdict when nothing changed; "detection" a regression verdict
when something did.

Then change points: 100-point series with log-normal noise (CV 2% and 3%), with and without
spikes (3% of points x1.3-2), with no step or with a step of twice the noise at a random
index in [20, 80); a detection is a change point within +-5 points of the step, upwards.

No-change cells get --null-reps (20,000) repetitions: a false-alarm rate near the 1% target
cannot be told from 1.4% with 1,000 (the 95% interval at 1% is 0.5-1.8%); each rate is printed
with the upper end of its 95% Wilson interval in the targets.

Run:  .venv/bin/python benchmarks/detector_eval.py [--reps 1000] [--null-reps 20000]
      [--series 300]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import mannwhitneyu

from torch_bench.analyze.changepoints import find_change_points
from torch_bench.analyze.noise import robust_log_spreads
from torch_bench.analyze.rule import RulePolicy

SEED = 20261122
ITERATIONS = 100  # samples per run (the harness takes 10-200, adaptively)
HISTORY = 20
RUN_CVS = (0.0, 0.03)
ITER_CVS = (0.01, 0.05, 0.10)
RUNS_A_SIDE = (1, 3)
CHANGES = (0.0, 0.02, 0.05, 0.10, 0.20)
OUTLIER_SHARE = 0.02
POLICY = RulePolicy()


def sigma(cv: float) -> float:
    return math.sqrt(math.log1p(cv * cv))


def draw_runs(rng, reps: int, runs: int, run_cv: float, iter_cv: float, factor: float):
    """(reps, runs, ITERATIONS) samples around `factor`."""
    shape = (reps, runs, ITERATIONS)
    run_level = rng.normal(0.0, sigma(run_cv), size=(reps, runs, 1))
    logs = run_level + rng.normal(0.0, sigma(iter_cv), size=shape)
    samples = factor * np.exp(logs)
    outliers = rng.random(shape) < OUTLIER_SHARE
    return np.where(outliers, samples * rng.uniform(1.5, 3.0, size=shape), samples)


def robust_spread(per_run_medians: np.ndarray) -> np.ndarray:
    """The tool's s for each row of per-run medians (noise.robust_log_spread, vectorised)."""
    return robust_log_spreads(per_run_medians)


def our_rule(base, head, spread, min_effect):
    """Vectorised over repetitions; the same three conditions as rule.decide."""
    runs_b, runs_h = base.shape[1], head.shape[1]
    log_b = np.log(np.median(base, axis=2)).mean(axis=1)
    log_h = np.log(np.median(head, axis=2)).mean(axis=1)
    log_ratio = log_h - log_b
    p = mannwhitneyu(base.reshape(len(base), -1), head.reshape(len(head), -1), axis=1,
                     alternative="two-sided", method="asymptotic").pvalue
    z = log_ratio / (spread * math.sqrt(1 / runs_b + 1 / runs_h))
    return (p < POLICY.alpha) & (z > POLICY.z) & (log_ratio >= math.log1p(min_effect))


def single_ratio(base, head, threshold):
    return head[:, -1, :].mean(axis=1) / base[:, -1, :].mean(axis=1) > threshold


def plain_threshold(base, head, threshold=1.05):
    ratio = np.median(head.reshape(len(head), -1), axis=1) / np.median(
        base.reshape(len(base), -1), axis=1)
    return ratio > threshold


RULES = ("ours", "ours, 5 runs of history", "ratio 150%", "ratio 200%", "plain 5%")


CHUNK = 5000  # repetitions drawn at once (bounds the memory of the 20-run histories)


def evaluate_cell(rng, reps, run_cv, iter_cv, runs, change):
    """Flag rates of every rule over `reps` repetitions, drawn in chunks."""
    done, totals = 0, np.zeros(len(RULES))
    while done < reps:
        size = min(CHUNK, reps - done)
        totals += np.array(evaluate_chunk(rng, size, run_cv, iter_cv, runs, change)) * size
        done += size
    return list(totals / reps)


def evaluate_chunk(rng, reps, run_cv, iter_cv, runs, change):
    history = draw_runs(rng, reps, HISTORY, run_cv, iter_cv, 1.0)
    medians = np.median(history, axis=2)
    spread, short_spread = robust_spread(medians), robust_spread(medians[:, -5:])
    base = draw_runs(rng, reps, runs, run_cv, iter_cv, 1.0)
    head = draw_runs(rng, reps, runs, run_cv, iter_cv, 1.0 + change)
    flagged = (
        our_rule(base, head, spread, POLICY.min_effect),
        our_rule(base, head, short_spread, POLICY.low_history_min_effect),
        single_ratio(base, head, 1.5),
        single_ratio(base, head, 2.0),
        plain_threshold(base, head),
    )
    return [float(f.mean()) for f in flagged]


def comparison_table(reps: int, null_reps: int, rng) -> dict:
    rows = {}
    header = (f"{'run CV':>6} {'iter CV':>7} {'R':>2} {'change':>6}  "
              + "  ".join(f"{name:>24}" if i == 1 else f"{name:>10}"
                          for i, name in enumerate(RULES)))
    print(header)
    print("-" * len(header))
    for run_cv in RUN_CVS:
        for iter_cv in ITER_CVS:
            for runs in RUNS_A_SIDE:
                for change in CHANGES:
                    rates = evaluate_cell(rng, null_reps if change == 0 else reps,
                                          run_cv, iter_cv, runs, change)
                    rows[run_cv, iter_cv, runs, change] = rates
                    shown = "  ".join(f"{r:>24.1%}" if i == 1 else f"{r:>10.1%}"
                                      for i, r in enumerate(rates))
                    print(f"{run_cv:>6.0%} {iter_cv:>7.0%} {runs:>2} {change:>6.0%}  {shown}",
                          flush=True)
    return rows


def wilson_upper(rate: float, n: int, z: float = 1.96) -> float:
    """Upper end of the 95% Wilson score interval of a rate measured over n trials."""
    centre = rate + z * z / (2 * n)
    spread = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def check_targets(rows: dict, reps: int, null_reps: int) -> None:
    print("\nTargets (ours):")
    false = max(rates[0] for key, rates in rows.items() if key[3] == 0.0)
    worst = max((k for k in rows if k[3] == 0.0), key=lambda k: rows[k][0])
    verdict(f"false alarms <= 1% in every noise cell: worst {false:.1%} at run CV "
            f"{worst[0]:.0%}, iter CV {worst[1]:.0%}, R={worst[2]} ({null_reps} repetitions; "
            f"95% interval up to {wilson_upper(false, null_reps):.2%})",
            false <= 0.01)
    five = min(rows[0.0, cv, 3, 0.05][0] for cv in ITER_CVS)
    verdict(f"detects 5% changes >= 95% (run CV 0%, R=3): worst {five:.1%} "
            f"({', '.join(f'{rows[0.0, cv, 3, 0.05][0]:.1%}' for cv in ITER_CVS)} "
            f"at iter CV 1/5/10%; {reps} repetitions)", five >= 0.95)
    ten = min(rows[0.03, cv, 3, 0.10][0] for cv in ITER_CVS)
    verdict(f"detects 10% changes >= 60% (run CV 3%, R=3): worst {ten:.1%} "
            f"({', '.join(f'{rows[0.03, cv, 3, 0.10][0]:.1%}' for cv in ITER_CVS)} "
            "at iter CV 1/5/10%)", ten >= 0.60)


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
    parser.add_argument("--reps", type=int, default=1000, help="repetitions per cell")
    parser.add_argument("--null-reps", type=int, default=20000,
                        help="repetitions per no-change cell (false alarms)")
    parser.add_argument("--series", type=int, default=300, help="series per change-point cell")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"seed {args.seed}; {ITERATIONS} iterations per run; {HISTORY} runs of history; "
          f"{args.reps} repetitions per cell, {args.null_reps} per no-change cell; "
          f"outliers {OUTLIER_SHARE:.0%} of iterations\n")
    rows = comparison_table(args.reps, args.null_reps, rng)
    check_targets(rows, args.reps, args.null_reps)
    series_table(args.series, rng)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
