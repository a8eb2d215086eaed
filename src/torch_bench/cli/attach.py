"""`--attach-to DATA_DIR --run RUN_ID` of `explain` and `bisect`: keep the command's finding
as a run note (results/run_notes.py) beside a stored run, for the dashboard to show at the
change point that run begins."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch_bench.errors import UserError


def add_attach_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--attach-to", metavar="DATA_DIR",
                        help=f"keep a small summary of the {what} as a note of a stored run "
                             "in this data folder (the dashboard shows it at the run's change "
                             "point); needs --run")
    parser.add_argument("--run", metavar="RUN_ID",
                        help="the stored run --attach-to attaches to (`torch-bench data list`)")


def check_attach(args: argparse.Namespace) -> None:
    if bool(args.attach_to) != bool(args.run):
        raise UserError("--attach-to and --run go together")
    if args.attach_to and not Path(args.attach_to).is_dir():
        raise UserError(f"--attach-to: {args.attach_to}: no such data folder")


def attach(args: argparse.Namespace, make_note: Callable[[str], dict[str, Any] | None]) -> None:
    """Write the note `make_note(run id)` gives (None: nothing worth keeping)."""
    if not args.attach_to:
        return
    from torch_bench.store.notes import find_run, write_note

    root = Path(args.attach_to)
    run = find_run(root, args.run)
    note = make_note(run.run_id)
    if note is None:
        print(f"nothing to attach to run {run.run_id}", file=sys.stderr)
        return
    path = write_note(root, run, note)
    print(f"attached the {note['kind']} note to run {run.run_id}: {path}", file=sys.stderr)
