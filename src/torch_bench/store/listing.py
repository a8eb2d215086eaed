"""`data list`: the stored runs, or the benchmarks, as aligned text lines."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from torch_bench.store.scan import Stored


def _table(header: Sequence[str], rows: list[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column)
              for column in zip(header, *rows, strict=True)]
    return ["  ".join(str(cell).ljust(width)
                      for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in (header, *rows)]


def format_runs(stored: Iterable[Stored]) -> list[str]:
    ordered = sorted(stored, key=lambda s: (s.run.created_at, s.run.run_id))
    rows = [(s.run.created_at, s.run.run_id, s.run.git.get("branch") or "-",
             (s.run.git.get("sha") or "-")[:10], (s.run.fingerprint or "-")[:12],
             str(len(s.run.results)), "archive" if s.archived else "file")
            for s in ordered]
    lines = _table(("created", "run", "branch", "sha", "fingerprint", "results", "kept in"),
                   rows)
    return [*lines, f"{len(rows)} runs"]


def format_benchmarks(stored: Iterable[Stored]) -> list[str]:
    counts: dict[str, int] = defaultdict(int)
    latest: dict[str, str] = {}
    for s in stored:
        for result in s.run.results:
            counts[result.benchmark_id] += 1
            latest[result.benchmark_id] = max(latest.get(result.benchmark_id, ""),
                                              s.run.created_at)
    rows = [(bench, str(counts[bench]), latest[bench]) for bench in sorted(counts)]
    return [*_table(("benchmark", "results", "latest"), rows), f"{len(rows)} benchmarks"]
