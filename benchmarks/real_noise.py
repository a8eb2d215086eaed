"""False verdicts on real noise: a small suite measured K times on unchanged code, on this
machine, each run compared with the history before it, as the Action compares a push.

Every run is measured as the Action measures it (`torch-bench run --calibration DATA`: the
calls per sample recorded in history are reused), compared with `torch-bench compare auto
RUN --history DATA --latest` while the data folder holds runs 0..k-1, then stored into the
data folder. Nothing changed between the runs, so every regression or improvement is false.
The same runs are also judged as A/B rounds: even runs as the base, odd runs as the head,
pooled over the first R pairs, with the within-side noise `torch-bench ab` uses.

    python benchmarks/real_noise.py [--runs 12] [--suite-size 2] [--processes 3]
        [--cpu-busy-limit PERCENT] [--keep DIR]

Planted mode (`--planted`): the 8-benchmark CPU suite of `busy_runner.py` in three
checkouts that stand for three commits: the base, and heads whose `lstm` benchmark repeats
its operation 11 and 13 times instead of 10 (true ratios measured separately, interleaved,
in this process). 10 runs of the base are stored in a data folder as a main branch would
store them; then, at history 5 and 10, an unchanged head (a fresh base run) and each planted
head are measured once and compared as the Action compares a PR (`compare auto --history
--latest`), and again with targeted confirmation (`--confirm-base` the base checkout,
`--confirm-budget`). Printed: which planted slowdowns were caught, and every false verdict
(target 0).

    python benchmarks/real_noise.py --planted [--max-time 0.5] [--confirm-budget 300]

Cost: K runs of the suite (each case in --processes worker processes) plus K comparisons;
with the defaults a few minutes on an idle machine. Run it under `nice` on a shared one,
and say how loaded the machine was next to the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from torch_bench.analyze.verdicts import Kind, compare_runs
from torch_bench.results.document import load_run

VARIANTS = ("py", "aten", "jit", "cudnn", "jit_premul", "jit_simple")
SIZES = ("--seq-length", "8", "--input-size", "32", "--hidden-size", "32", "--mini-batch", "4")
FALSE = ("regression", "improvement")


def torch_bench(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "torch_bench", *map(str, args)],
                          capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"torch-bench {' '.join(map(str, args[:2]))} failed:\n{done.stderr}")
    return done


def run_args(options: argparse.Namespace, data: Path) -> list[str]:
    limit = ["--cpu-busy-limit", str(options.cpu_busy_limit)] \
        if options.cpu_busy_limit is not None else []
    return ["--suite", "rnns", "--variants", ",".join(VARIANTS[:options.suite_size]),
            "--threads", "1", *SIZES, "--max-time", str(options.max_time),
            "--processes", str(options.processes), "--calibration", str(data), *limit]


def against_history(run: Path, data: Path, branch: str, scratch: Path) -> Counter | None:
    """Verdict counts of `run` against the data folder, or None when it has no baseline."""
    verdicts = scratch / f"{run.stem}-verdicts.json"
    torch_bench("compare", "auto", run, "--history", data, "--latest", "--base-branch", branch,
                "--json", verdicts, "--no-github", check=False)
    if not verdicts.exists():
        return None
    return Counter(json.loads(verdicts.read_text())["counts"])


def as_ab_rounds(runs: list, rounds: int) -> Counter:
    base, head = runs[0:2 * rounds:2], runs[1:2 * rounds:2]
    comparison = compare_runs(base, head, side_by_side=True)
    return Counter({kind.value: len(comparison.of_kind(kind))
                    for kind in (Kind.REGRESSION, Kind.IMPROVEMENT, Kind.UNCHANGED,
                                 Kind.INCONCLUSIVE)})


def line(label: str, counts: Counter | None) -> str:
    if counts is None:
        return f"{label:>22}  no baseline (nothing trusted on this fingerprint yet)"
    false = sum(counts.get(kind, 0) for kind in FALSE)
    shown = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()) if n)
    return f"{label:>22}  false verdicts {false}   ({shown})"


PLANTED_REPS = {"10%": 11, "30%": 13}  # lstm repeats its operation this often instead of 10


def planted_verdicts(side: Path, head: Path, data: Path, out: Path, confirm: list[str]):
    """name -> verdict of `head` (measured in `side`) against the data folder."""
    import busy_runner

    busy_runner.torch_bench(side, "compare", "auto", head, "--history", data, "--latest",
                            "--base-branch", "main", "--json", out, "--no-github", *confirm,
                            check=False)
    if not out.exists():
        return None
    found = json.loads(out.read_text())
    return ({v["name"]: v["verdict"] for v in found["verdicts"]}, found.get("confirmation"))


def planted(options: argparse.Namespace) -> int:
    import busy_runner

    scratch_root = Path(options.keep or tempfile.mkdtemp(prefix="real-noise-planted-"))
    base = busy_runner.checkout(scratch_root / "base", {})
    heads = {label: busy_runner.checkout(scratch_root / f"head-{label}",
                                         {busy_runner.PLANTED: reps})
             for label, reps in PLANTED_REPS.items()}
    options.reuse, options.processes = False, 3
    ratios = {label: busy_runner.true_ratio(base, reps) for label, reps in PLANTED_REPS.items()}
    print("true ratios of the planted lstm slowdowns (300 interleaved pairs, CPU time): "
          + ", ".join(f"{label}: {r:.3f}" for label, r in ratios.items()), flush=True)
    started = time.perf_counter()
    runs_dir = scratch_root / "runs"
    runs_dir.mkdir(exist_ok=True)
    busy_runner.measure_runs(base, 10, options, runs_dir, "main")
    print(f"10 base runs measured in {time.perf_counter() - started:.0f} s", flush=True)
    caught, false = Counter(), 0
    for size in (5, 10):
        data = scratch_root / f"data-{size}"
        for run_file in sorted(runs_dir.glob("main-*.json"))[:size]:
            busy_runner.torch_bench(base, "store", run_file, "--to-folder", data)
        cases = {"unchanged": base, **heads}
        for label, side in cases.items():
            head = runs_dir / f"head-{size}-{label}.json"
            busy_runner.torch_bench(side, "run", *busy_runner.run_args(options),
                                    "--calibration", data, "--out", head)
            for how, extra in (("history", []), ("confirmed", [
                    "--confirm-base", str(base), "--confirm-head", str(side),
                    "--confirm-budget", str(options.confirm_budget),
                    "--confirm-run-args", " ".join(busy_runner.run_args(options))])):
                t0 = time.perf_counter()
                got = planted_verdicts(side, head, data,
                                       runs_dir / f"v-{size}-{label}-{how}.json", extra)
                took = time.perf_counter() - t0
                if got is None:
                    print(f"  history {size:>2} {label:>9} {how:>9}: no baseline")
                    continue
                verdicts, confirmation = got
                planted_name = busy_runner.PLANTED
                wrong = {n: v for n, v in verdicts.items()
                         if v in FALSE and (label == "unchanged" or n != planted_name)}
                false += len(wrong)
                hit = label != "unchanged" and verdicts.get(planted_name) == "regression"
                caught[label, how] += hit
                rounds = f", {confirmation['rounds']} rounds" if confirmation else ""
                print(f"  history {size:>2} {label:>9} {how:>9}: "
                      f"{planted_name} {verdicts.get(planted_name)}"
                      f"{' (caught)' if hit else ''}; false verdicts {len(wrong)} "
                      f"{wrong or ''} ({took:.0f} s{rounds})", flush=True)
    print("caught: " + ", ".join(f"{label} {how} {caught[label, how]}/2"
                                 for label in PLANTED_REPS for how in ("history", "confirmed")))
    print(f"false verdicts in total: {false} (target 0); {time.perf_counter() - started:.0f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12, help="K, runs of unchanged code")
    parser.add_argument("--suite-size", type=int, default=2, choices=range(1, 7),
                        help="rnns variants measured (each a case with two timed metrics)")
    parser.add_argument("--processes", type=int, default=3, help="worker processes per case")
    parser.add_argument("--max-time", type=float, default=0.5, help="seconds per metric")
    parser.add_argument("--cpu-busy-limit", type=float, default=None, metavar="PERCENT",
                        help="pre-flight limit (default: the tool's); on a shared machine "
                             "raise it, or every run is untrusted and never a baseline")
    parser.add_argument("--keep", metavar="DIR", help="keep the runs and data folder here")
    parser.add_argument("--planted", action="store_true",
                        help="planted-regression mode (see the module docstring)")
    parser.add_argument("--confirm-budget", type=float, default=300.0, metavar="SECONDS",
                        help="planted mode: the targeted confirmation's budget per head")
    options = parser.parse_args()
    if options.planted:
        return planted(options)
    if options.runs < 2:
        parser.error("--runs must be at least 2")
    with tempfile.TemporaryDirectory(prefix="real-noise-") as scratch_name:
        scratch = Path(options.keep or scratch_name)
        data = scratch / "data"
        data.mkdir(parents=True, exist_ok=True)
        runs, false_total = [], 0
        print(f"{options.runs} runs of {options.suite_size} rnns case(s) on unchanged code, "
              f"{options.processes} process(es) per case")
        for k in range(options.runs):
            path = scratch / f"run-{k:02d}.json"
            torch_bench("run", *run_args(options, data), "--out", path)
            run = load_run(path)
            counts = against_history(path, data, run.git.get("branch") or "main", scratch)
            false_total += sum((counts or Counter()).get(kind, 0) for kind in FALSE)
            trust = "" if run.trusted else "  [this run failed its pre-flight: untrusted]"
            print(line(f"history of {k} run(s)", counts) + trust, flush=True)
            torch_bench("store", path, "--to-folder", data)
            runs.append(run)
        print("A/B rounds (even runs as base, odd runs as head):")
        for rounds in range(1, options.runs // 2 + 1):
            counts = as_ab_rounds(runs, rounds)
            false_total += sum(counts.get(kind, 0) for kind in FALSE)
            print(line(f"{rounds} round(s) a side", counts))
        print(f"false verdicts in total: {false_total} (target 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
