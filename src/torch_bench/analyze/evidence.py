"""From run documents to what the rule weighs: each benchmark's evidence and the run shifts.

The reference runs are the base branch's runs up to and including the baseline (oldest
first; the base runs are among them), the newest `HISTORY_WINDOW`, or in A/B mode the base
rounds. For each benchmark, with timings taken relative to their run's shift
(`shift.run_shifts`):
- history is cut at its change points (`changepoints.find_change_points_many`, searched for
  the whole suite in one batch) whose step is clear of the noise (`clear_steps`), the noise
  of runs that remember the previous one read at the level's scale (`series_memory`); the
  baseline level is the mean of the newest segment, the one the base runs are in;
- the variance is pooled within every segment and within the head's runs.
The run shifts are one series, too short to show whether runs remember the previous one;
that memory is read from the newest segments of the timings as measured, before the shift
is taken out (the machine's state is what they share), as the rule reads it
(`null_shape.suite_autocorrelation`, the upper end of its range), for the whole run's test.
Pure: runs in, evidence out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.analyze.changepoints import ChangePoint, find_change_points_many, noise_scale
from torch_bench.analyze.groups import Evidence, evidence_from_groups, median_sampling_variance
from torch_bench.analyze.null_shape import mean_variance_factor, suite_autocorrelation, white_share
from torch_bench.analyze.shift import SHIFTED_UNITS, run_shifts, shift_scale
from torch_bench.analyze.speed_scaling import NO_SCALING, SpeedScaling, speed_scaling
from torch_bench.analyze.student_t import t_isf
from torch_bench.results.schema import Result, Run

HISTORY_WINDOW = 20  # the newest reference runs that define the level and the noise


def run_log_medians(run: Run, scaling: SpeedScaling = NO_SCALING) -> dict[str, float]:
    """ln(per-run median) of each successful result of `run`; for the benchmarks `scaling`
    scales, of the median sample / speed reference instead (`speed_scaling`)."""
    found: dict[str, float] = {}
    for result in run.results:
        if result.ok and result.summary is not None and result.summary.median > 0 \
                and math.isfinite(result.summary.median) \
                and result.benchmark_id not in found:
            scaled = scaling.log_median(result)
            found[result.benchmark_id] = scaled if scaled is not None \
                else math.log(result.summary.median)
    return found


def log_table(runs: Sequence[Run], keys: Sequence[str],
              scaling: SpeedScaling = NO_SCALING) -> np.ndarray:
    """Rows: runs; columns: `keys`; ln(per-run median), NaN where a run lacks one."""
    table = np.full((len(runs), len(keys)), np.nan)
    column = {key: j for j, key in enumerate(keys)}
    for i, run in enumerate(runs):
        for key, value in run_log_medians(run, scaling).items():
            if key in column:
                table[i, column[key]] = value
    return table


def reference_runs(base: Sequence[Run], history: Sequence[Run],
                   window: int = HISTORY_WINDOW) -> list[Run]:
    """History and base runs together, each once, oldest first, the newest `window`, never
    past the newest base run."""
    seen: dict[str, Run] = {run.run_id: run for run in history}
    seen.update({run.run_id: run for run in base})
    runs = sorted(seen.values(), key=lambda r: (r.created_at, r.run_id))
    if base:
        newest = max(run.created_at for run in base)
        runs = [run for run in runs if run.created_at <= newest]
    return runs[-window:] if window > 0 else []


@dataclass(frozen=True)
class SuiteEvidence:
    evidence: dict[str, Evidence]  # per benchmark with enough reference runs
    reference_counts: dict[str, int]  # reference runs of each benchmark
    levels: dict[str, tuple[float, float]]  # (baseline level, head level) as measured
    shifts: dict[str, float]  # the head's shift each timing was judged relative to
    reference_shifts: list[float]  # the run-level shifts of the reference runs
    head_shifts: list[float]
    shifted_benchmarks: int  # timings the shifts were taken over (0: no shift)
    unseen_state: frozenset[str] = frozenset()  # a head's speed reference beyond history's
    shift_memory: float = 0.0  # the runs' memory, as the whole run's shift is judged with it
    set_aside: tuple[str, ...] = ()  # reference runs set aside as outliers (`outlier_runs`)


def head_sampling_variances(head: Sequence[Run], keys: Sequence[str],
                            scaling: SpeedScaling = NO_SCALING) -> dict[str, float]:
    """Per benchmark, the mean over the head runs of their medians' sampling variance (of
    sample / speed reference for the benchmarks `scaling` scales)."""
    wanted = set(keys)
    found: dict[str, list[float]] = {}
    for run in head:
        for result in run.results:
            if result.benchmark_id in wanted and result.ok and result.samples:
                found.setdefault(result.benchmark_id, []).append(
                    median_sampling_variance(scaling.samples(result)))
    return {key: float(np.mean(values)) for key, values in found.items()}


def _timing_columns(keys: Sequence[str], first: Mapping[str, Result]) -> np.ndarray:
    return np.array([first[key].unit in SHIFTED_UNITS for key in keys], dtype=bool)


STEP_T = 4.5  # a step of history must be this many standard errors of its two levels to cut


def clear_steps(logs: np.ndarray, found: Sequence[ChangePoint], memory: float = 0.0) -> list[int]:
    """The indexes of the change points whose step is clear of the noise: at least `STEP_T`
    standard errors of the difference between the medians of the segments on either side of
    it. A cut where the noise alone put one would make the variance within the pieces too
    small (the search picks its cuts where they shrink it); a real step left uncut reads as
    memory and inflates every variance. The standard error counts the segments' lengths, so
    a step of the size merged changes make is cut once a few runs show it on either side. The
    noise is read from point-to-point differences; runs whose lag-1 autocorrelation is
    `memory` differ from their neighbours by less than from the level (by sqrt(1 - memory)),
    and the mean of a segment of them varies more than that of independent runs
    (`null_shape.mean_variance_factor`): both are counted, so that runs that wander are not
    cut. With 20 normal runs (and 10) about 2% of series get a cut; a 15% step three to eight
    runs back at run CV 2% is cut in 96% of series of 10 runs (99.8% of 20), at 5% in a third
    to a half (the search finds no more)."""
    if not found:
        return []
    noise = noise_scale(logs) / math.sqrt(max(1.0 - memory, 0.05))
    bounds = [0, *(p.index for p in found), logs.size]
    cut = []
    for k, point in enumerate(found):
        before, after = bounds[k + 1] - bounds[k], bounds[k + 2] - bounds[k + 1]
        error = noise * math.sqrt(mean_variance_factor(memory, before) / before
                                  + mean_variance_factor(memory, after) / after)
        if abs(math.log(point.ratio)) >= STEP_T * error:
            cut.append(point.index)
    return cut


def series_memory(series: Sequence[np.ndarray], heads: Sequence[np.ndarray],
                  within: Sequence[float]) -> list[float]:
    """Each series' lag-1 autocorrelation as the suite's uncut history shows it: the suite's
    AR(1) rho at the upper end of its range (`null_shape.suite_autocorrelation`, as the rule
    reads it, but robust: each series weighs the same and the quarters of the suite that
    remember most and least are set aside, so that the steps of a few benchmarks, uncut yet,
    do not read as the whole suite's memory) times the share of the series' variance that is
    not its median's own sampling noise (which remembers nothing); all 0 in a suite without
    memory."""
    whole = [evidence_from_groups(s, h, (), False, w) if s.size and h.size else None
             for s, h, w in zip(series, heads, within, strict=True)]
    rho = round(suite_autocorrelation([e for e in whole if e is not None], errors=1.0,
                                      robust=True), 3)
    if rho <= 0:
        return [0.0] * len(series)
    return [0.0 if e is None else rho * (1.0 - white_share(e, rho)) for e in whole]


OUTLIER_LEVEL = 0.005  # chance that a window of unchanged, normal runs has one set aside
MAX_SET_ASIDE = 0.1  # at most this share of the reference runs (more are the fleet's nature)


def outlier_runs(shifts: np.ndarray) -> list[int]:
    """The reference runs whose run-level shift is an outlier, by Grubbs' test made one run at
    a time: the run farthest from the others' median, against the mean and spread of the
    others (externally studentized, Student's t with their degrees of freedom, at
    `OUTLIER_LEVEL` over the window), at most `MAX_SET_ASIDE` of the runs (one at least, of
    five or more). None when one more beyond those is as far: runs that come in bursts are
    the fleet's nature, which the variance must show. One run 30-40% slower in a window of 20
    made the whole run's test blind (a real whole-suite slowdown of 10% never called) and,
    felt unevenly, every benchmark's variance. With few runs the spread of the others is
    itself uncertain, and only a run far beyond it is set aside (with 5 runs about 14 of the
    others' spreads, with 10 about 6, with 20 about 5)."""
    finite = np.flatnonzero(np.isfinite(shifts))
    if finite.size < 5:
        return []
    n = finite.size
    threshold = OUTLIER_LEVEL / (2 * n)
    remaining = list(finite)
    aside: list[int] = []
    allowed = max(1, int(MAX_SET_ASIDE * n))
    while len(remaining) > 3:
        values = shifts[remaining]
        far = int(np.argmax(np.abs(values - np.median(values))))
        others = np.delete(values, far)
        spread = float(others.std(ddof=1))
        if not spread > 0:
            break
        t = abs(values[far] - float(others.mean())) / (spread * math.sqrt(1 + 1 / others.size))
        if t <= t_isf(threshold, others.size - 1):
            break
        if len(aside) == allowed:
            return []
        aside.append(int(remaining.pop(far)))
    return sorted(aside)


def _segments(values: np.ndarray, starts: Sequence[int]) -> list[np.ndarray]:
    bounds = [0, *starts, values.size]
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def gather(reference: Sequence[Run], head: Sequence[Run], keys: Sequence[str],
           first: Mapping[str, Result], *, min_history: int,
           side_by_side: bool = False, set_aside: tuple[str, ...] = ()) -> SuiteEvidence:
    """The evidence of each of `keys` (benchmark ids successful on both sides; `first` holds a
    result of each, for its unit). A reference run whose run-level shift is an outlier
    (`outlier_runs`) is set aside, for every benchmark, and named in `set_aside`."""
    scaling = speed_scaling(reference, head, keys, seen_states_only=not side_by_side)
    within = head_sampling_variances(head, keys, scaling)
    reference_within = head_sampling_variances(reference, keys, scaling)
    ref_logs, head_logs = log_table(reference, keys, scaling), log_table(head, keys, scaling)
    timing = _timing_columns(keys, first)
    ref_shift = np.zeros(len(reference))
    head_shift = np.zeros(len(head))
    shifted = 0
    if timing.sum() and len(reference):
        with np.errstate(all="ignore"):
            centre = np.nanmean(ref_logs[:, timing], axis=0)
        scale = shift_scale(ref_logs[:, timing], centre)
        rs = run_shifts(ref_logs[:, timing], centre, scale)
        hs = run_shifts(head_logs[:, timing], centre, scale)
        aside = [] if side_by_side or set_aside else outlier_runs(rs)
        if aside:
            kept = [run for i, run in enumerate(reference) if i not in aside]
            return gather(kept, head, keys, first, min_history=min_history,
                          set_aside=tuple(reference[i].run_id for i in aside))
        if np.isfinite(hs).all() and np.isfinite(rs).any():
            ref_shift, head_shift = np.nan_to_num(rs), hs
            shifted = int(np.isfinite(ref_logs[:, timing]).any(axis=0).sum())
    # A/B rounds are interleaved: their sides share the machine's state, and a shift taken
    # out of each would absorb a change that most of the suite shares.
    taken = np.where(timing, 0.0 if side_by_side else 1.0, 0.0)[np.newaxis, :]
    ref_res = ref_logs - taken * ref_shift[:, np.newaxis]
    head_res = head_logs - taken * head_shift[:, np.newaxis]
    series = [ref_res[np.isfinite(ref_res[:, j]), j] for j in range(len(keys))]
    heads = [head_res[np.isfinite(head_res[:, j]), j] for j in range(len(keys))]
    starts = [[] for _ in keys] if side_by_side else \
        [clear_steps(s, found, memory) for s, found, memory in zip(
            series, find_change_points_many([np.exp(s) for s in series]),
            series_memory(series, heads, [within.get(key, 0.0) for key in keys]), strict=True)]
    evidence, counts, levels, shifts = {}, {}, {}, {}
    as_measured = []
    for j, key in enumerate(keys):
        raw_head = head_logs[np.isfinite(head_logs[:, j]), j]
        pieces = _segments(series[j], starts[j])
        newest = pieces[-1] if pieces else np.array([])
        raw_ref = ref_logs[np.isfinite(ref_logs[:, j]), j][-newest.size:] if newest.size \
            else np.array([])
        counts[key] = int(series[j].size)
        levels[key] = (float(np.exp(raw_ref.mean())) if raw_ref.size else math.nan,
                       float(np.exp(raw_head.mean())) if raw_head.size else math.nan)
        shifts[key] = float(head_shift.mean()) \
            if timing[j] and head_shift.size and not side_by_side else 0.0
        if timing[j] and raw_ref.size and raw_head.size:
            as_measured.append(evidence_from_groups(raw_ref, raw_head, (), False,
                                                    within.get(key, 0.0)))
        if heads[j].size and newest.size and (side_by_side or series[j].size >= min_history):
            evidence[key] = evidence_from_groups(newest, heads[j], pieces[:-1], side_by_side,
                                                 within.get(key, 0.0),
                                                 reference_within.get(key, 0.0))
    memory = 0.0 if side_by_side or not shifted else \
        round(suite_autocorrelation(as_measured, errors=1.0), 3)
    return SuiteEvidence(evidence, counts, levels, shifts,
                         ref_shift.tolist() if shifted else [],
                         head_shift.tolist() if shifted else [], shifted, scaling.unseen_state,
                         memory, set_aside)
