"""Figures for the profiling window the timer opens around every timed block
(src/torch_bench/measure/op_window.py): what it costs a normal run, where no profiling
session is installed, against the shortest block the timer takes (`min_block_ms`, 1 ms);
and what profiling one step of a tiny MLP costs with a session installed.

The window sits outside the clocks of a block, so it never enters a sample; this prints how
much time it adds between blocks. Windows and bare `with` blocks are timed in alternation,
`--rounds` times, on the process's CPU time, and the medians are compared.

    python benchmarks/explain_window.py [--rounds 7] [--windows 100000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import nullcontext

from torch_bench.measure import op_window
from torch_bench.measure.op_profile import ProfileSession


def per_window_ns(count: int, opener) -> float:
    """CPU time per window: on a shared machine the wall clock would time the neighbours."""
    started = time.process_time_ns()
    for _ in range(count):
        with opener() as window:
            window.calls = 1
    return (time.process_time_ns() - started) / count


class _Bare:
    calls = 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--windows", type=int, default=100_000)
    args = parser.parse_args()
    windows, bare = [], []
    for _ in range(args.rounds):
        windows.append(per_window_ns(args.windows, lambda: op_window.profile_window("latency")))
        bare.append(per_window_ns(args.windows, lambda: nullcontext(_Bare())))
    window_ns, bare_ns = statistics.median(windows), statistics.median(bare)
    print(f"window without a session: {window_ns:.0f} ns per block "
          f"(a bare `with`: {bare_ns:.0f} ns); {window_ns / 1e6:.5%} of a 1 ms block")

    import torch

    model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU())
    x = torch.randn(64, 128)
    torch.set_num_threads(1)
    plain, profiled = [], []
    session = ProfileSession("cpu", "latency")
    for _ in range(args.rounds):
        started = time.perf_counter_ns()
        with torch.no_grad():
            model(x)
        plain.append(time.perf_counter_ns() - started)
        op_window.install(session)
        started = time.perf_counter_ns()
        with op_window.profile_window("latency") as window, torch.no_grad():
            model(x)
            window.calls = 1
        profiled.append(time.perf_counter_ns() - started)
        op_window.install(None)
    print(f"one step of a 128-wide MLP: {statistics.median(plain) / 1e3:.0f} µs plain, "
          f"{statistics.median(profiled) / 1e3:.0f} µs profiled (median of {args.rounds}; "
          "the profiler's start and stop included)")


if __name__ == "__main__":
    main()
