"""The files one run adds to a data folder: its canonical document and its exports, as bytes
keyed by their path in the folder. Pure: nothing here touches the disk or git."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from torch_bench.errors import InvalidDocument
from torch_bench.formats import exporter
from torch_bench.results.schema import Run
from torch_bench.results.validate import problems
from torch_bench.store.layout import export_paths, run_path


def document_text(run: Run) -> str:
    """The canonical document exactly as `save_run` writes it."""
    return json.dumps(run.to_dict(), indent=1, sort_keys=False) + "\n"


def check_run(run: Run, source: str) -> None:
    """Refuse an invalid run before anything is written or committed."""
    found = problems(run.to_dict())
    if found:
        raise InvalidDocument(f"{source}: refusing to store an invalid document: {found[0]}")


def export_files(run: Run) -> dict[PurePosixPath, bytes]:
    return {path: exporter(name)(run).encode() for name, path in export_paths(run).items()}


def run_files_of(run: Run) -> dict[PurePosixPath, bytes]:
    """Every file the run adds, canonical document first. An invalid run is refused."""
    check_run(run, f"run {run.run_id}")
    return {run_path(run): document_text(run).encode(), **export_files(run)}
