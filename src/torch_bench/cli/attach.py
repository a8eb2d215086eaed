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
from torch_bench.results.schema import Run


def add_attach_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--attach-to", metavar="DATA_DIR",
                        help=f"keep a small summary of the {what} as a note of a stored run "
                             "in this data folder (the dashboard shows it at the run's change "
                             "point); needs --run")
    parser.add_argument("--run", metavar="RUN_ID",
                        help="the stored run --attach-to attaches to (`torch-bench data list`)")


def attach_target(args: argparse.Namespace) -> tuple[Path, Run] | None:
    """The data folder and stored run of `--attach-to`/`--run` (None without them), checked
    before the command spends any time."""
    if bool(args.attach_to) != bool(args.run):
        raise UserError("--attach-to and --run go together")
    if not args.attach_to:
        return None
    from torch_bench.store.notes import find_run

    root = Path(args.attach_to)
    if not root.is_dir():
        raise UserError(f"--attach-to: {args.attach_to}: no such data folder")
    return root, find_run(root, args.run)


def attach(target: tuple[Path, Run] | None,
           make_note: Callable[[str], dict[str, Any] | None]) -> None:
    """Write the note `make_note(run id)` gives (None: nothing worth keeping)."""
    if target is None:
        return
    from torch_bench.store.notes import write_note

    root, run = target
    note = make_note(run.run_id)
    if note is None:
        print(f"nothing to attach to run {run.run_id}", file=sys.stderr)
        return
    path = write_note(root, run, note)
    print(f"attached the {note['kind']} note to run {run.run_id}: {path}", file=sys.stderr)
