"""One budget for the time a PR job spends after measuring its head (input `pr-budget`):
the A/B rounds, targeted confirmation and explain share it, in that order, each also within
its own input (`confirm-budget`, `explain-budget`). `auto` gives them as long as the head's
measuring took, so that a PR job measures for about twice as long as a push job does.

A/B measures both sides over `ROUNDS` rounds, one `torch-bench run` a side each: every run
pays a process start, torch's import and the suite's set-up, which on a small suite cost as
much as the measuring. It is estimated at one head measurement a run. Under `ab: auto` it is
asked for only when the base branch has too few runs for the history to judge: then it is
the comparison itself, not an extra, and `auto` grants it (a PR job judged by nothing would
be cheap and useless). A number is a hard bound: A/B runs only when it fits what is left;
otherwise the PR is compared with the history, and the summary says how large a budget would
have bought it. The job summary says what the budget bought.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from torch_bench.action.ab_stage import ROUNDS
from torch_bench.action.inputs import ActionInputs


@dataclass
class PrBudget:
    seconds: float  # what the PR's extra stages may spend in all
    measuring_s: float  # what measuring the head took (A/B's cost is about twice it)
    auto: bool = False
    spent: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def left(self) -> float:
        return max(0.0, self.seconds - sum(self.spent.values()))

    def record(self, stage: str, started: float) -> None:
        self.spent[stage] = self.spent.get(stage, 0.0) + time.monotonic() - started

    def ab_cost(self) -> float:
        """About what A/B takes: one head measurement for each run of each side."""
        return 2 * ROUNDS * self.measuring_s

    def ab_fits(self) -> bool:
        return self.left() >= self.ab_cost()

    def ab_left_out(self, asked: str) -> str | None:
        """Why A/B, wanted under `ab: asked`, does not run within this budget; None when it
        runs (`always`: whatever it costs; `auto` with budget `auto`: the history cannot
        judge, so A/B is the only verdict there is)."""
        if asked != "auto" or self.auto or self.ab_fits():
            return None
        return (f"A/B left out: it takes about {self.ab_cost():.0f} s ({2 * ROUNDS} runs), "
                f"{self.left():.0f} s were left (pr-budget: {self.ab_cost():.0f} or more "
                "buys it)")

    def summary(self) -> str:
        """A line for the job summary: the budget, and what each stage took of it."""
        what = "auto: as long as measuring the head took" if self.auto else "pr-budget"
        spent = ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in self.spent.items())
        notes = "".join(f" {note}." for note in self.notes)
        return (f"**PR budget**: {self.seconds:.0f} s ({what}); spent: {spent or 'nothing'}"
                f", {self.left():.0f} s left.{notes}")


def make_budget(inputs: ActionInputs, measuring_s: float) -> PrBudget:
    chosen = inputs["pr-budget"]
    return PrBudget(measuring_s if chosen is None else chosen, measuring_s, chosen is None)


def bounded(inputs: ActionInputs, budget: PrBudget, stage: str) -> ActionInputs:
    """`inputs` with the stage's own budget cut to what the PR budget has left."""
    name = {"confirmation": "confirm-budget", "explain": "explain-budget"}[stage]
    left = budget.left()
    if inputs[name] > left:
        budget.notes.append(f"{stage} cut from {inputs[name]:g} s to {left:.0f} s")
    return ActionInputs({**inputs.values, name: min(inputs[name], left)})
