"""Blocks of rows from many data files join into one history in time order, whatever order
the files were read in and however their runs interleave in time; a run id met twice counts
once, its first copy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from torch_bench.render.columns import block_of_runs, join_blocks
from torch_bench.results.schema import failed, measured, new_run

BENCHMARKS = [("lstm", 1.0), ("gru", 2.0), ("cnn", 3.0)]


def a_run(run_id: int, hour: int, copy: int, measured_names: list[str]):
    results = [measured("rnns", name, "forward_time", [level + 0.01 * copy])
               if name != "cnn" else failed("cnns", name, "forward_time", "oom", "out of memory")
               for name, level in BENCHMARKS if name in measured_names]
    return new_run(results, run_id=f"run-{run_id}", created_at=f"2026-01-01T{hour:02d}:00:00Z",
                   git={"branch": "main"})


FILES = st.lists(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 23),
                                    st.lists(st.sampled_from([n for n, _ in BENCHMARKS]),
                                             unique=True)),
                          min_size=0, max_size=4), max_size=6)


def expected_rows(files) -> list[tuple]:
    """Each run's results, first copy of each run id, runs by (created_at, run id)."""
    first: dict[str, object] = {}
    for copy, runs in enumerate(files):
        for run in runs:
            first.setdefault(run.run_id, (run, copy))
    rows = []
    for run, _ in sorted(first.values(), key=lambda item: (item[0].created_at, item[0].run_id)):
        rows += [(run.run_id, r.benchmark_id, r.status, r.error,
                  None if r.summary is None else r.summary.median) for r in run.results]
    return rows


@settings(max_examples=80, deadline=None)
@given(FILES)
def test_rows_join_in_time_order_with_the_first_copy_of_each_run(drawn):
    files = [[a_run(run_id, hour, copy, names) for run_id, hour, names in runs]
             for copy, runs in enumerate(drawn)]
    shared: dict = {}
    columns = join_blocks([block_of_runs(runs, shared) for runs in files])
    got = [(columns.runs[run]["run_id"], columns.descriptors[desc].benchmark_id,
            columns.statuses[status], None if error < 0 else columns.errors[error],
            None if n < 0 else median)
           for run, desc, status, error, n, median in zip(
               columns.rows["run"].tolist(), columns.rows["desc"].tolist(),
               columns.rows["status"].tolist(), columns.rows["error"].tolist(),
               columns.rows["n"].tolist(), columns.rows["median"].tolist(), strict=True)]
    assert got == expected_rows(files)
    assert [r["created_at"] for r in columns.runs] == sorted(r["created_at"]
                                                            for r in columns.runs)
