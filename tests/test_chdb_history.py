"""The Parquet history queried by a real ClickHouse engine (chdb, embedded) gives the same
per-benchmark series of medians, typical medians and change-point counts as the dashboard
computes from the same history (docs/database.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.runs import samples
from torch_bench.analyze.changepoints import find_change_points
from torch_bench.render.build import default_change_point_finder
from torch_bench.render.markers import all_change_marks
from torch_bench.render.model import build_model
from torch_bench.results.schema import failed, measured, new_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.layout import archive_files, run_files
from torch_bench.store.reader import load_history

chdb = pytest.importorskip("chdb")

# Per-benchmark series as the dashboard plots them: successful results with a median, in
# run order; the change-point search looks at the baseline branch's points.
SERIES_SQL = """
SELECT benchmark_id,
       arrayMap(p -> p.3, arraySort(p -> (p.1, p.2),
                groupArray((created_at, run_id, median)))) AS medians,
       quantileExactInclusive(0.5)(median) AS typical
FROM file('{files}', Parquet)
WHERE status IN ('ok', 'pass') AND median IS NOT NULL AND isFinite(median)
      AND branch = 'main'
GROUP BY benchmark_id
ORDER BY benchmark_id
"""


def step_history():
    """36 runs on main over three months: bench0 gets 30% slower at run 18, bench1 faster at
    run 10 and slower again at run 26, bench2 steady; a feature-branch run and a failure."""
    runs = []
    for i in range(36):
        levels = {"bench0": 10.0 * (1.3 if i >= 18 else 1.0),
                  "bench1": 5.0 * (0.7 if 10 <= i < 26 else 1.0), "bench2": 2.0}
        results = [measured("demo", name, "latency", samples(level, 20, 0.01, seed=i * 3 + k),
                            params={"batch": 8})
                   for k, (name, level) in enumerate(levels.items())]
        if i == 7:
            results.append(failed("demo", "bench2", "latency", "oom", "out of memory",
                                  params={"batch": 16}))
        month, day = divmod(i, 12)
        runs.append(new_run(results, created_at=f"2025-{10 + month:02d}-{day + 1:02d}T08:00:00Z",
                            git={"branch": "main", "sha": f"{i:040x}"},
                            env={"fingerprint": "fp"}))
    runs.append(new_run([measured("demo", "bench0", "latency", samples(50.0, 20, 0.01),
                                  params={"batch": 8})],
                        created_at="2025-11-05T09:00:00Z", git={"branch": "feature"},
                        env={"fingerprint": "fp"}))
    return runs


@pytest.mark.slow
def test_clickhouse_on_the_parquet_history_agrees_with_the_dashboard(tmp_path, cli):
    root = tmp_path / "benchmarks"
    store_in_folder(step_history(), root)
    cli("data", "compact", "--before", "2100-01", "--keep-samples", "--data", str(root),
        check=True)
    assert not run_files(root) and len(archive_files(root)) == 3  # all of it in Parquet

    model = build_model(load_history(root))
    marks = all_change_marks(model.series, model.baseline_branch,
                             default_change_point_finder())
    site = {}
    for series in model.series:
        on_main = series.points.median[series.points.on_branch("main")]
        if not on_main.size:  # a benchmark that never succeeded: no series to plot
            continue
        site[series.benchmark_id] = (on_main.tolist(), float(np.median(on_main)),
                                     len(marks[series.key]))

    result = chdb.query(SERIES_SQL.format(files=root / "archive" / "*" / "*.parquet"),
                        "JSONEachRow")
    rows = [json.loads(line) for line in result.bytes().decode().splitlines() if line]
    engine = {row["benchmark_id"]: (row["medians"], row["typical"],
                                    len(find_change_points(row["medians"])))
              for row in rows}

    assert sorted(engine) == sorted(site)
    assert {bid: counts for bid, (_, _, counts) in site.items()} == {
        "demo/bench0[batch=8]:latency": 1, "demo/bench1[batch=8]:latency": 2,
        "demo/bench2[batch=8]:latency": 0}
    for bid, (medians, typical, changes) in engine.items():
        site_medians, site_typical, site_changes = site[bid]
        assert medians == pytest.approx(site_medians, rel=1e-12)
        assert typical == pytest.approx(site_typical, rel=1e-12)
        assert changes == site_changes
