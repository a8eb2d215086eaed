"""The `run` stage: plan cases from the configuration, run each in its own process, and
assemble the run document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch_bench.config import RunConfig, partition_of
from torch_bench.measure.environment import collect_environment, fingerprint
from torch_bench.measure.isolation import run_isolated
from torch_bench.measure.preflight import Preflight
from torch_bench.provenance import ci_info, git_info
from torch_bench.results.schema import Result, Run, new_run
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext, CaseSpec


@dataclass(frozen=True)
class PlannedCase:
    suite_ref: str
    case: CaseSpec


def plan_cases(config: RunConfig) -> list[PlannedCase]:
    planned = []
    for ref in config.suites:
        suite = get_suite(ref)
        for case in suite.plan(config.options[ref], config.device):
            if config.selects(case):
                planned.append(PlannedCase(ref, case))
    if config.total_partitions > 1:
        owner = partition_of([f"{p.case.suite}/{p.case.name}" for p in planned],
                             config.total_partitions)
        planned = [p for p in planned
                   if owner[f"{p.case.suite}/{p.case.name}"] == config.partition_id]
    return planned


def execute(
    planned: list[PlannedCase],
    config: RunConfig,
    on_case_start: Callable[[PlannedCase], None] = lambda p: None,
    on_case_done: Callable[[PlannedCase, list[Result]], None] = lambda p, r: None,
) -> list[Result]:
    ctx = CaseContext(device=config.device, policy=config.policy, threads=config.threads)
    results: list[Result] = []
    for item in planned:
        on_case_start(item)
        case_results = run_isolated(item.case, ctx, config.isolation, item.suite_ref)
        results.extend(case_results)
        on_case_done(item, case_results)
    return results + summaries(planned, results)


def summaries(planned: list[PlannedCase], results: list[Result]) -> list[Result]:
    """Suite-level results computed in the parent from all of a suite's case results, for
    suites that define `summarize`."""
    extra: list[Result] = []
    for ref in dict.fromkeys(p.suite_ref for p in planned):
        suite = get_suite(ref)
        if suite.summarize is not None:
            extra.extend(suite.summarize([r for r in results if r.suite == suite.name]))
    return extra


def assemble_run(config: RunConfig, results: list[Result],
                 preflight: Preflight | None = None) -> Run:
    env = collect_environment()
    if config.threads is not None:  # the cases ran with these, not this process's default
        env["threads"] = config.threads
        env["fingerprint"] = fingerprint(env)
    if preflight is not None:
        env["preflight"] = preflight.to_dict()
    ci = {**ci_info(), **({"shard": config.shard} if config.shard else {})}
    return new_run(results, git=git_info(), ci=ci, env=env, config=config.describe())
