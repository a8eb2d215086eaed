"""Importers for other tools' output, checked against files those tools really wrote."""

import json
from pathlib import Path

import pytest

from torch_bench.errors import UserError
from torch_bench.formats.asv import import_asv
from torch_bench.formats.oss import export_oss
from torch_bench.formats.pytest_benchmark import import_pytest_benchmark
from torch_bench.results.document import parse_run
from torch_bench.results.schema import new_run

DATA = Path(__file__).parent / "data"
PYTEST_BENCHMARK = DATA / "pytest-benchmark-5.3.1.json"
ASV_RESULT = DATA / "asv" / "results" / "vm" / "718e42bc-existing-py3.json"


def valid(results):
    run = new_run(results)
    return parse_run(run.to_dict(), "test")


def test_pytest_benchmark_keeps_samples_in_ms_and_params_apart():
    raw = json.loads(PYTEST_BENCHMARK.read_text())
    results = import_pytest_benchmark(PYTEST_BENCHMARK.read_text())
    by_key = {(r.name, tuple(r.params.items())): r for r in results}
    fib10 = by_key[("test_fib", (("n", 10),))]
    stats = raw["benchmarks"][0]["stats"]
    assert fib10.unit == "ms" and fib10.metric == "time"
    assert len(fib10.samples) == stats["rounds"]
    assert fib10.summary.median == pytest.approx(stats["median"] * 1e3)
    assert by_key[("test_sort", ())].group == "sorting"
    valid(results)


def test_pytest_benchmark_without_raw_data_uses_its_stats():
    raw = json.loads(PYTEST_BENCHMARK.read_text())
    for bench in raw["benchmarks"]:
        del bench["stats"]["data"]
    (first, *_) = import_pytest_benchmark(json.dumps(raw))
    stats = raw["benchmarks"][0]["stats"]
    assert first.samples == () and first.summary.n == stats["rounds"]
    assert first.summary.iqr == pytest.approx(stats["iqr"] * 1e3) and first.summary.p90 is None
    assert json.loads(export_oss(valid([first])))  # exports fall back where stats are missing


def test_asv_result_file_with_params_units_and_types():
    results = import_asv(ASV_RESULT.read_text(), source=str(ASV_RESULT))
    by_key = {(r.name, tuple(r.params.items())): r for r in results}
    assert set(by_key) == {
        ("bench.TimeSuite.time_range_sum", (("n", "10"),)),
        ("bench.TimeSuite.time_range_sum", (("n", "100"),)),
        ("bench.peakmem_list", ()), ("bench.time_sort", ()), ("bench.track_answer", ())}
    summed = by_key[("bench.TimeSuite.time_range_sum", (("n", "100"),))]
    assert summed.metric == "time" and summed.summary.median == pytest.approx(2.45e-3)
    memory = by_key[("bench.peakmem_list", ())]
    assert memory.metric == "peak_memory" and memory.summary.median == pytest.approx(
        24809472 / 2**20)
    answer = by_key[("bench.track_answer", ())]
    assert answer.metric == "value" and answer.summary.median == pytest.approx(42)
    assert answer.extra["asv_unit"] == "answers"
    valid(results)


def test_asv_failed_and_skipped_benchmarks_get_statuses(tmp_path):
    data = json.loads(ASV_RESULT.read_text())
    data["results"]["bench.time_sort"][0] = [None]
    data["results"]["bench.peakmem_list"][0] = [float("nan")]
    results = {r.name: r for r in import_asv(json.dumps(data))}
    assert results["bench.time_sort"].status == "error"
    assert results["bench.peakmem_list"].status == "skipped"


@pytest.mark.parametrize("importer, text, message", [
    (import_pytest_benchmark, '{"version": "5"}', "no 'benchmarks' list"),
    (import_pytest_benchmark, '{"benchmarks": [{"name": "x"}]}', "benchmarks[0]"),
    (import_asv, '{"results": {}}', "not an asv result file"),
    (import_asv, "{", "not valid JSON"),
])
def test_files_of_the_wrong_kind_are_named(importer, text, message):
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        importer(text, source="in.json")
