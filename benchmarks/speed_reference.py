"""Does a reference block timed beside every sample take the machine's speed out of a run?

    python benchmarks/speed_reference.py [--processes 8] [--samples 150] [--hog N]

On a virtual machine the CPU itself runs faster or slower for seconds at a time (a
neighbour on the host's shared core, cache or memory bus), and CPU time grows with it: on
this project's 2-core test machine, with nothing else running, the per-run median of a 2 ms
benchmark moved by 30% between fresh processes on the CPU clock. Counting instructions would
remove it; shared runners seldom expose hardware counters (this one does not).

This script measures the idea the next step of the timer would build on: time, after every
sample block, a fixed reference block that does not depend on torch (so a change to torch
cannot hide in it), and divide. Each benchmark runs in `--processes` fresh processes, one
torch thread, process CPU time; each sample is 10 calls of the operation, followed by one
block of each reference:

- `mm60`: 40 numpy float32 60x60 matrix products (under OpenBLAS's threading threshold, so
  one thread: above it OpenBLAS starts its own pool and CPU time counts its spinning);
- `ufunc`: 10 rounds of exp, multiply and add over 16,384 float32 values (numpy's SIMD
  loops, never threaded).

Printed per benchmark: the spread across processes (CV) of the per-process median on the CPU
clock, and of the per-process median of sample / reference. With `--hog N`, N spinning
processes (stopping by themselves) keep the cores busy while measuring.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

WORKER = r'''
import json, statistics, sys, time
import numpy as np
import torch

torch.set_num_threads(1)
torch.manual_seed(0)
name, count = sys.argv[1], int(sys.argv[2])
if name == "attention":
    q = torch.randn(1, 4, 96, 32)
    op = lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q)
elif name == "lstm":
    lstm, x = torch.nn.LSTM(32, 48), torch.randn(8, 4, 32)
    op = lambda: lstm(x)
elif name == "conv":
    conv, x = torch.nn.Conv2d(16, 16, 3, padding=1), torch.randn(1, 16, 24, 24)
    op = lambda: conv(x)
elif name == "mlp":
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))
    x = torch.randn(32, 256)
    op = lambda: mlp(x)
else:
    a, b = torch.randn(160, 160), torch.randn(160, 160)
    op = lambda: a @ b
rng = np.random.default_rng(0)
m = rng.standard_normal((60, 60)).astype(np.float32)
v = rng.standard_normal(16384).astype(np.float32)
o = np.empty_like(v)

def mm60():
    for _ in range(40):
        m @ m

def ufunc():
    for _ in range(10):
        np.exp(v, out=o); np.multiply(o, v, out=o); np.add(o, v, out=o)

def block(fn, calls=1):
    t = time.process_time_ns()
    for _ in range(calls):
        fn()
    return time.process_time_ns() - t

with torch.no_grad():
    for _ in range(30):
        op(); mm60(); ufunc()
    raw, refs = [], {"mm60": [], "ufunc": []}
    for _ in range(count):
        raw.append(block(op, 10))
        refs["mm60"].append(block(mm60))
        refs["ufunc"].append(block(ufunc))
out = {"raw": statistics.median(raw) / 1e7}
for key, times in refs.items():
    out[key] = statistics.median(s / r for s, r in zip(raw, times))
print(json.dumps(out))
'''

NAMES = ("attention", "conv", "lstm", "matmul", "mlp")


def spin(until: float) -> None:
    while time.time() < until:
        pass


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=8, help="fresh processes a benchmark")
    parser.add_argument("--samples", type=int, default=150, help="sample blocks a process")
    parser.add_argument("--hog", type=int, default=0, help="spinning processes meanwhile")
    options = parser.parse_args()
    hogs = []
    if options.hog:
        context = multiprocessing.get_context("spawn")
        hogs = [context.Process(target=spin, args=(time.time() + 1800,), daemon=True)
                for _ in range(options.hog)]
        for hog in hogs:
            hog.start()
    try:
        print(f"load {os.getloadavg()[0]:.2f}, hog {options.hog}, {options.processes} "
              f"processes x {options.samples} samples a benchmark")
        print(f"{'benchmark':>10} | {'median ms':>9} | {'CV cpu':>7} | {'CV /mm60':>8} | "
              f"{'CV /ufunc':>9}")
        for name in NAMES:
            found = []
            for _ in range(options.processes):
                done = subprocess.run([sys.executable, "-c", WORKER, name, str(options.samples)],
                                      capture_output=True, text=True, check=True)
                found.append(json.loads(done.stdout))
            columns = {key: [f[key] for f in found] for key in ("raw", "mm60", "ufunc")}
            print(f"{name:>10} | {statistics.median(columns['raw']):9.3f} | "
                  f"{cv(columns['raw']):7.1%} | {cv(columns['mm60']):8.1%} | "
                  f"{cv(columns['ufunc']):9.1%}", flush=True)
    finally:
        for hog in hogs:
            hog.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
