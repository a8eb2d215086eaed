"""The `run` stage: plan cases from the configuration, run each in its own worker processes
(one after another), and assemble the run document."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from torch_bench.config import RunConfig, partition_of
from torch_bench.execute.in_process import run_in_process
from torch_bench.execute.isolation import run_isolated, storable_results
from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.environment import collect_environment, fingerprint
from torch_bench.measure.preflight import Preflight
from torch_bench.measure.spread import failure_among, join_processes, loops_of, process_policies
from torch_bench.provenance import ci_info, git_info
from torch_bench.results.schema import Result, Run, benchmark_id, new_run
from torch_bench.suites import get_suite


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
    recorded_loops: Mapping[str, int] | None = None,
) -> list[Result]:
    """Run every case; `recorded_loops` (benchmark id -> calls per sample, from history)
    fixes the loop each timed metric runs instead of calibrating it."""
    results: list[Result] = []
    for item in planned:
        on_case_start(item)
        loops = case_loops(item.case, recorded_loops or {})
        case_results = run_case_processes(item, config, loops)
        results.extend(case_results)
        on_case_done(item, case_results)
    return results + summaries(planned, results)


def case_loops(case: CaseSpec, recorded: Mapping[str, int]) -> dict[str, int]:
    """The recorded calls-per-sample counts of the case's metrics, by metric."""
    ids = {out.metric: benchmark_id(case.suite, case.name, case.params, out.metric)
           for out in case.outputs}
    return {metric: recorded[bid] for metric, bid in ids.items() if bid in recorded}


def run_case_processes(item: PlannedCase, config: RunConfig,
                       loops: Mapping[str, int]) -> list[Result]:
    """The case's samples spread over `config.processes` worker processes, one after the
    other. The first process calibrates what history did not fix and the others reuse its
    counts. A failure in any process (error, timeout, crash, oom) is the case's outcome."""
    suite = get_suite(item.suite_ref)
    if item.case.options.get("in_process"):  # asked for by the case (HF's no_multi_process)
        ctx = CaseContext(device=config.device, threads=config.threads, policy=config.policy)
        return storable_results(item.case, run_in_process(item.case, ctx, item.suite_ref))
    wanted = config.processes if suite.spread_over_processes else 1
    per_process: list[list[Result]] = []
    for policy in process_policies(config.policy, wanted):
        ctx = CaseContext(device=config.device, threads=config.threads,
                          policy=replace(policy, loops=dict(loops)))
        got = run_isolated(item.case, ctx, config.isolation, item.suite_ref)
        if failure_among(got):
            return got
        per_process.append(got)
        loops = {**loops_of(got), **loops}
    return join_processes(per_process)


def summaries(planned: list[PlannedCase], results: list[Result]) -> list[Result]:
    """Suite-level results computed in the parent from all of a suite's case results, for
    suites that define `summarize`."""
    extra: list[Result] = []
    for ref in dict.fromkeys(p.suite_ref for p in planned):
        suite = get_suite(ref)
        if suite.summarize is not None:
            extra.extend(suite.summarize([r for r in results if r.suite == suite.name]))
    return extra


def run_environment(config: RunConfig, torch_facts: Mapping | None = None) -> dict:
    """The environment the cases run in, with its fingerprint (`torch_facts`: see
    `collect_environment`)."""
    env = collect_environment(torch_facts)
    if config.threads is not None:  # the cases ran with these, not this process's default
        env["threads"] = config.threads
    if config.policy.clock == "cpu":  # CPU time is not comparable with wall time
        env["clock"] = config.policy.clock
    env["fingerprint"] = fingerprint(env)
    return env


def assemble_run(config: RunConfig, results: list[Result],
                 preflight: Preflight | None = None, env: Mapping | None = None) -> Run:
    env = dict(env) if env is not None else run_environment(config)
    if preflight is not None:
        env["preflight"] = preflight.to_dict()
    ci = {**ci_info(), **({"shard": config.shard} if config.shard else {})}
    return new_run(results, git=git_info(), ci=ci, env=env, config=config.describe())
