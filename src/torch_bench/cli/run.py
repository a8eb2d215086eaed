"""`torch-bench run`: run suites and write the results document and its exports."""

from __future__ import annotations

import argparse
import signal
from dataclasses import replace

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from torch_bench import boundary
from torch_bench.cli.case_progress import DEFAULT_EVERY_S, CaseWatch, bounds_text
from torch_bench.cli.outputs import (
    add_output_arguments,
    check_output_paths,
    exports_to_stdout,
    write_outputs,
)
from torch_bench.cli.pipes import report_console as report_console_for
from torch_bench.cli.preflight import add_cpu_busy_limit
from torch_bench.cli.run_guards import Stopped, stop_on_signals
from torch_bench.cli.run_hf import (
    add_hf_arguments,
    check_hf_outputs,
    log_path,
    print_environment,
    write_hf_outputs,
)
from torch_bench.cli.seed_flags import (
    SEED_SPELLINGS,
    JoinedList,
    add_seed_flags,
    seed_mode_options,
)
from torch_bench.config import RunConfig, build_run_config, load_yaml_config
from torch_bench.config_file import flag_type
from torch_bench.errors import UserError
from torch_bench.execute.calibration import (
    is_one_document,
    read_calibration_runs,
    recorded_loops,
)
from torch_bench.execute.isolation import case_torch_facts
from torch_bench.measure.case_folders import sweep_stale_case_folders
from torch_bench.measure.clock_choice import CHOICES, ClockChoice, choose_clock
from torch_bench.measure.preflight import (
    Preflight,
    Thresholds,
    evaluate_interruptions,
    run_preflight,
    with_findings,
)
from torch_bench.measure.sanity import with_invalid_values_as_errors
from torch_bench.presets import PRESETS, Preset, preset, under
from torch_bench.presets import describe as describe_preset
from torch_bench.report.console import results_table
from torch_bench.runner import assemble_run, execute, plan_cases, run_environment
from torch_bench.suites import SUITE_MODULES, get_suite

TIMING_FLAGS = {
    "warmup": ("--warmup", flag_type("warmup"), "untimed calls before measuring (default 3)"),
    "min_repeats": ("--min-repeats", flag_type("min_repeats"),
                    "fewest samples per metric, even past --max-time (default 10)"),
    "max_repeats": ("--max-repeats", flag_type("max_repeats"),
                    "most samples per metric (default 200)"),
    "max_time_s": ("--max-time", flag_type("max_time_s"),
                   "time budget per metric, seconds, once --min-repeats are in (default 3)"),
    "nloops": ("--nloops", flag_type("nloops"),
               "exactly N samples of one call each, as fastrnns times (default: adaptive timing)"),
    "target_rel_iqr": ("--target-spread", flag_type("target_rel_iqr"),
                       "stop early when IQR/median falls below this (default 0.02)"),
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run benchmark suites",
        description="Run benchmark suites, each case in its own process, and write the run "
                    "document (JSON) plus any exports asked for.",
        epilog="example: torch-bench run --suite rnns --seq-length 20 --hidden-size 64 "
               "--out results.json --oss oss.json --aipep aipep.txt",
    )
    parser.add_argument("--suite", action="append", metavar="NAME[,NAME]",
                        help=f"suites to run: {', '.join(sorted(SUITE_MODULES))}, or a module "
                             "path defining SUITE (repeatable)")
    parser.add_argument("--config", metavar="FILE", help="YAML configuration; flags override it")
    parser.add_argument("--preset", choices=tuple(PRESETS),
                        help="every default set to a seed tool's own: hf (Hugging Face's "
                             "benchmark utilities), fastrnns, dynamo (TorchBench runner), "
                             "training (dynamo's training_loss.py); printed at the start, "
                             "--config and flags override it (docs/migration.md)")
    parser.add_argument("--device", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--filter", metavar="REGEX", help="run only cases whose suite/name match")
    parser.add_argument("--exclude", action="append", metavar="REGEX",
                        help="skip cases whose suite/name match (repeatable)")
    parser.add_argument("--exclude-exact", action="append", metavar="NAME",
                        help="skip the case with exactly this name or suite/name (repeatable)")
    parser.add_argument("--total-partitions", type=flag_type("total_partitions"), metavar="N",
                        help="split the selected cases into N shards (by sorted suite/name)")
    parser.add_argument("--partition-id", type=flag_type("partition_id"), metavar="I",
                        help="run shard I of --total-partitions, counting from 0")
    parser.add_argument("--dry-run", action="store_true", help="list the cases and stop")
    parser.add_argument("--threads", type=flag_type("threads"), metavar="N",
                        help="torch intra-op threads for every case (default: torch's own; on a "
                             "shared or busy CPU, 1 gives far steadier numbers)")
    parser.add_argument("--clock", choices=CHOICES, default="auto",
                        help="what the samples are: process CPU time (cpu), which does not "
                             "count the time other processes take on a shared CPU; wall time "
                             "(wall; CUDA events on a GPU); or auto (default): cpu on a CPU "
                             "device with --threads 1, wall otherwise. See "
                             "docs/measurement-clock.md")
    parser.add_argument("--no-speed-reference", action="store_true",
                        help="on the CPU clock, do not time the fixed reference block after "
                             "every sample (it lets the verdicts divide out the machine's own "
                             "speed changes; docs/measurement-clock.md)")
    parser.add_argument("--processes", type=flag_type("processes"), metavar="N",
                        help="worker processes each case's samples are spread over, one after "
                             "another (default 3; 1 = one process per case)")
    parser.add_argument("--calibration", metavar="FILE_OR_DATA_FOLDER",
                        help="reuse the calls per sample recorded in this run document (trusted "
                             "or not), or by the latest trusted run on this environment in this "
                             "data folder, so every run times the same loop (default: "
                             "calibrate afresh)")
    parser.add_argument("--case-start", choices=("spawn", "fork"), default="spawn",
                        help="how a case's process starts: a fresh interpreter (spawn, "
                             "default) or forked from a server that imported torch and the "
                             "suite once (fork, POSIX: about 2 s less a case; the suite module "
                             "must do no torch work when imported)")
    parser.add_argument("--timeout", type=flag_type("timeout_s"), metavar="S",
                        help="seconds a case may take before it is stopped (default 900)")
    parser.add_argument("--memory-limit-mb", type=flag_type("memory_limit_mb"), metavar="MB",
                        help="address space a case may add, beyond its start-up with torch "
                             "loaded, before allocations fail (oom)")
    parser.add_argument("--token-env", action="append", default=[], metavar="NAME",
                        help="an environment variable holding a secret (repeatable): kept from "
                             "case processes and masked in captured text, like GITHUB_TOKEN")
    parser.add_argument("--no-preflight", dest="preflight", action="store_false",
                        help="skip the pre-flight check of GPU and CPU state before measuring")
    add_cpu_busy_limit(parser)
    parser.add_argument("--progress-every", type=boundary.number(0.1, 86_400, unit="s"),
                        default=DEFAULT_EVERY_S, metavar="S",
                        help="where no live progress bar is drawn (a CI log, a file), say every "
                             "S seconds which case is running, for how long and what bounds it "
                             f"(default {DEFAULT_EVERY_S:g})")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when any case failed (skipped is not failed)")
    timing = parser.add_argument_group("timing")
    for dest, (flag, kind, text) in TIMING_FLAGS.items():
        timing.add_argument(flag, dest=dest, type=kind, help=text)
    _add_suite_options(parser)
    add_output_arguments(parser, default_out="results.json")
    add_hf_arguments(parser)
    add_seed_flags(parser)
    parser.set_defaults(handler=handle)


def _add_suite_options(parser: argparse.ArgumentParser) -> None:
    seen: dict[str, list[str]] = {}
    helps: dict[str, str] = {}
    defaults: dict[str, dict[str, str]] = {}
    aliases: dict[str, list[str]] = {}
    switches: set[str] = set()
    lists: set[str] = set()
    for name in sorted(SUITE_MODULES):
        for option in get_suite(name).options:
            seen.setdefault(option.name, []).append(name)
            helps.setdefault(option.name, option.help)
            defaults.setdefault(option.name, {})[name] = _shown(option.default)
            if isinstance(option.default, bool):  # `--flag` alone means true, as the seeds'
                switches.add(option.name)
            if isinstance(option.default, tuple):  # `--flag a b` too, as the seeds' lists
                lists.add(option.name)
            aliases.setdefault(option.name, [])
            aliases[option.name] += [a for a in option.aliases if a not in aliases[option.name]]
    group = parser.add_argument_group("suite options")
    for option_name, suites in seen.items():
        flags = ["--" + n.replace("_", "-") for n in (option_name, *aliases[option_name])]
        flags += SEED_SPELLINGS.get(option_name, ())
        text = f"{helps[option_name]} {shown_defaults(defaults[option_name])}"
        bare = {"nargs": "?", "const": "true"} if option_name in switches else {}
        if option_name in lists:
            bare = {"nargs": "+", "action": JoinedList}
        group.add_argument(*flags, dest=f"suite_opt_{option_name}",
                           metavar="VALUE", help=f"[{', '.join(suites)}] {text}", **bare)


def shown_defaults(per_suite: dict[str, str]) -> str:
    """`(default X)`, or each suite's own default when they differ."""
    values = set(per_suite.values())
    if len(values) == 1:
        return f"(default {values.pop()})"
    return "(default " + "; ".join(f"{suite}: {value}" for suite, value in per_suite.items()) + ")"


def _shown(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def _suite_list(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run configuration of `torch-bench run`'s flags, over `--config`, over `--preset`
    (no torch work: the device a preset would move to the GPU is settled later)."""
    yaml_data = load_yaml_config(args.config) if args.config else None
    if getattr(args, "preset", None):
        yaml_data = under(yaml_data or {}, preset(args.preset).config)
    from_file = (yaml_data or {}).get("suites")
    suites = _suite_list(args.suite) or _suite_list(
        [from_file] if isinstance(from_file, str) else from_file)
    cli_options = {k[len("suite_opt_"):]: v for k, v in vars(args).items()
                   if k.startswith("suite_opt_") and v is not None}
    if suites:
        declared = {ref: {o.name for o in get_suite(ref).options} for ref in suites}
        cli_options.update(seed_mode_options(args, suites, declared))
    return build_run_config(
        yaml_data=yaml_data,
        yaml_source=args.config or (f"--preset {args.preset}" if getattr(args, "preset", None)
                                    else "config"),
        suites=_suite_list(args.suite),
        device=args.device,
        filter=args.filter,
        exclude=args.exclude,
        exclude_exact=args.exclude_exact,
        total_partitions=args.total_partitions,
        partition_id=args.partition_id,
        threads=args.threads,
        processes=args.processes,
        preflight={"cpu_busy_limit": args.cpu_busy_limit}
        if args.cpu_busy_limit is not None else None,
        timing={k: getattr(args, k) for k in TIMING_FLAGS if getattr(args, k) is not None},
        isolation={k: v for k, v in (("timeout_s", args.timeout),
                                     ("memory_limit_mb", args.memory_limit_mb)) if v is not None},
        cli_options=cli_options,
    )


def _preset_device(config: RunConfig, args: argparse.Namespace, chosen: Preset | None,
                   torch_facts: dict) -> RunConfig:
    """The GPU, when the preset's seed runs on it whenever there is one and nothing said
    otherwise."""
    said = args.device is not None or (args.config and "device" in load_yaml_config(args.config))
    if chosen and chosen.gpu_when_available and not said and torch_facts.get("cuda_available"):
        return replace(config, device="cuda")
    return config


def handle(args: argparse.Namespace) -> int:
    check_output_paths(args)
    config = config_from_args(args)
    check_hf_outputs(args, config.suites)
    chosen = preset(args.preset) if args.preset else None
    console = Console(stderr=True)
    if chosen:
        console.print(describe_preset(args.preset, chosen), markup=False, highlight=False,
                      soft_wrap=True)
    config = replace(config, isolation=replace(config.isolation, secret_env=tuple(args.token_env),
                                               case_start=args.case_start))
    torch_facts = case_torch_facts(config.suites[0], config.isolation)
    config = _preset_device(config, args, chosen, torch_facts)
    _check_device(config.device, torch_facts, args.preset if args.device is None else None)
    threads = config.threads if config.threads is not None else torch_facts["threads"]
    clock = choose_clock(args.clock, config.device, threads)
    config = replace(config, policy=replace(
        config.policy, clock=clock.clock,
        reference=clock.clock == "cpu" and not args.no_speed_reference))
    planned = plan_cases(config)
    if not planned and not plan_cases(replace(config, total_partitions=1, partition_id=0)):
        raise UserError("--filter/--exclude: no case matches the selection (see the cases "
                        "with --dry-run and no filter)")
    _print_clock(console, clock)
    if args.dry_run:
        for item in planned:
            print(item.case.label)
        return 0
    if not planned:
        console.print("[yellow]this partition has no case; nothing to run[/]")
    env = run_environment(config, torch_facts)
    loops = _calibration(args.calibration, env.get("fingerprint"), console)
    sweep_stale_case_folders()
    preflight, finished = None, []
    try:
        with stop_on_signals():
            preflight = _preflight(console, config.preflight, clock.clock, threads) \
                if args.preflight else None
            results = _execute_with_progress(planned, config, console, loops, finished,
                                             args.progress_every)
    except (Stopped, KeyboardInterrupt) as stop:
        return _keep_finished(args, config, env, preflight, finished, len(planned), stop,
                              console)
    if preflight is not None:
        preflight = _interruptions(console, preflight, results)
    _warn_waiting(console, results)
    run = assemble_run(config, with_invalid_values_as_errors(results), preflight, env)
    # An export on standard output (`--oss -`) keeps stdout for itself, as fastrnns does.
    report_console = report_console_for(stderr=exports_to_stdout(args),
                                        record=log_path(args) is not None)
    report_console.print(results_table(run.results))
    _print_suite_reports(config, run.results, report_console)
    print_environment(run, args, report_console)
    status = write_outputs(run, args, console)
    write_hf_outputs(run, args, console, report_console)
    failures = [r for r in run.results if not r.ok and r.status != "skipped"]
    return status or (1 if args.strict and failures else 0)


def _keep_finished(args, config, env, preflight, finished: list, planned: int,
                   stop: BaseException, console: Console) -> int:
    """After SIGINT, SIGTERM or SIGHUP: the cases that finished are written, the run marked
    interrupted (its cases stopped, nothing of them outlives it). Exit status 128 + signal."""
    signal_name = str(stop) if isinstance(stop, Stopped) else "SIGINT"
    status = stop.exit_status if isinstance(stop, Stopped) else 128 + signal.SIGINT
    if not finished:
        console.print(f"torch-bench: stopped by {signal_name} before any case finished; "
                      "nothing written", markup=False)
        return status
    run = assemble_run(config, with_invalid_values_as_errors(finished), preflight, env)
    cases = len({(r.suite, r.name, str(sorted(r.params.items()))) for r in finished})
    run = replace(run, config={**run.config, "interrupted": {
        "signal": signal_name, "cases_finished": cases, "cases_planned": planned}})
    console.print(f"torch-bench: stopped by {signal_name}: writing the {cases} of {planned} "
                  f"cases that finished, the run marked interrupted", markup=False)
    write_outputs(run, args, console)
    return status


def _preflight(console: Console, limits: Thresholds, clock: str = "wall",
               threads: int | None = None) -> Preflight:
    report = run_preflight(limits, clock, threads)
    _print_findings(console, report.findings)
    if not report.trusted:
        console.print("[red]pre-flight failed: this run is recorded as untrusted (kept, but not "
                      "used as a baseline or alerted on)[/]")
    return report


def _interruptions(console: Console, report: Preflight, results) -> Preflight:
    """The pre-flight report with what the samples' interruptions say."""
    findings = evaluate_interruptions(results)
    _print_findings(console, findings)
    checked = with_findings(report, findings)
    if report.trusted and not checked.trusted:
        console.print("[red]too many interrupted samples: this run is recorded as untrusted "
                      "(kept, but not used as a baseline or alerted on)[/]")
    return checked


def _print_findings(console: Console, findings) -> None:
    for finding in findings:
        if finding.severity != "ok":
            console.print(f"[yellow]pre-flight {finding.severity}[/]: "
                          f"{escape(finding.message)}")


# On the CPU clock, uninterrupted samples whose CPU time is below this share of their wall
# time spent the rest waiting (I/O, sleep, a lock, another thread, the GPU): unseen work.
WAITING_RATIO = 0.8


def _warn_waiting(console: Console, results) -> None:
    waiting = [r for r in results if r.ok and r.extra.get("clock") == "cpu"
               and isinstance(r.extra.get("cpu_wall_ratio"), (int, float))
               and r.extra["cpu_wall_ratio"] < WAITING_RATIO]
    for result in waiting:
        console.print(f"[yellow]clock[/]: {escape(result.benchmark_id)}: CPU time is "
                      f"{result.extra['cpu_wall_ratio']:.0%} of wall time; the rest is waiting "
                      "the CPU clock does not see (I/O, sleep, other threads, GPU); consider "
                      "--clock wall", highlight=False)


def _print_clock(console: Console, choice: ClockChoice) -> None:
    console.print(f"clock: {escape(choice.why)}", highlight=False)
    if choice.warning:
        console.print(f"[yellow]clock warning[/]: {escape(choice.warning)}", highlight=False)


def _check_device(device: str, torch_facts: dict, preset_name: str | None = None) -> None:
    if device.startswith("cuda") and not torch_facts.get("cuda_available"):
        hint = f" (the default of --preset {preset_name}: pass --device cpu)" \
            if preset_name else ""
        raise UserError(f"--device: {device!r} asked for, but CUDA is not available here{hint}")


def _calibration(source: str | None, fingerprint: str | None, console: Console) -> dict:
    if source is None:
        return {}
    loops = recorded_loops(read_calibration_runs(source), fingerprint,
                           trusted_only=not is_one_document(source))
    console.print(f"calls per sample: reusing the counts of {len(loops)} benchmark(s) "
                  f"recorded in {source}; any other is calibrated")
    return loops


def _execute_with_progress(planned, config, console: Console, loops=None,
                           finished: list | None = None,
                           every: float = DEFAULT_EVERY_S):
    """The results of every case; each case's results are also appended to `finished` as
    soon as it ends, so that an interrupted run keeps them. The running case, its time so
    far and what bounds it are shown (see `case_progress`)."""
    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())
    bounds = bounds_text(config)
    live = console.is_terminal
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("cases", total=len(planned))

        def show(text: str) -> None:
            if live:
                progress.update(task, description=escape(text))
            else:
                progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

        watch = CaseWatch(show, bounds, 1.0 if live else every)
        count = iter(range(1, len(planned) + 1))

        def started(item):
            watch.started(item.case.label)
            progress.update(task, description=escape(item.case.label))
            if not live:
                show(f"[{next(count)}/{len(planned)}] {item.case.label}: started")

        def done(item, results):
            watch.finished()
            if finished is not None:
                finished.extend(results)
            bad = [r.status for r in results if not r.ok]
            if bad:
                progress.console.print(f"{escape(item.case.label)}: [red]{escape(bad[0])}[/] "
                                       f"{escape(results[0].error or '')}")
            progress.advance(task)

        with watch:
            results = execute(planned, config, started, done, loops)
        progress.update(task, description="done")
    return results


def _print_suite_reports(config, results, console: Console) -> None:
    """Each suite's own report (for example per-metric grid tables), as plain text."""
    for ref in config.suites:
        suite = get_suite(ref)
        own = [r for r in results if r.suite == suite.name]
        lines = suite.report_lines(own, config.options.get(ref, {})) if own else []
        if lines:
            console.out("\n".join(lines), highlight=False)
