"""What could a rule that learns each benchmark's noise from its history reach at best?

`detector_eval.py`'s oracle knows each benchmark's variance. A rule has only the history's
runs to learn it from (5, 10 or 20 in its cells), and that alone costs detection, however
well the rule is calibrated. This script measures that cost on the same simulated fleets and
the same statistic as the oracle's (a benchmark's head-minus-history mean ln(median), less
the mean of the other benchmarks'), for three tests, each with its threshold calibrated by
simulation on unchanged PRs of the cell to a 1% false-alarm rate per benchmark, and no
correction for the suite's size, but for the last:

- the oracle (`detector_eval.oracle_scores` with the known variances);
- learned: the statistic over its variance learned from the history alone, each run's
  ln(median) less the other benchmarks' mean, with H - 1 degrees of freedom;
- moderated: those variances moderated across the suite as the rule moderates them
  (`moderation.fit_prior`, `Prior.moderate`), judged by the moderated t's p-value;
- moderated, per PR: the same, held to the rule's per-PR guarantee instead: its threshold is
  what the most surprising benchmark of an unchanged PR passes in 5% of PRs (a little more
  than the rule's benchmarks get, 4%, the whole run taking the rest).

So its figures bound what any rule that learns variances from history can do before it pays
for what it cannot know in advance (heavy tails, memory, bursts: calibration) and for the
per-PR control. Efficiency = the test's detection / the oracle's.

Run:  nice .venv/bin/python benchmarks/learning_ceiling.py [--null 2000] [--changed 1200]
      [--models normal,bursts]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from torch_bench.analyze.moderation import fit_prior
from torch_bench.analyze.student_t import t_sf

sys.path.append(str(Path(__file__).resolve().parent))
import detector_eval as DE  # noqa: E402  the fleets, the statistic and the oracle

RATE = 0.01  # false alarms per benchmark the tests are calibrated to
PER_PR = 0.05  # unchanged PRs naming a false regression, the last test's guarantee
M, HEAD_RUNS = 12, 1
TESTS = ("oracle", "learned", "moderated", "per PR")


def draw_prs(rng, model, run_cv: float, history: int, count: int) -> DE.SimulatedPRs:
    """`count` unchanged PRs of a cell: each run's ln(median), the oracle's statistics and
    their known variances."""
    return DE.simulated_prs(rng, model, M, run_cv, history, HEAD_RUNS, count)


def learned_variances(logs: np.ndarray, history: int):
    """From the history's runs alone, each benchmark's variance of the statistic (count, m):
    as learned on its own, and moderated across its PR's suite with its degrees of freedom."""
    past = logs[:, :history]
    residual = past - (past.sum(axis=2, keepdims=True) - past) / (M - 1)
    own = residual.var(axis=1, ddof=1)
    per_run_to_statistic = 1 / history + 1 / HEAD_RUNS
    dfs = np.full(M, history - 1.0)
    moderated, moderated_df = np.empty_like(own), np.empty_like(own)
    for i, variances in enumerate(own):
        moderated[i], moderated_df[i] = fit_prior(variances, dfs).moderate(variances, dfs)
    return own * per_run_to_statistic, moderated * per_run_to_statistic, moderated_df


def _t_surprise(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """-ln P(T > t): larger is more surprising, whatever each value's degrees of freedom."""
    flat = [-math.log(max(t_sf(float(a), float(b)), 1e-300)) for a, b in
            zip(np.ravel(t), np.ravel(np.broadcast_to(df, np.shape(t))), strict=True)]
    return np.reshape(flat, np.shape(t))


def _detection(null: np.ndarray, changed: np.ndarray) -> float:
    """The share of `changed` beyond what unchanged benchmarks' `null` pass at `RATE`."""
    return float(np.mean(changed > DE.oracle_threshold(null, RATE)))


def cell(model, run_cv: float, history: int, null_count: int, changed_count: int, seed: int):
    """{change: {test: detection}} of benchmark 0 slowed by each change, every test at 1%."""
    rng = np.random.default_rng(seed)
    null_logs, null_stats, null_known = draw_prs(rng, model, run_cv, history, null_count)
    logs, stats, known = draw_prs(rng, model, run_cv, history, changed_count)
    null_own, null_mod, null_df = learned_variances(null_logs, history)
    own, mod, df = learned_variances(logs, history)
    null_learned = null_stats / np.sqrt(null_own)
    null_moderated = _t_surprise(null_stats / np.sqrt(null_mod), null_df)
    out = {}
    for change in DE.CHANGES:
        delta = math.log1p(change)
        # slowing benchmark 0's head samples by 1 + change adds delta to its statistic and
        # leaves the history, all that the variances are learned from, as it was
        x = stats[:, 0] + delta
        surprise = _t_surprise(x / np.sqrt(mod[:, 0]), df[:, 0])
        out[change] = {
            "oracle": _detection(DE.oracle_scores(null_stats, null_known, delta),
                                 DE.oracle_scores(x, known[:, 0], delta)),
            "learned": _detection(null_learned, x / np.sqrt(own[:, 0])),
            "moderated": _detection(null_moderated, surprise),
            "per PR": float(np.mean(surprise > DE.oracle_pr_threshold(null_moderated,
                                                                       PER_PR))),
        }
    return out


def _ratio(found: float, oracle: float) -> float | None:
    return found / oracle if oracle > 0 else None


def _of_history(ratios: dict, history: int) -> list[float]:
    return [r for (_, _, h), r in ratios.items() if h == history and r is not None]


def summarise(cells: dict) -> None:
    for change in DE.CHANGES:
        for test in TESTS[1:]:
            ratios = {key: _ratio(c[change][test], c[change]["oracle"]) for key, c in cells.items()}
            known = [r for r in ratios.values() if r is not None]
            if not known:
                continue
            by_history = ", ".join(
                f"H {h}: {statistics.median(_of_history(ratios, h)):.2f}"
                for h in sorted({k[2] for k in ratios}) if _of_history(ratios, h))
            half = [r for k, r in ratios.items()
                    if r is not None and cells[k][change]["oracle"] >= 0.5]
            lowest = f", lowest where the oracle catches >= 50%: {min(half):.2f}" if half else ""
            print(f"  {change:>3.0%} {test:9s}: median efficiency {statistics.median(known):.2f} "
                  f"({by_history}){lowest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--null", type=int, default=2000, help="unchanged PRs a cell")
    parser.add_argument("--changed", type=int, default=1200,
                        help="PRs a cell whose benchmark 0 changed (the same for each change)")
    parser.add_argument("--models", default=",".join(m.kind for m in DE.MODELS))
    parser.add_argument("--seed", type=int, default=DE.SEED)
    args = parser.parse_args()
    kinds = args.models.split(",")
    models = [m for m in DE.MODELS if m.kind in kinds]
    if len(models) != len(kinds):
        parser.error(f"--models: known kinds are {', '.join(m.kind for m in DE.MODELS)}")
    start = time.perf_counter()
    print(f"seed {args.seed}; suite of {M}, {HEAD_RUNS} head run; every test at {RATE:.0%} "
          f"a benchmark; {args.null} unchanged and {args.changed} changed PRs a cell")
    print(f"{'model':18s} run   H  " + "  ".join(f"{c:>4.0%}: " + " / ".join(TESTS)
                                                 for c in DE.CHANGES))
    cells = {}
    for index, (model, run_cv, history) in enumerate(
            (m, cv, h) for m in models for cv in DE.RUN_CVS for h in DE.HISTORIES):
        found = cell(model, run_cv, history, args.null, args.changed, args.seed + index)
        cells[(model.kind, run_cv, history)] = found
        print(f"{model.name:18s} {run_cv:3.0%} {history:3d}  " + "  ".join(
            f"{found[c]['oracle']:11.0%} / " + " / ".join(f"{found[c][t]:4.0%}" for t in TESTS[1:])
            for c in DE.CHANGES), flush=True)
    print("\nEfficiency against the oracle (a test that knows each benchmark's variance):")
    summarise(cells)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
