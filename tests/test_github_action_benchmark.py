"""Migration from github-action-benchmark's data.js (fixture written to its documented format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_bench.errors import UserError
from torch_bench.formats.github_action_benchmark import (
    import_github_action_benchmark,
    quantity_of,
    split_unit,
)
from torch_bench.store.reader import load_history

FIXTURE = Path(__file__).parent / "fixtures" / "github-action-benchmark-data.js"


def by_name(runs):
    return {(r.suite, r.name): (run, r) for run in runs for r in run.results}


def test_every_entry_becomes_a_run_with_its_commit_and_date():
    runs = import_github_action_benchmark(FIXTURE.read_text(), source="data.js")
    assert len(runs) == 5 and [r.created_at for r in runs] == sorted(r.created_at for r in runs)
    run = runs[0]
    matmul = run.results[0]
    assert run.results[0].suite == "Python Benchmark with pytest-benchmark"
    assert matmul.name == "tests/bench_ops.py::test_matmul"
    assert run.created_at == "2025-01-01T09:17:00Z"  # date 1735723020000 ms
    assert run.git["sha"] == "4f1c2a9b7e3d5c6a8b9f0e1d2c3b4a5968778695"
    assert run.git["repository"] == "example-org/fast-tensors"
    assert run.git["message"] == "Speed up the matmul kernel (#41)"
    assert run.git["author"] == "Ada Lovelace <ada@example.com>"
    assert (matmul.metric, matmul.unit, matmul.direction) == ("op_throughput", "items/s", "higher")
    assert matmul.summary.median == pytest.approx(1523.6183)
    assert matmul.extra["range"] == "stddev: 0.000021" and "rounds: 412" in matmul.extra["extra"]


@pytest.mark.parametrize("suite, name, metric, direction, value", [
    ("Rust Benchmark", "conv2d_3x3", "time", "lower", 0.048213),  # 48213 ns/iter in ms
    ("Model memory", "resnet18 peak memory", "memory", "lower", 1536.0),
    ("Model memory", "resnet18 step", "time", "lower", 42.1),  # 0.0421 s in ms
    ("Model memory", "graph breaks", "value", "lower", 3.0),  # unknown unit, smaller is better
    ("Throughput", "bert tokens", "op_throughput", "higher", 12345.5),
    ("Throughput", "top-1 accuracy", "score", "higher", 76.1),  # unknown unit, bigger is better
])
def test_units_and_directions_map_onto_the_metric_table(suite, name, metric, direction, value):
    _, result = by_name(import_github_action_benchmark(FIXTURE.read_text()))[(suite, name)]
    assert (result.metric, result.direction) == (metric, direction)
    assert result.summary.median == pytest.approx(value)


def test_unit_quantities():
    assert quantity_of("ns/iter") == ("time", 1e-6)
    assert quantity_of("us") == ("time", 1e-3) and quantity_of("ms/op")[0] == "time"
    assert quantity_of("bytes") == ("memory", 1 / 2**20) and quantity_of("B/op")[0] == "memory"
    assert quantity_of("iter/sec")[0] == quantity_of("ops/sec")[0] == "rate"
    assert quantity_of("allocs/op")[0] == "other"


def test_bad_files_are_named(tmp_path):
    with pytest.raises(UserError, match=r"data.js: not a github-action-benchmark data file"):
        import_github_action_benchmark("window.BENCHMARK_DATA = {oops", source="data.js")
    text = FIXTURE.read_text().replace('"value": 48213', '"value": "fast"')
    with pytest.raises(UserError, match=r'entries\["Rust Benchmark"\]\[0\].benches\[0\].value'):
        import_github_action_benchmark(text, source="data.js")


def test_import_cli_writes_a_data_folder_and_reimporting_adds_nothing(tmp_path, cli):
    done = cli("import", str(FIXTURE), "--format", "github-action-benchmark", "--out", "hist",
               check=True)
    assert "imported 5 runs (9 results) into hist: 5 new" in done.stderr
    again = cli("import", str(FIXTURE), "--format", "github-action-benchmark", "--out", "hist",
                check=True)
    assert "0 new, 5 already there" in again.stderr
    history = load_history(tmp_path / "hist")
    assert len(history.runs) == 5 and not history.problems
    assert cli("data", "verify", "--data", "hist").returncode == 0
    wrong = cli("import", str(FIXTURE), "--format", "github-action-benchmark", "--unit", "s")
    assert wrong.returncode == 2 and "--unit" in wrong.stderr


def test_go_units_with_extra_metrics_parse_to_the_unit_and_the_extra_values():
    text = FIXTURE.read_text().replace('"unit": "ns/iter"',
                                       '"unit": "ns/op\\t 4.000 auxMetricUnits"', 1)
    _, result = by_name(import_github_action_benchmark(text))[("Rust Benchmark", "conv2d_3x3")]
    assert (result.metric, result.extra["unit"]) == ("time", "ns/op")
    assert result.summary.median == pytest.approx(0.048213)
    assert result.extra["aux_metrics"] == {"auxMetricUnits": pytest.approx(4.0)}
    assert split_unit("ns/op") == ("ns/op", {})
    assert split_unit("my odd unit") == ("my odd unit", {})


def test_history_is_filed_under_the_default_branch_so_it_serves_as_baseline(tmp_path, cli):
    runs = import_github_action_benchmark(FIXTURE.read_text())
    assert {run.git["branch"] for run in runs} == {"main"}
    done = cli("import", str(FIXTURE), "--format", "github-action-benchmark", "--out", "hist",
               "--branch", "trunk", check=True)
    assert "branch 'trunk'" in " ".join(done.stderr.split())
    assert {run.git["branch"] for run in load_history(tmp_path / "hist").runs} == {"trunk"}
