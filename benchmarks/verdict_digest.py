"""Do two versions of the code give the same verdicts? Draws PRs of `detector_eval.py`'s fleets
(every noise model, histories of 5, 10 and 20 runs, one and three head runs, unchanged and
with a 10% slowdown) from fixed seeds, judges each with `compare_runs`, and prints the
verdicts' counts, a digest of every verdict, and one of every verdict with its p-value (to 6
significant digits). Run it with each version's code on PYTHONPATH; equal verdict digests
mean the same verdicts.

Run:  PYTHONPATH=src nice .venv/bin/python benchmarks/verdict_digest.py [--prs 20]
      [--seed 0] [--show]   (--show prints one line a PR, to find where two runs differ)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent))

from detector_eval import MODELS, POLICY, draw_pr  # noqa: E402  (the sibling script)
from torch_bench.analyze.verdicts import compare_runs  # noqa: E402

SIZE = 12


def one_pr(rng, model, history: int, runs: int, change: float) -> str:
    drawn = draw_pr(rng, model, SIZE, 0.03, history, runs, change)
    comparison = compare_runs(drawn.history[-1:], drawn.head, drawn.history, policy=POLICY)
    parts = []
    for v in comparison.verdicts:
        p = v.assessment.p_value if v.assessment is not None else None
        parts.append(f"{v.name}:{v.kind.value}:{'-' if p is None else f'{p:.6g}'}")
    shift = comparison.run_shift
    parts.append(f"shift:{shift.outcome.value if shift else '-'}:-")
    return " ".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=20, help="PRs a cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args(argv)
    digest, kinds_digest = hashlib.sha256(), hashlib.sha256()
    kinds: Counter = Counter()
    total = 0
    for m, model in enumerate(MODELS):
        for history in (5, 10, 20):
            for runs in (1, 3):
                for change in (0.0, 0.10):
                    rng = np.random.default_rng([args.seed, m, history, runs, int(change * 100)])
                    for i in range(args.prs):
                        line = one_pr(rng, model, history, runs, change)
                        digest.update(line.encode() + b"\n")
                        kinds_digest.update(" ".join(
                            part.rpartition(":")[0] for part in line.split()).encode() + b"\n")
                        kinds.update(part.split(":")[1] for part in line.split())
                        total += 1
                        if args.show:
                            print(f"{model.kind} H{history} R{runs} {change:.2f} #{i}: {line}")
    print(f"{total} PRs; verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"verdict digest {kinds_digest.hexdigest()[:16]}; with p-values "
          f"{digest.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
