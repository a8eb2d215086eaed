"""Figures for the bisection's search (src/torch_bench/analyze/bisect.py): how many steps it
measures, and how it ends, for ranges of several lengths, with every slow commit position,
when no step is ambiguous and when each candidate is ambiguous with a given chance (noise).

A step's cost is 3 x rounds runs of the suite (see docs/bisect.md), so steps are the figure
that matters; the grades come from a comparator that knows each commit's level, so this
measures the search, not the statistics.

    python benchmarks/bisect_steps.py [--ambiguous 0.2] [--seed 1] [--max-steps 10]
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter

from torch_bench.analyze.bisect import Ending, Grade, Judgement, bisect


def comparator(slow_from: int, chance: float, rng: random.Random):
    def classify(good: str, candidate: str | None, bad: str) -> Judgement:
        if candidate is None:
            return Judgement(Grade.BAD)
        if rng.random() < chance:
            return Judgement(Grade.AMBIGUOUS)
        return Judgement(Grade.BAD if int(candidate) >= slow_from else Grade.GOOD)

    return classify


def figures(commits: int, chance: float, max_steps: int, seed: int) -> str:
    rng = random.Random(seed)
    names = [str(i) for i in range(commits)]
    steps, endings, wrong = [], Counter(), 0
    for slow_from in range(1, commits):
        result = bisect(names, comparator(slow_from, chance, rng), max_steps)
        steps.append(len(result.steps))
        endings[result.ending] += 1
        wrong += result.ending is Ending.FOUND and result.first_bad != str(slow_from)
    positions = commits - 1
    return (f"| {commits} | {chance:.0%} | {statistics.mean(steps):.2f} | {max(steps)} | "
            f"{endings[Ending.FOUND] / positions:.0%} | {endings[Ending.AMBIGUOUS] / positions:.0%}"
            f" | {endings[Ending.BUDGET] / positions:.0%} | {wrong} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ambiguous", type=float, default=0.2,
                        help="chance that a candidate is graded ambiguous (default 0.2)")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"max steps {args.max_steps}; every slow commit position of each range")
    print("| commits | ambiguous | mean steps | most steps | found | ambiguous end | budget "
          "spent | wrong commit |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for commits in (16, 64, 256, 1024):
        for chance in (0.0, args.ambiguous):
            print(figures(commits, chance, args.max_steps, args.seed))


if __name__ == "__main__":
    main()
