"""`data export --parquet`: the whole history as one Parquet dataset, either one file or a
folder of one file per month (both read as one dataset by pandas, polars, DuckDB and
ClickHouse). Every run counts once, in time order, with the samples the history keeps."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby
from pathlib import Path

from torch_bench.fileio import write_bytes_atomic
from torch_bench.results.schema import Run
from torch_bench.store import columnar
from torch_bench.store.layout import ARCHIVE_SUFFIX, month_of

METADATA = {"month": None, "samples": "as stored"}


def by_month(runs: Iterable[Run]) -> list[tuple[str, list[Run]]]:
    """Runs (oldest first) in batches of one month each, oldest first."""
    return [(month, list(batch)) for month, batch in groupby(runs, key=month_of)]


def export_parquet(runs: Sequence[Run], target: Path) -> list[Path]:
    """Write `runs` (oldest first) to `target`: one file when it ends in `.parquet`, else a
    folder of `<YYYY>-<MM>.parquet` files. The files written."""
    months = by_month(runs)
    if target.suffix == ARCHIVE_SUFFIX:
        write_bytes_atomic(target, columnar.encode_many((batch for _, batch in months),
                                                        METADATA))
        return [target]
    written = []
    for month, batch in months:
        path = target / f"{month.replace('/', '-')}{ARCHIVE_SUFFIX}"
        write_bytes_atomic(path, columnar.encode(batch, {**METADATA, "month": month}))
        written.append(path)
    return written
