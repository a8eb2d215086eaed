"""Does our timer agree with torch.utils.benchmark, and with no more spread?

For CPU operations from about 10 us to about 10 ms, both timers measure the same callable,
alternating over several rounds in one process, so machine noise hits both alike. Prints per
operation: each side's median, the ratio of medians (ours / theirs), and each side's IQR/median.
Targets: ratio within 0.98-1.02; our IQR/median no larger than theirs.

    .venv/bin/python benchmarks/timer_agreement.py [--rounds 5] [--budget 1.0] [--threads 1]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from torch.utils.benchmark import Timer

from torch_bench.measure.timer import TimingPolicy, measure


def operations() -> dict[str, callable]:
    torch.manual_seed(0)
    small = torch.randn(64)
    m128 = torch.randn(128, 128)
    m256 = torch.randn(256, 256)
    m768 = torch.randn(768, 768)
    image = torch.randn(8, 32, 56, 56)
    conv = torch.nn.Conv2d(32, 32, 3, padding=1)
    return {
        "add 64 (~us)": lambda: torch.add(small, small),
        "matmul 128 (~10s us)": lambda: torch.mm(m128, m128),
        "matmul 256 (~100s us)": lambda: torch.mm(m256, m256),
        "conv 8x32x56x56 (~ms)": lambda: conv(image),
        "matmul 768 (~10 ms)": lambda: torch.mm(m768, m768),
    }


def spread(samples) -> float:
    q25, q50, q75 = np.percentile(samples, [25, 50, 75])
    return (q75 - q25) / q50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per side per round")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for both sides (1, as torch.utils.benchmark defaults)")
    args = parser.parse_args()
    threads = args.threads
    torch.set_num_threads(threads)
    policy = TimingPolicy(warmup=3, min_repeats=10, max_repeats=10_000, max_time_s=args.budget,
                          target_rel_iqr=0.0)  # no early stop: same budget as the other side
    print(f"torch {torch.__version__}, {threads} threads, {args.rounds} rounds x "
          f"{args.budget:g} s per side")
    header = f"{'operation':24} {'ours ms':>10} {'theirs ms':>10} {'ratio':>7} " \
             f"{'ours IQR/med':>13} {'theirs IQR/med':>15} {'ok':>4}"
    print(header)
    print("-" * len(header))
    with torch.no_grad():
        for name, fn in operations().items():
            ours, theirs = [], []
            timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
            for _ in range(args.rounds):
                ours.extend(measure(fn, policy).samples_ms)
                theirs.extend(t * 1e3 for t in timer.blocked_autorange(
                    min_run_time=args.budget).times)
            ratio = float(np.median(ours) / np.median(theirs))
            ok = 0.98 <= ratio <= 1.02 and spread(ours) <= spread(theirs)
            print(f"{name:24} {np.median(ours):10.5f} {np.median(theirs):10.5f} {ratio:7.3f} "
                  f"{spread(ours):13.2%} {spread(theirs):15.2%} {'yes' if ok else 'NO':>4}")


if __name__ == "__main__":
    main()
