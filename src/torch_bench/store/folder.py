"""Appending runs to a plain data folder, for users who publish it some other way."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.fileio import write_text_atomic
from torch_bench.results.schema import Run
from torch_bench.store.documents import run_files_of
from torch_bench.store.remote import StoreReport


def store_in_folder(runs: Sequence[Run], root: str | os.PathLike) -> StoreReport:
    """Write each run's files unless the run is already there (same run id, same path).
    Files are written atomically, exports first, so a reader sees a whole document or none."""
    folder = Path(root)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder}: is a file, expected a data folder")
    added, present = [], []
    for run in runs:
        files = run_files_of(run)
        canonical = next(iter(files))
        if (folder / canonical).exists():
            present.append(run.run_id)
            continue
        try:
            for path, data in reversed(files.items()):
                write_text_atomic(folder / path, data.decode())
        except OSError as exc:
            raise UserError(f"{folder}: cannot write run {run.run_id} "
                            f"({exc.strerror or exc}); {len(added)} runs were stored before "
                            f"it") from None
        added.append(run.run_id)
    return StoreReport(tuple(added), tuple(present), None, 1)
