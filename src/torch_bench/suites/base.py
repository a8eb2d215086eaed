"""What a suite is: declared options, a plan of cases, and how to run one case.

A suite module exposes `SUITE`. The runner calls `plan` in the parent process (cheap, no
torch work) and `run_case` in a fresh child process per case.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The case types live below suites and the processes that run them; suite authors import
# them from here as before.
from torch_bench.measure.case import CaseContext, CaseSpec, Output  # noqa: F401
from torch_bench.results.schema import Result


@dataclass(frozen=True)
class Option:
    """A suite option, settable as `--<name with dashes>` or in the YAML config."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    aliases: tuple[str, ...] = ()  # older names, still accepted as flags and YAML keys


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    options: tuple[Option, ...]
    plan: Callable[[Mapping[str, Any], str], Sequence[CaseSpec]]
    run_case: Callable[[CaseSpec, CaseContext], Sequence[Result]]
    record_memory: bool = True  # add the case process's memory figures as results
    # Spread each case's samples over the run's worker processes (`--processes`); off for
    # suites whose case is one long measurement (compilation, training epochs).
    spread_over_processes: bool = True
    # Suite-level results from all case results, computed in the parent after the cases run.
    summarize: Callable[[Sequence[Result]], Sequence[Result]] | None = None
    # Optional suite-specific report printed after the results table: the suite's results
    # in, lines of text out.
    render: Callable[[Sequence[Result]], list[str]] | None = None
    # The same, for a report that depends on the suite's options (such as fastrnns' table
    # with `--sep`): the suite's results and its parsed options in, lines out.
    report: Callable[[Sequence[Result], Mapping[str, Any]], list[str]] | None = None

    def report_lines(self, results: Sequence[Result], options: Mapping[str, Any]) -> list[str]:
        """Every line of the suite's own reports on `results`."""
        lines = self.render(results) if self.render is not None else []
        return lines + (self.report(results, options) if self.report is not None else [])


def parse_int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in str(text).split(",") if part.strip())
    except ValueError:
        raise ValueError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"expected positive integers, got {text!r}")
    return values


BATCH_SIZE_ALIASES = ("mini_batch", "batch_sizes")  # fastrnns' and HF's names for it


def batch_size_option(default: tuple[int, ...] | None, help: str = "batch sizes (a list runs "
                                                                   "each)") -> Option:
    """The one `--batch-size` list every suite takes (`--mini-batch`, `--batch-sizes` too)."""
    return Option("batch_size", parse_int_list, default, help, BATCH_SIZE_ALIASES)


def parse_name_list(text: str) -> tuple[str, ...]:
    values = tuple(part.strip() for part in str(text).split(",") if part.strip())
    if not values:
        raise ValueError(f"expected a comma-separated list of names, got {text!r}")
    return values


def parse_choices(known, what: str = "variant") -> Callable[[str], tuple[str, ...]]:
    """A parser for a comma-separated list of names, each one of `known`."""

    def parse(text: str) -> tuple[str, ...]:
        names = parse_name_list(text)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown {what}(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return names

    return parse


def parse_positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"expected a positive integer, got {text!r}")
    return value


def parse_bool(text: str) -> bool:
    value = str(text).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")
