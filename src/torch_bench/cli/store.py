"""`torch-bench store`: append run documents to the data branch (or a plain folder)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from torch_bench.boundary import number
from torch_bench.errors import UserError
from torch_bench.results.document import load_run
from torch_bench.results.schema import Run
from torch_bench.store.access import credentials_for, default_remote
from torch_bench.store.documents import check_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.layout import ARCHIVE_DIR, DATA_FOLDER, RUNS_DIR
from torch_bench.store.reader import load_history
from torch_bench.store.remote import GaveUp, StoreReport, Target, store_runs
from torch_bench.store.retry import RetryPolicy, display_url


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "store",
        help="append runs to the data branch (or a folder)",
        description="Append run documents to a data branch: each run adds its own files "
                    "(canonical document, OSS and AI-PEP exports), so writers on many runners "
                    "never conflict; a push that loses a race is rebuilt on the new tip and "
                    "retried. Storing a run twice adds nothing.",
        epilog="examples: torch-bench store results.json  |  torch-bench store shard-*.json "
               "--remote ../bench-data.git --branch results  |  torch-bench store results.json "
               "--to-folder site/data",
    )
    parser.add_argument("sources", nargs="+", metavar="RESULTS",
                        help="run documents, or data folders whose runs to store")
    parser.add_argument("--remote", metavar="URL|PATH",
                        help="git remote to push to (default: this repository's, from "
                             "GITHUB_REPOSITORY on Actions, else the 'origin' remote)")
    parser.add_argument("--branch", default="gh-pages", help="data branch (default gh-pages)")
    parser.add_argument("--folder", default=DATA_FOLDER,
                        help=f"data folder inside the branch (default {DATA_FOLDER}, as the "
                             "Action's data-folder)")
    parser.add_argument("--to-folder", metavar="DIR",
                        help="write into this plain folder instead; no git")
    parser.add_argument("--retry-for", type=number(0, 7 * 86_400, unit="s"),
                        default=RetryPolicy.budget,
                        metavar="SECONDS",
                        help=f"keep retrying a push that lost the race to other writers for "
                             f"up to this long (default {RetryPolicy.budget:g}); giving up "
                             f"exits with status 1")
    parser.add_argument("--attempts", type=number(1, 1_000_000, integer=True), default=None,
                        help="also stop after this many pushes (default: no limit)")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", metavar="NAME",
                        help="environment variable holding the token for HTTPS remotes "
                             "(default GITHUB_TOKEN); never pass a token on the command line")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.attempts is not None and args.attempts < 1:
        raise UserError(f"--attempts: must be at least 1, got {args.attempts}")
    if not math.isfinite(args.retry_for) or args.retry_for < 0:
        raise UserError(f"--retry-for: expected a number of seconds >= 0, got {args.retry_for}")
    runs = load_sources(args.sources)
    if args.to_folder:
        report = store_in_folder(runs, args.to_folder)
        print(describe(report, args.to_folder), file=sys.stderr)
        return 0
    remote = args.remote or default_remote(os.environ)
    target = Target(remote, args.branch, args.folder)
    policy = RetryPolicy(budget=args.retry_for, attempts=args.attempts)
    try:
        report = store_runs(runs, target,
                            credentials_for(remote, os.environ.get(args.token_env)), policy,
                            log=lambda line: print(line, file=sys.stderr))
    except GaveUp as exc:
        print(f"torch-bench: error: {exc}", file=sys.stderr)
        return GaveUp.exit_status
    print(describe(report, f"{display_url(remote)} (branch {args.branch}, folder "
                           f"{args.folder or '/'})"), file=sys.stderr)
    return 0


def load_sources(sources: list[str]) -> list[Run]:
    """Every run named, validated before anything is written; duplicates counted once."""
    runs: dict[str, Run] = {}
    for source in sources:
        found = load_folder(Path(source)) if Path(source).is_dir() else (load_run(source),)
        for run in found:
            check_run(run, source)
            runs.setdefault(run.run_id, run)
    return list(runs.values())


def load_folder(folder: Path) -> tuple[Run, ...]:
    """The runs of a data folder (`runs/YYYY/MM/*.json` and archives), or else of every
    `*.json` file under the folder (run documents as `run --out` writes them, such as the
    downloaded artifacts of a matrix of shards). Any file that is not a run document stops
    everything, named with what is wrong with it."""
    if any((folder / name).is_dir() for name in (RUNS_DIR, ARCHIVE_DIR)):
        history = load_history(folder)
        if history.problems:
            raise UserError(f"{history.problems[0]} (fix or remove it; nothing was stored)")
        if not history.runs:
            raise UserError(f"{folder}: no run documents in this data folder (runs/ and "
                            f"archive/ hold none); nothing was stored")
        return history.runs
    files = sorted(path for path in folder.rglob("*.json") if path.is_file())
    if not files:
        raise UserError(f"{folder}: no run documents in this folder (neither a data folder "
                        f"with runs/YYYY/MM/*.json nor any *.json file); nothing was stored")
    return tuple(_load_document(path) for path in files)


def _load_document(path: Path) -> Run:
    try:
        return load_run(path)
    except UserError as exc:
        raise UserError(f"{exc} (every *.json file in a folder given to store must be a run "
                        f"document; nothing was stored)") from None


def describe(report: StoreReport, where: str) -> str:
    parts = [f"stored {len(report.added)} run{'s' if len(report.added) != 1 else ''} "
             f"in {where}"]
    if report.commit:
        parts.append(f"commit {report.commit[:12]}, attempt {report.attempts}")
    if report.present:
        parts.append(f"{len(report.present)} already there")
    return "; ".join(parts)
