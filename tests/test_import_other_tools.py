"""Importers for other tools' output, checked against files those tools really wrote."""

import json
from pathlib import Path

import pytest

from torch_bench.errors import UserError
from torch_bench.formats.asv import import_asv
from torch_bench.formats.oss import export_oss
from torch_bench.formats.provenance import file_provenance
from torch_bench.formats.pytest_benchmark import import_pytest_benchmark
from torch_bench.results.document import load_run, parse_run
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


def test_asv_import_keeps_the_files_commit_date_and_machine(cli, tmp_path):
    cli("import", str(ASV_RESULT), "--format", "asv", "--out", "asv.json", check=True)
    run = load_run(tmp_path / "asv.json")
    assert run.git["sha"] == "718e42bcc4581cf87fd75ee04b84443c746cdcf1"
    assert run.created_at == "2026-11-22T00:11:00Z"  # date 1795306260000 ms
    assert run.env["machine"] == "vm" and run.env["cpu_count"] == 2
    assert run.env["cpu_model"] == "AMD EPYC" and run.env["fingerprint"]
    assert "torch" not in run.env  # not this machine's


def test_pytest_benchmark_import_keeps_commit_info_machine_info_and_datetime():
    raw = json.loads(PYTEST_BENCHMARK.read_text())
    raw["commit_info"].update(id="c0ffee", branch="main", dirty=True)
    recorded = file_provenance("pytest-benchmark", json.dumps(raw))
    assert recorded.git == {"sha": "c0ffee", "branch": "main", "dirty": True,
                            "project": "pbt"}
    assert recorded.created_at == "2026-11-22T00:10:49Z"
    assert recorded.env["machine"] == "vm" and recorded.env["cpu_model"] == "AMD EPYC"
    assert recorded.env["python"] == "3.11.7" and recorded.env["cpu_count"] == 2
    unversioned = file_provenance("pytest-benchmark", PYTEST_BENCHMARK.read_text())
    assert "sha" not in unversioned.git and "branch" not in unversioned.git


def test_this_machine_is_recorded_only_with_env_here(cli, tmp_path):
    cli("import", str(PYTEST_BENCHMARK), "--format", "pytest-benchmark", "--out", "file.json",
        check=True)
    cli("import", str(PYTEST_BENCHMARK), "--format", "pytest-benchmark", "--out", "here.json",
        "--env", "here", check=True)
    from_file, here = load_run(tmp_path / "file.json"), load_run(tmp_path / "here.json")
    assert from_file.env["machine"] == "vm" and "torch" not in from_file.env
    assert here.env["torch"] and here.env["fingerprint"] != from_file.env["fingerprint"]
    assert from_file.created_at == "2026-11-22T00:10:49Z"


def test_oss_import_needs_a_unit_and_aipep_warns_loudly(cli, tmp_path):
    (tmp_path / "oss.json").write_text('{"lstm": {"cudnn": 0.5}}')
    done = cli("import", "oss.json", "--format", "oss")
    assert done.returncode == 2 and "pass --unit" in done.stderr
    (tmp_path / "a.txt").write_text('Caffe2Observer {"type": "NET", "metric": "lstm-py", '
                                    '"unit": "ms", "value": "0.5"}\n')
    done = cli("import", "a.txt", "--format", "aipep", check=True)
    assert "warning" in done.stderr and "--unit s" in " ".join(done.stderr.split())


def test_fastrnns_import_joins_the_native_rnns_series(cli, tmp_path):
    (tmp_path / "a.txt").write_text(
        'Caffe2Observer {"type": "NET", "metric": "lstm-cudnn", "unit": "ms", "value": "0.5"}\n'
        'Caffe2Observer {"type": "NET", "metric": "lstm-backward-cudnn", "unit": "ms", '
        '"value": "0.7"}\n')
    cli("import", "a.txt", "--format", "aipep", "--unit", "s", "--suite", "rnns",
        "--param", "seq_length=100", "--param", "device=cpu", "--out", "r.json", check=True)
    forward, backward = load_run(tmp_path / "r.json").results
    assert (forward.suite, forward.name, forward.metric) == ("rnns", "cudnn", "forward_time")
    assert backward.metric == "backward_time"
    assert forward.params == {"seq_length": 100, "device": "cpu"}
    assert forward.summary.median == pytest.approx(500.0)
    bad = cli("import", "a.txt", "--format", "aipep", "--param", "oops")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
