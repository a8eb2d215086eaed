"""Suite tables a reader can scan: shared params said once, unmeasured values said so."""

from __future__ import annotations

from dataclasses import replace

from test_noise_colours import noisy_history, series_of
from torch_bench.render.measured import NOT_MEASURED
from torch_bench.render.model import SiteModel
from torch_bench.render.pages import compare_rows, suite_context


def test_params_every_row_shares_are_shown_once_and_rows_keep_the_differing_ones():
    base = series_of(noisy_history(5, 0.01))
    members = tuple(
        replace(base, key=f"k{h}", benchmark_id=f"b{h}", name="lstm",
                params={"device": "cpu", "dtype": "float32", "hidden_size": h, "layers": 1})
        for h in (64, 128))
    context = suite_context(SiteModel(runs=(), series=members, baseline_branch="main"), "rnns")
    assert context["shared_params"] == "device=cpu, dtype=float32, layers=1"
    assert [row.params for row in context["rows"]] == ["hidden_size=64", "hidden_size=128"]


def test_a_zero_peak_memory_is_not_a_measurement():
    memory = replace(series_of([0.0, 0.0, 0.0, 0.0]), unit="MB", metric="peak_memory")
    model = SiteModel(runs=tuple(p.run for p in memory.points), series=(memory,),
                      baseline_branch="main")
    [row] = suite_context(model, "rnns")["rows"]
    assert row.latest == NOT_MEASURED
    assert row.vs_previous == "—" and row.vs_baseline == "—"
    real = replace(series_of([5.0, 5.0, 5.0, 0.0]), unit="MB")  # not measured this time
    [row] = suite_context(replace(model, series=(real,)), "rnns")["rows"]
    assert row.latest == NOT_MEASURED and row.vs_previous == "—"


def test_compare_rows_say_not_measured_too():
    from torch_bench.render.model import build_model
    from torch_bench.results.schema import Run, measured
    from torch_bench.store.reader import History

    result = measured("rnns", "lstm", "peak_memory", [0.0])  # MB, from the metric table
    runs = tuple(Run(run_id=f"r{i}", created_at=f"2026-01-0{i + 1}T00:00:00Z", results=(result,),
                     git={"branch": "main", "sha": f"{i}" * 40}) for i in range(2))
    model = build_model(History(runs))
    a, b = model.runs
    [row] = compare_rows(model, a, b)
    assert row["a"] == NOT_MEASURED and row["b"] == NOT_MEASURED and row["change"] == "—"
