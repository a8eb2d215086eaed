"""Where things live inside the data folder (on the data branch or a plain folder).

    <data>/runs/<YYYY>/<MM>/<run_id>.json          canonical run document, never rewritten
    <data>/exports/<YYYY>/<MM>/<run_id>.oss.json   OSS export of that run
    <data>/exports/<YYYY>/<MM>/<run_id>.aipep.txt  AI-PEP export of that run
    <data>/archive/<YYYY>/<MM>-<digest>.parquet    runs folded by `torch-bench data compact`
    <data>/archive/<YYYY>/<MM>-<digest>.json.gz    the same, as older versions wrote them
    <data>/notes/<YYYY>/<MM>/<run_id>.<kind>.json  a run's notes (store/notes.py)

Every run adds new files only, so writers on different runners never touch the same path.
The dashboard's JavaScript does not read these paths; it reads the site's own data files.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the Action's comment mode reads the folder's name, and no numpy
    from torch_bench.results.schema import Run

# The data folder's default name everywhere: inside the data branch (the Action's
# `data-folder`, `store --folder`, `site --publish --folder`) and as a local folder
# (`data --data`, `import --out`), so a checkout of the branch works as it is.
DATA_FOLDER = "benchmarks"
OLD_DATA_FOLDER = "data"  # the CLI's default up to 1.0.0

RUNS_DIR = "runs"
EXPORTS_DIR = "exports"
ARCHIVE_DIR = "archive"
ARCHIVE_SUFFIX = ".parquet"
JSON_ARCHIVE_SUFFIX = ".json.gz"  # written before Parquet; read, converted by compaction


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


def archive_files(root: Path) -> list[Path]:
    """All archive files (compacted runs, Parquet or JSON) under a data folder, in a stable
    order."""
    return sorted(path for suffix in (ARCHIVE_SUFFIX, JSON_ARCHIVE_SUFFIX)
                  for path in (root / ARCHIVE_DIR).glob(f"*/*{suffix}"))


def is_data_path(relative: PurePosixPath) -> bool:
    """Whether a path inside a data folder is one `run_files` or `archive_files` lists."""
    parts = relative.parts
    if len(parts) == 4 and parts[0] == RUNS_DIR:
        return parts[3].endswith(".json")
    return len(parts) == 3 and parts[0] == ARCHIVE_DIR and is_archive_name(parts[2])


def is_archive_name(name: str) -> bool:
    return name.endswith((ARCHIVE_SUFFIX, JSON_ARCHIVE_SUFFIX))


def is_json_archive(path: PurePosixPath | Path) -> bool:
    return path.name.endswith(JSON_ARCHIVE_SUFFIX)


def month_of(run: Run) -> str:
    """`YYYY/MM` of the run, the unit of compaction."""
    return str(_month(run))


def archive_path(month: str, digest: str) -> PurePosixPath:
    year, mon = month.split("/")
    return PurePosixPath(ARCHIVE_DIR, year, f"{mon}-{digest}{ARCHIVE_SUFFIX}")
