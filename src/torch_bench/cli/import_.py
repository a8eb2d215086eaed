"""`torch-bench import`: results another tool wrote, as a run document."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from torch_bench.boundary import plain_text
from torch_bench.errors import UserError
from torch_bench.fileio import read_text
from torch_bench.formats import IMPORTERS, RUN_IMPORTERS, importer
from torch_bench.formats.aipep import CLAIMED_UNIT_WARNING
from torch_bench.formats.github_action_benchmark import HISTORY_IMPORTERS
from torch_bench.formats.gzipped import read_maybe_gzipped
from torch_bench.formats.provenance import file_provenance
from torch_bench.formats.safety import guarded
from torch_bench.measure.environment import collect_environment
from torch_bench.metrics import MEMORY_TO_MB, TIME_TO_MS, get_metric
from torch_bench.provenance import ci_info, default_branch, git_info
from torch_bench.results.document import save_run
from torch_bench.results.schema import ParamValue, Run, new_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.layout import DATA_FOLDER

# formats whose files do not name the parameters of what they measured
PARAMETRISED = ("oss", "aipep")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="turn other tools' output (OSS, AI-PEP, pytest-benchmark, asv, "
             "github-action-benchmark, PyTorch's v3 records) into runs",
        description="Read results another tool wrote and save them as a run document. The "
                    "commit, date and machine the file records are kept (asv, "
                    "pytest-benchmark); this machine and checkout are recorded only with "
                    "--env here (the tool ran here moments ago).",
        epilog="examples (fastrnns on CPU prints seconds labelled ms; --suite rnns and the "
               "sizes join the native rnns series): torch-bench import fastrnns.txt --format "
               "aipep --unit s --suite rnns --param seq_length=100 --param device=cpu "
               "--out results.json  |  "
               "(a whole github-action-benchmark history, one run per suite entry, into a data "
               "folder) torch-bench import data.js --format github-action-benchmark --out data  |  "
               "(PyTorch's v3 records, JSON lines, plain or gzipped) torch-bench import "
               "records.json.gz --format pytorch-v3 --out results.json",
    )
    parser.add_argument("source", metavar="FILE", help="file to read")
    parser.add_argument("--format", required=True,
                        choices=sorted([*IMPORTERS, *HISTORY_IMPORTERS, *RUN_IMPORTERS]))
    parser.add_argument("--unit", choices=[*TIME_TO_MS, *MEMORY_TO_MB],
                        help="what the values really are, overriding what the file says")
    parser.add_argument("--metric", help="metric the values measure (default: time, or "
                                         "peak_memory for memory units)")
    parser.add_argument("--suite", type=plain_text(),
                        help="suite name to file them under (default: the tool's "
                             "name, each record's benchmark name for pytorch-v3, or "
                             "'imported' for OSS and AI-PEP)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter every imported result gets, for what the file does "
                             "not say (sizes, device, dtype); repeatable")
    parser.add_argument("--env", choices=["file", "here"], default="file",
                        help="file (default): the machine and commit the file records, if any; "
                             "here: this machine and this checkout's commit")
    parser.add_argument("--no-env", action="store_true",
                        help="record no machine at all, not even the file's")
    parser.add_argument("--branch", metavar="NAME", type=plain_text(),
                        help="branch the results belong to (default: the file's, else for a "
                             "history format this repository's default branch, else main)")
    parser.add_argument("--out", metavar="PATH",
                        help="run document to write (default results.json); for a history "
                             f"format, the data folder to add the runs to (default "
                             f"{DATA_FOLDER}); for pytorch-v3 records of several jobs, or "
                             "an existing folder, a data folder too")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.format in HISTORY_IMPORTERS:
        return handle_history(args)
    if args.format in RUN_IMPORTERS:
        return handle_runs(args)
    if args.metric:
        get_metric(args.metric)
    text = read_text(args.source)
    named = {"suite": args.suite} if args.suite else {}
    params = parse_params(args.param)
    if params:
        if args.format not in PARAMETRISED:
            raise UserError(f"--param: not used with --format {args.format} (the file names "
                            "its parameters)")
        named["params"] = params
    results = importer(args.format)(text, source=args.source, unit=args.unit, **named,
                                    metric=args.metric)
    console = Console(stderr=True)
    if args.format == "aipep" and args.unit is None:
        console.print(f"[bold yellow]warning[/]: {CLAIMED_UNIT_WARNING}", highlight=False)
    read_provenance = guarded(lambda text, source: file_provenance(args.format, text),
                              args.format)
    recorded = read_provenance(text, source=args.source)
    here = args.env == "here"
    git = {**(git_info() if here else {}), **recorded.git}
    if args.branch:
        git["branch"] = args.branch
    env = {} if args.no_env else collect_environment() if here else dict(recorded.env)
    run = new_run(results, git=git, ci=ci_info() if here else {}, env=env,
                  created_at=recorded.created_at,
                  config={"imported_from": {"format": args.format, "file": args.source,
                                            "unit": args.unit, "env": args.env}})
    out = args.out or "results.json"
    console.print(f"imported {len(results)} results; wrote {save_run(run, out)}",
                  markup=False, highlight=False)
    return 0


def parse_params(pairs: list[str]) -> dict[str, ParamValue]:
    """`--param key=value` pairs; numbers become numbers, as the native suites record them."""
    params: dict[str, ParamValue] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--param: expected KEY=VALUE, got {pair!r}")
        params[key.strip()] = _param_value(text.strip())
    return params


def _param_value(text: str) -> ParamValue:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def handle_history(args: argparse.Namespace) -> int:
    """A history format gives many runs, each with its own commit and date: they go into a
    data folder (the layout the data branch uses), ready for `torch-bench store`."""
    for flag, value in (("--unit", args.unit), ("--metric", args.metric)):
        if value:
            raise UserError(f"{flag}: not used with --format {args.format} (the file says "
                            f"what each value is)")
    if args.param:
        raise UserError(f"--param: not used with --format {args.format}")
    branch = args.branch or default_branch() or "main"
    read_history = guarded(HISTORY_IMPORTERS[args.format], args.format)
    runs = read_history(read_text(args.source), source=args.source, branch=branch)
    out = args.out or DATA_FOLDER
    report = store_in_folder(runs, out)
    results = sum(len(run.results) for run in runs)
    Console(stderr=True).print(
        f"imported {len(runs)} runs ({results} results) into {out}: {len(report.added)} new, "
        f"{len(report.present)} already there; filed as branch {branch!r}", highlight=False)
    return 0



def handle_runs(args: argparse.Namespace) -> int:
    """Records that say their own commit, job and machine give whole runs: one run goes to a
    run document, the runs of several jobs (or any, with --out naming a folder) into a data
    folder, as a history format's do."""
    _refuse_per_value_flags(args)
    read_runs = guarded(RUN_IMPORTERS[args.format], args.format)
    named = {"suite": args.suite} if args.suite else {}
    runs = read_runs(read_maybe_gzipped(args.source), source=args.source, **named)
    runs = [_with_provenance(run, args) for run in runs]
    console = Console(stderr=True)
    if len(runs) == 1 and not (args.out and Path(args.out).is_dir()):
        out = args.out or "results.json"
        console.print(f"imported {len(runs[0].results)} results; wrote {save_run(runs[0], out)}",
                      markup=False, highlight=False)
        return 0
    if args.out and (args.out.endswith(".json") or Path(args.out).is_file()):
        raise UserError(f"--out: {args.source} holds the records of {len(runs)} runs (jobs); "
                        f"give a data folder to add them to (default {DATA_FOLDER})")
    return _store_runs(runs, args.out or DATA_FOLDER, console)


def _refuse_per_value_flags(args: argparse.Namespace) -> None:
    for flag, value in (("--unit", args.unit), ("--metric", args.metric)):
        if value:
            raise UserError(f"{flag}: not used with --format {args.format} (the file says "
                            f"what each value is)")
    if args.param:
        raise UserError(f"--param: not used with --format {args.format} (the file names "
                        "its parameters)")


def _with_provenance(run: Run, args: argparse.Namespace) -> Run:
    """The run with what the flags say: --env here (this machine; the file's commit still
    wins over this checkout's), --no-env, --branch."""
    here = args.env == "here"
    git = {**(git_info() if here else {}), **run.git}
    if args.branch:
        git["branch"] = args.branch
    env = {} if args.no_env else collect_environment() if here else run.env
    return replace(run, git=git, env=env)


def _store_runs(runs: list[Run], out: str, console: Console) -> int:
    report = store_in_folder(runs, out)
    results = sum(len(run.results) for run in runs)
    console.print(f"imported {len(runs)} runs ({results} results) into {out}: "
                  f"{len(report.added)} new, {len(report.present)} already there",
                  markup=False, highlight=False)
    return 0
