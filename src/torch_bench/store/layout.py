"""Where things live inside the data folder (on the data branch or a plain folder).

    <data>/runs/<YYYY>/<MM>/<run_id>.json          canonical run document, never rewritten
    <data>/exports/<YYYY>/<MM>/<run_id>.oss.json   OSS export of that run
    <data>/exports/<YYYY>/<MM>/<run_id>.aipep.txt  AI-PEP export of that run

Every run adds new files only, so writers on different runners never touch the same path.
The dashboard's JavaScript does not read these paths; it reads the site's own data files.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from torch_bench.results.schema import Run

RUNS_DIR = "runs"
EXPORTS_DIR = "exports"


def _month(run: Run) -> PurePosixPath:
    year, month = run.created_at[:4], run.created_at[5:7]
    return PurePosixPath(year, month)


def run_path(run: Run) -> PurePosixPath:
    return PurePosixPath(RUNS_DIR) / _month(run) / f"{run.run_id}.json"


def export_paths(run: Run) -> dict[str, PurePosixPath]:
    base = PurePosixPath(EXPORTS_DIR) / _month(run)
    return {"oss": base / f"{run.run_id}.oss.json", "aipep": base / f"{run.run_id}.aipep.txt"}


def run_files(root: Path) -> list[Path]:
    """All run documents under a data folder, in a stable order."""
    return sorted((root / RUNS_DIR).glob("*/*/*.json"))
