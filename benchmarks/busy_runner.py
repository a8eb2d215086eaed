"""Measurements on a busy runner: a small suite measured K times on an idle machine and under
a CPU hog of our own, the run-to-run spread of per-run medians on the default clock and on
the wall clock, a planted slowdown judged against the loaded history, and an A/B timed.

    python benchmarks/busy_runner.py [--runs 10] [--hog N] [--max-time 0.5] [--processes 3]
        [--rounds 5] [--slow-factor 1.1] [--confirm-budget 600] [--skip-ab]
        [--keep DIR [--reuse]]

The suite: 8 small CPU benchmarks (matmul, conv, LSTM, MLP, softmax, layer norm, attention,
element-wise; each call repeats its operation 10 times, 0.2-6 ms a call), one torch thread.
The planted slowdown repeats one benchmark's operation 11 times instead of 10 (its true
ratio is measured separately, interleaved, in this process). The unchanged and the planted
head are judged against the loaded history as the Action's PR job judges them: from history
alone, then with targeted confirmation (A/B rounds of the base and head checkouts for the
flagged, undecided and leaning benchmarks, within --confirm-budget). The hog: N processes (default:
one per core) spinning on the CPU, each stopping by itself after a fixed time, and stopped
by this script at the end of each loaded phase.

Each phase's runs are also judged leave-one-out (each run an unchanged PR head against the
phase's other runs), with the speed reference and without it: false verdicts and the median
smallest detectable change.

Every run records both clocks, so one set of runs gives both spreads: `samples` (the default
clock: CPU time here) and `extra["wall_samples"]`. The "idle" phase is only as idle as the
machine is: the load average is printed beside it.

Cost: 2K runs of the suite plus two head runs, their confirmations (up to --confirm-budget
each) and, unless --skip-ab, an A/B of --rounds rounds (cases forked: about 13 s a run idle
and 16 s under the hog with 3 processes a case on 2 cores); about 16 minutes in all on an
otherwise idle machine. Run it under `nice`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from torch_bench.analyze.speed_scaling import speed_ratios
from torch_bench.analyze.verdicts import compare_runs
from torch_bench.results.document import load_run

SUITE = '''
import os
from torch_bench.measure.timer import measure
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

REPS = 10  # a call repeats its operation this many times
SLOW = {slow!r}  # benchmark -> repetitions instead of REPS (the planted slowdown)
NAMES = ("attention", "conv", "elementwise", "layernorm", "lstm", "matmul", "mlp", "softmax")


def operation(name):
    import torch

    torch.manual_seed(0)
    if name == "matmul":
        a, b = torch.randn(160, 160), torch.randn(160, 160)
        return lambda: a @ b
    if name == "conv":
        conv, x = torch.nn.Conv2d(16, 16, 3, padding=1), torch.randn(1, 16, 24, 24)
        return lambda: conv(x)
    if name == "lstm":
        lstm, x = torch.nn.LSTM(32, 48), torch.randn(8, 4, 32)
        return lambda: lstm(x)
    if name == "mlp":
        mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                  torch.nn.Linear(512, 256))
        x = torch.randn(32, 256)
        return lambda: mlp(x)
    if name == "softmax":
        x = torch.randn(64, 2048)
        return lambda: torch.softmax(x, dim=-1)
    if name == "layernorm":
        norm, x = torch.nn.LayerNorm(1024), torch.randn(64, 1024)
        return lambda: norm(x)
    if name == "attention":
        q = torch.randn(1, 4, 96, 32)
        return lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q)
    x, y = torch.randn(200_000), torch.randn(200_000)
    return lambda: x * y + x


def call(name, reps=None):
    import torch

    op, count = operation(name), reps or SLOW.get(name, REPS)

    def run():
        with torch.no_grad():
            for _ in range(count):
                op()
    return run


def plan(options, device):
    return [CaseSpec(suite="busy", name=n, params={{}}, outputs=(Output("latency"),))
            for n in NAMES]


def run_case(case, ctx):
    timing = measure(call(case.name), ctx.policy, ctx.clock(), metric="latency")
    return [measured(case.suite, case.name, "latency", timing.samples_ms, extra=timing.extra())]


SUITE = Suite(name="busy", description="small CPU benchmarks", options=(), plan=plan,
              run_case=run_case, record_memory=False)
'''
PLANTED = "lstm"  # the benchmark the head slows down


def checkout(root: Path, slow: dict[str, int]) -> Path:
    package = root / "busybench"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "suite.py").write_text(SUITE.format(slow=slow))
    return root


def spin(until: float) -> None:
    while time.time() < until:
        pass


class Hog:
    """N spinning processes, each ending by itself at `seconds` from now at the latest."""

    def __init__(self, processes: int, seconds: float) -> None:
        until = time.time() + seconds
        context = multiprocessing.get_context("spawn")
        self.procs = [context.Process(target=spin, args=(until,), daemon=True)
                      for _ in range(processes)]

    def __enter__(self) -> Hog:
        for proc in self.procs:
            proc.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.join()


def torch_bench(cwd: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_REF_NAME": "main", "PYTHONPATH": os.pathsep.join(
        [str(cwd), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "torch_bench", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"torch-bench {' '.join(map(str, args[:2]))} failed:\n{done.stderr}")
    return done


def run_args(options) -> list[str]:
    return ["--suite", "busybench.suite", "--threads", "1", "--max-time", str(options.max_time),
            "--processes", str(options.processes), "--case-start", "fork"]


def measure_runs(side: Path, count: int, options, out: Path, label: str,
                 data: Path | None = None) -> list:
    runs = []
    for k in range(count):
        path = out / f"{label}-{k:02d}.json"
        if not (options.reuse and path.exists()):
            calibration = ["--calibration", data] if data is not None else []
            torch_bench(side, "run", *run_args(options), *calibration, "--out", path)
            if data is not None:
                torch_bench(side, "store", path, "--to-folder", data)
        runs.append(load_run(path))
    return runs


def medians(runs, clock: str) -> dict[str, list[float]]:
    """Per benchmark, the per-run medians on `clock` ("samples", "wall", or "scaled": sample /
    speed reference, what the verdicts judge when every run has it)."""
    found: dict[str, list[float]] = {}
    for run in runs:
        for result in run.results:
            if not result.ok:
                continue
            if clock == "scaled":
                ratios = speed_ratios(result)
                if ratios is None:
                    continue
                values = ratios[1]
            else:
                values = result.samples if clock == "samples" \
                    else result.extra.get("wall_samples")
            found.setdefault(result.name, []).append(float(np.median(values)))
    return found


def cv(values) -> float:
    return float(np.std(values, ddof=1) / np.mean(values)) if len(values) > 1 else 0.0


def interrupted(runs) -> float:
    shares = [r.extra.get("interrupted_share", 0.0) for run in runs for r in run.results if r.ok]
    return float(np.median(shares)) if shares else 0.0


def print_spreads(idle, loaded) -> None:
    clock = {r.extra.get("clock") for run in idle for r in run.results}
    print(f"\nrun-to-run CV of per-run medians ({len(idle)} runs a phase; the default clock "
          f"here: {', '.join(sorted(map(str, clock)))})")
    print(f"{'benchmark':>12} {'median ms':>9} | {'default idle':>12} {'loaded':>7} {'x':>5} |"
          f" {'wall idle':>9} {'loaded':>7} {'x':>6}")
    rows = []
    idle_s, load_s = medians(idle, "samples"), medians(loaded, "samples")
    idle_w, load_w = medians(idle, "wall"), medians(loaded, "wall")
    for name in sorted(idle_s):
        row = (cv(idle_s[name]), cv(load_s[name]), cv(idle_w[name]), cv(load_w[name]))
        rows.append(row)
        print(f"{name:>12} {statistics.median(idle_s[name]):9.3f} | {row[0]:12.1%} "
              f"{row[1]:7.1%} {row[1] / max(row[0], 1e-9):5.1f} | {row[2]:9.1%} {row[3]:7.1%} "
              f"{row[3] / max(row[2], 1e-9):6.1f}")
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"{'median':>12} {'':9} | {med[0]:12.1%} {med[1]:7.1%} {med[1] / med[0]:5.1f} | "
          f"{med[2]:9.1%} {med[3]:7.1%} {med[3] / med[2]:6.1f}")
    idle_r, load_r = medians(idle, "scaled"), medians(loaded, "scaled")
    if idle_r and load_r:
        scaled = [(cv(idle_r[n]), cv(load_r[n])) for n in sorted(idle_r) if n in load_r]
        print("sample / speed reference (what the verdicts judge): median CV idle "
              f"{statistics.median(a for a, _ in scaled):.1%}, loaded "
              f"{statistics.median(b for _, b in scaled):.1%}; per benchmark idle/loaded: "
              + ", ".join(f"{n} {a:.1%}/{b:.1%}" for n, (a, b) in zip(sorted(idle_r), scaled,
                                                                     strict=False)))
    print(f"interrupted samples (median share per result): idle {interrupted(idle):.0%}, "
          f"loaded {interrupted(loaded):.0%}; untrusted runs: idle "
          f"{sum(not r.trusted for r in idle)}, loaded {sum(not r.trusted for r in loaded)}")


def without_reference(run):
    """The run as it would be without the speed reference beside its samples."""
    return replace(run, results=tuple(
        replace(r, extra={k: v for k, v in r.extra.items()
                          if k not in ("reference", "reference_samples")})
        for r in run.results))


def print_leave_one_out(phases) -> None:
    """Each run of a phase judged as an unchanged PR head against the phase's other runs:
    every verdict but "unchanged" is a false one. With and without the speed reference."""
    print("\nleave one out (each run an unchanged head against the other runs of its phase):")
    for label, runs in phases:
        runs = [replace(r, git={**r.git, "branch": "main"}) for r in runs]
        for how, convert in (("sample / reference", lambda r: r),
                             ("samples alone", without_reference)):
            kinds, detectable = Counter(), []
            for k in range(len(runs)):
                history = [convert(r) for i, r in enumerate(runs) if i != k]
                head = replace(convert(runs[k]),
                               git={**runs[k].git, "branch": "pr", "pr_number": 1})
                for verdict in compare_runs([history[-1]], [head], history).verdicts:
                    kinds[verdict.kind.value] += 1
                    if verdict.assessment is not None and verdict.assessment.detectable:
                        detectable.append(verdict.assessment.detectable)
            false = sum(n for kind, n in kinds.items() if kind in ("regression", "improvement"))
            print(f"  {label:>6}, {how:>18}: {false} false of {sum(kinds.values())} "
                  f"({dict(kinds)}); median smallest detectable change "
                  f"{statistics.median(detectable) if detectable else float('nan'):.1%}")


def true_ratio(side: Path, factor_reps: int, pairs: int = 600) -> float:
    """The planted slowdown's true ratio: the same operation (one module, one set of
    tensors) called REPS and `factor_reps` times, in interleaved pairs in this process, on
    CPU time; the median of the pairs' ratios."""
    sys.path.insert(0, str(side))
    import torch
    from busybench.suite import REPS, operation

    torch.set_num_threads(1)
    op = operation(PLANTED)
    times: dict[int, list[int]] = {REPS: [], factor_reps: []}
    with torch.no_grad():
        for _ in range(pairs):
            for count in times:
                start = time.process_time_ns()
                for _ in range(count):
                    op()
                times[count].append(time.process_time_ns() - start)
    return float(np.median(np.divide(times[factor_reps], times[REPS])))


def verdicts(head: Path, side: Path, data: Path, scratch: Path,
             confirm: tuple[Path, float, list[str]] | None = None) -> tuple[dict[str, str], str]:
    """The head's verdicts against the history, as the Action's PR job gives them; with
    `confirm` (base checkout, budget in seconds, run arguments), after targeted confirmation.
    Also a line saying what the confirmation did and what it cost."""
    tag = "-confirmed" if confirm else ""
    out = scratch / f"{head.stem}{tag}-verdicts.json"
    extra = [] if confirm is None else [
        "--confirm-base", confirm[0], "--confirm-head", side, "--confirm-budget", confirm[1],
        "--confirm-run-args", " ".join(confirm[2])]
    started = time.perf_counter()
    torch_bench(side, "compare", "auto", head, "--history", data, "--latest", "--base-branch",
                "main", "--json", out, "--no-github", *extra, check=False)
    spent = time.perf_counter() - started
    if not out.exists():
        return {}, "no verdicts written"
    found = json.loads(out.read_text())
    done = found.get("confirmation")
    said = (f"{done['benchmarks']} re-measured over {done['rounds']} rounds, "
            f"{done['settled']} settled, {done.get('let_go', 0)} let go, {spent:.0f} s in all") \
        if done else f"{spent:.0f} s"
    return {v["name"]: v["verdict"] for v in found["verdicts"]}, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="K, runs a phase")
    parser.add_argument("--hog", type=int, default=os.cpu_count() or 2,
                        help="spinning processes of the hog (default: one per core)")
    parser.add_argument("--max-time", type=float, default=0.5, help="seconds per benchmark")
    parser.add_argument("--processes", type=int, default=3,
                        help="worker processes per case (default 3, as `torch-bench run`)")
    parser.add_argument("--rounds", type=int, default=5, help="A/B rounds")
    parser.add_argument("--slow-factor", type=float, default=1.1,
                        help="the planted slowdown (repetitions 10 -> 10 x factor)")
    parser.add_argument("--confirm-budget", type=float, default=600.0,
                        help="seconds of targeted confirmation per head (the Action's default)")
    parser.add_argument("--skip-ab", action="store_true", help="no A/B")
    parser.add_argument("--keep", metavar="DIR", help="keep runs and data folder here")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: load the runs already there instead of measuring "
                             "them again (to finish an interrupted measurement)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="busy-runner-") as scratch_name:
        scratch = Path(options.keep or scratch_name)
        scratch.mkdir(parents=True, exist_ok=True)
        reps = round(10 * options.slow_factor)
        base = checkout(scratch / "base", {})
        head = checkout(scratch / "head", {PLANTED: reps})
        data = scratch / "data"
        data.mkdir(exist_ok=True)
        print(f"load before the idle phase: {os.getloadavg()[0]:.2f} (1 min average), "
              f"{os.cpu_count()} cores", flush=True)
        started = time.perf_counter()
        idle = measure_runs(base, options.runs, options, scratch, "idle")
        print(f"idle phase: {time.perf_counter() - started:.0f} s, load after "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        bound = 60.0 * 60  # the hog stops by itself after an hour at the latest
        with Hog(options.hog, bound):
            started = time.perf_counter()
            loaded = measure_runs(base, options.runs, options, scratch, "loaded", data)
            print(f"loaded phase ({options.hog} spinning processes): "
                  f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.2f}",
                  flush=True)
            print_spreads(idle, loaded)
            print_leave_one_out((("idle", idle), ("loaded", loaded)))
            unchanged = scratch / "head-unchanged.json"
            planted = scratch / "head-planted.json"
            torch_bench(base, "run", *run_args(options), "--calibration", data, "--out",
                        unchanged)
            torch_bench(head, "run", *run_args(options), "--calibration", data, "--out",
                        planted)
            ratio = true_ratio(head, reps)
            print(f"\nagainst the loaded history of {options.runs} runs, under the hog "
                  f"(true ratio of the planted slowdown: {ratio:.3f}):")
            for how, confirm in (("history alone", None),
                                 ("with targeted confirmation",
                                  (base, options.confirm_budget, run_args(options)))):
                same, same_cost = verdicts(unchanged, base, data, scratch, confirm)
                slow, slow_cost = verdicts(planted, head, data, scratch, confirm)
                others = Counter(v for n, v in slow.items() if n != PLANTED)
                print(f"  {how}:\n    unchanged head: {dict(Counter(same.values()))} "
                      f"({same_cost})\n    head with {PLANTED} slowed: {PLANTED} -> "
                      f"{slow.get(PLANTED)}; the other 7: {dict(others)} ({slow_cost})",
                      flush=True)
            if not options.skip_ab:
                started = time.perf_counter()
                done = torch_bench(scratch, "ab", "--base", base, "--head", head, "--rounds",
                                   options.rounds, "--confirm-rounds", "0", "--out-dir",
                                   scratch / "ab", "--json", scratch / "ab.json",
                                   "--no-github", "--", *run_args(options), check=False)
                spent = time.perf_counter() - started
                found = {v["name"]: v["verdict"]
                         for v in json.loads((scratch / "ab.json").read_text())["verdicts"]} \
                    if (scratch / "ab.json").exists() else {}
                print(f"\nA/B of 8 benchmarks x {options.rounds} rounds under the hog: "
                      f"{spent:.0f} s (exit {done.returncode}); {PLANTED} -> "
                      f"{found.get(PLANTED)}; the other 7: "
                      f"{dict(Counter(v for n, v in found.items() if n != PLANTED))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
