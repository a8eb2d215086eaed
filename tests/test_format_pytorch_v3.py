"""PyTorch's v3 benchmark records in and out (docs/pytorch-v3.md): our runs written as the
records PyTorch's CI uploads into its ClickHouse table, read back exactly; records shaped as
PyTorch's dynamo runner writes them (tests/data/pytorch-v3) read as runs with their values
and provenance; the export loaded into a real ClickHouse engine (chdb) with the table's
columns and queried as PyTorch's dashboards query it."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import TINY_RNN
from support.commands import torch_bench
from support.runs import bad, make_run, ok
from torch_bench.errors import UserError
from torch_bench.formats import RUN_IMPORTERS, exporter
from torch_bench.formats.gzipped import gunzip
from torch_bench.formats.options import ExportOptions
from torch_bench.formats.safety import guarded
from torch_bench.results.document import load_run
from torch_bench.results.schema import measured
from torch_bench.store.layout import run_files

DATA = Path(__file__).parent / "data" / "pytorch-v3"
PERFORMANCE = DATA / "inductor_torchbench_amp_inference_cuda_performance.json"
ACCURACY = DATA / "inductor_torchbench_amp_inference_cuda_accuracy.json"
FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

export_v3 = exporter("pytorch-v3")
import_v3 = guarded(RUN_IMPORTERS["pytorch-v3"], "pytorch-v3")


def records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def sample_run(**fields):
    """A run with what a run document can hold: parameters of every JSON type, a failure, a
    result kept without samples (an archive's), per-sample extras and an OSS group."""
    params = {"model": "bert", "batch_size": 8, "sequence_length": 128, "mode": "inference",
              "dtype": "float32", "device": "cpu", "backend": "eager", "amp": False,
              "scale": 0.5, "note": None}
    timed = ok("bert", 12.5, params=params, n=30)
    timed = replace(timed, extra={"wall_samples": list(timed.samples), "calls": 3})
    archived = ok("resnet", 40.0, metric="latency", params={"batch_size": 1}).without_samples()
    archived = replace(archived, samples=())
    results = [timed, ok("bert", 900.0, metric="throughput", params=params, n=5),
               measured("rnns", "cudnn", "backward_time", [1.5, 1.25, 1.75], group="lstm-backward"),
               archived, bad("gpt2", "oom", error="CUDA out of memory")]
    run = make_run(results, **fields)
    return replace(run, ci={"provider": "github-actions", "run_id": "123456789",
                            "run_attempt": "2", "job": "bench-cpu", "job_id": 987654321},
                   config={"suite": "transformers", "repeats": {"min": 3}})


# --- ours -> v3 -> ours --------------------------------------------------------------------

def test_round_trip_gives_back_the_run_exactly():
    run = sample_run()
    [back] = import_v3(export_v3(run), source="run.json")
    assert back.to_dict() == run.to_dict()


def test_export_writes_one_v3_record_per_result_with_the_run_facts_in_v3_fields():
    run = sample_run(sha="c" * 40, branch="feature/x")
    written = records(export_v3(run))
    assert len(written) == len(run.results)
    first = written[0]
    assert {k: first[k] for k in ("schema_version", "name", "repo", "head_branch", "head_sha",
                                  "workflow_id", "run_attempt", "job_id", "timestamp")} == {
        "schema_version": "v3", "name": "bench-cpu", "repo": "octo/bench",
        "head_branch": "feature/x", "head_sha": "c" * 40, "workflow_id": 123456789,
        "run_attempt": 2, "job_id": 987654321, "timestamp": 1767225600}  # 2026-01-01
    assert first["benchmark"]["name"] == "demo"
    assert (first["benchmark"]["mode"], first["benchmark"]["dtype"]) == ("inference", "float32")
    assert first["model"]["name"] == "bert" and first["model"]["backend"] == "eager"
    assert first["metric"]["name"] == "latency"
    assert first["metric"]["benchmark_values"] == list(run.results[0].samples)
    assert first["metric"]["extra_info"]["unit"] == "ms"
    # every extra_info is a map of strings, as the table's Map(String, String) columns are
    maps = [first["benchmark"]["extra_info"], first["model"]["extra_info"],
            first["metric"]["extra_info"], first["runners"][0]["extra_info"]]
    assert all(isinstance(v, str) for m in maps for v in m.values())
    assert first["benchmark"]["extra_info"]["batch_size"] == "8"
    runner = first["runners"][0]
    assert (runner["name"], runner["type"], runner["cpu_count"]) == ("cpu", "Test CPU", 2)
    assert runner["extra_info"]["fingerprint"] == "fp-test-0001"
    assert first["dependencies"]["torch"]["version"] == "2.13.0"
    failure = written[-1]["metric"]
    assert failure["benchmark_values"] == [] and failure["extra_info"]["status"] == "oom"


def test_metadata_a_local_run_does_not_know_is_left_to_the_upload_action():
    record = records(export_v3(make_run([ok("bert", 1.0)])))[0]  # not run in a workflow
    action = {"timestamp": 1764400000, "schema_version": "v3", "name": "bench (cpu)",
              "repo": "octo/bench", "head_branch": "main", "head_sha": "f" * 40,
              "workflow_id": 5, "run_attempt": 1, "job_id": 6}
    merged = {**action, **record}  # as upload_benchmark_results.py merges them
    # a 0 there would have the action skip the upload (no workflow or job id)
    assert (merged["workflow_id"], merged["job_id"], merged["name"]) == (5, 6, "bench (cpu)")
    assert merged["head_sha"] == "a" * 40  # the commit the run measured


def test_a_run_date_that_is_no_date_is_refused_not_a_traceback():
    run = replace(sample_run(), created_at="2026-13-45T99:99:99Z")  # the schema's pattern
    with pytest.raises(UserError, match="created_at: '2026-13-45T99:99:99Z' is not a date"):
        export_v3(run)


def test_times_written_in_seconds_read_back_in_milliseconds():
    run = sample_run()
    text = export_v3(run, ExportOptions(unit="s", all_metrics=True))
    assert records(text)[0]["metric"]["extra_info"]["unit"] == "s"
    [back] = import_v3(text, source="run.json")
    for before, after in zip(run.results, back.results, strict=True):
        assert after.unit == before.unit
        assert after.samples == pytest.approx(before.samples, rel=1e-12)


# --- PyTorch's dynamo runner -> ours -------------------------------------------------------

def test_dynamo_runner_records_import_with_their_values_exact():
    text = PERFORMANCE.read_text()
    [run] = import_v3(text, source=PERFORMANCE.name)  # no job metadata: one run
    written = {(r["model"]["name"], r["metric"]["name"]): r["metric"]["benchmark_values"]
               for r in records(text)}
    got = {(r.name, r.metric): r for r in run.results}
    assert set(got) == set(written)
    for key, values in written.items():
        if key[1] != "compilation_latency":
            assert list(got[key].samples) == values, key  # the file's numbers, not rounded
    assert got[("resnet50", "compilation_latency")].samples == pytest.approx([38427.713])
    speedup = got[("hf_Bert", "speedup")]
    assert (speedup.suite, speedup.unit, speedup.direction, speedup.status) == \
        ("TorchInductor", "ratio", "higher", "ok")
    assert speedup.params == {"mode": "inference", "dtype": "amp", "backend": "inductor",
                              "device": "cuda"}
    assert (got[("resnet50", "abs_latency")].unit, got[("resnet50", "graph_breaks")].unit) == \
        ("ms", "count")
    # what has no field in a run document is kept with the result
    kept = speedup.extra["v3"]
    assert kept["benchmark_extra_info"]["only"] == "hf_Bert"
    assert kept["model_origins"] == ["torchbench"]


def test_a_record_without_a_value_is_a_failed_result():
    text = '{"model": {"name": "m"}, "metric": {"name": "x", "extra_info": {"status": "ok"}}}'
    [run] = import_v3(text, source="empty.json")
    [result] = run.results
    assert (result.status, result.error, result.samples) == \
        ("error", "the v3 record has no value", ())


def test_dynamo_accuracy_words_become_statuses():
    [run] = import_v3(ACCURACY.read_text(), source=ACCURACY.name)
    accuracy = {r.name: r for r in run.results if r.metric == "accuracy"}
    assert accuracy["resnet50"].status == "pass" and accuracy["resnet50"].samples == (1.0,)
    assert accuracy["hf_Bert"].status == "fail_accuracy"
    assert accuracy["hf_Bert"].error == "accuracy: fail_accuracy"
    assert not accuracy["hf_Bert"].ok


def uploaded(text: str, **metadata) -> str:
    """Records as test-infra's upload action stores them: its metadata and runner
    information added to every record (JSON lines)."""
    meta = {"timestamp": 1764400000, "schema_version": "v3", "name": "inductor-perf",
            "repo": "pytorch/pytorch", "head_branch": "refs/heads/main",
            "head_sha": "d" * 40, "workflow_id": 19000000001, "run_attempt": 1,
            "job_id": 54000000001, **metadata}
    runner = {"name": "cuda", "type": "NVIDIA A100-SXM4-40GB", "cpu_info": "x86_64",
              "cpu_count": 96, "avail_mem_in_gb": 1121, "gpu_count": 8,
              "avail_gpu_mem_in_gb": 320, "extra_info": {"hostname": "runner-1"}}
    return "".join(json.dumps({**meta, **r, "runners": [runner], "dependencies": {}}) + "\n"
                   for r in records(text))


def test_uploaded_records_keep_their_provenance_one_run_per_job():
    text = uploaded(PERFORMANCE.read_text()) + uploaded(
        PERFORMANCE.read_text(), job_id=54000000002, head_sha="e" * 40,
        head_branch="gh/someone/1/head", timestamp=1764403600)
    first, second = import_v3(text, source="records.json")
    assert first.git == {"repository": "pytorch/pytorch", "sha": "d" * 40, "branch": "main"}
    assert first.ci == {"provider": "github-actions", "run_id": "19000000001",
                        "run_attempt": "1", "job": "inductor-perf", "job_id": 54000000001}
    assert first.created_at == "2025-11-29T07:06:40Z"
    assert second.git["branch"] == "gh/someone/1/head" and second.ci["job_id"] == 54000000002
    assert first.env["device"] == "cuda" and first.env["cpu_count"] == 96
    assert first.env["runner_type"] == "NVIDIA A100-SXM4-40GB"
    assert first.fingerprint == second.fingerprint  # the same machine description
    assert first.run_id != second.run_id
    [again, _] = import_v3(text, source="records.json")
    assert again.run_id == first.run_id  # importing twice adds nothing new to a data folder


def test_a_json_list_of_records_reads_as_json_lines_do():
    lines = records(PERFORMANCE.read_text())
    [from_list] = import_v3(json.dumps(lines), source="list.json")
    [from_lines] = import_v3(PERFORMANCE.read_text(), source="lines.json")
    assert [r.to_dict() for r in from_list.results] == [r.to_dict() for r in from_lines.results]


@pytest.mark.parametrize(("line", "message"), [
    ('{"model": {"name": "m"}, "metric": {"name": "x", "benchmark_values": ["1.5"]}}',
     "line 3: metric.benchmark_values: expected a list of finite numbers"),
    ('{"model": {"name": "m"}}', "line 3: metric: expected an object"),
    ('{"model": {"name": ""}, "metric": {"name": "x"}}', "line 3: model.name: expected a name"),
    ('{"model": {"name": "m"}, "metric": {"name": "x"}, "workflow_id": -1}',
     "line 3: workflow_id: expected a whole number"),
    ('{"model": {"name": "m"}, "metric": {"name": "x"}, "timestamp": 1e300}',
     "line 3: timestamp: expected Unix seconds"),
    ('[1, 2]', "line 3: expected a v3 record (a JSON object), found a number"),
    ('{"model": ', "line 3: not valid JSON"),
    ('{"model": {"name": "m"}, "metric": {"name": "abs_latency", "benchmark_values": [-1]}}',
     "line 3: metric.benchmark_values[0]: -1.0 is negative, and a value in 'ms' cannot be"),
    ('{"model": {"name": "m\\u0000"}, "metric": {"name": "x", "benchmark_values": [1]}}',
     "line 3: model.name: "),
])
def test_a_bad_record_is_refused_naming_its_line(line, message):
    good = PERFORMANCE.read_text().splitlines()[:2]
    text = "\n".join([*good, line, good[0]]) + "\n"
    with pytest.raises(UserError) as refused:
        import_v3(text, source="bad.json")
    assert str(refused.value).startswith("bad.json: ")
    assert message in str(refused.value)


# --- the export in PyTorch's ClickHouse table ----------------------------------------------

# The columns of benchmark.oss_ci_benchmark_v3 (pytorch/test-infra,
# clickhouse_db_schema/benchmark.oss_ci_benchmark_v3/schema.sql), on a local MergeTree.
V3_TABLE = """
CREATE TABLE oss_ci_benchmark_v3 (
    timestamp UInt64, schema_version String DEFAULT 'v3', name String,
    repo String DEFAULT 'pytorch/pytorch', head_branch String, head_sha String,
    workflow_id UInt64, run_attempt UInt32, job_id UInt64,
    servicelab_experiment_id UInt64 DEFAULT 0, servicelab_trial_id UInt64 DEFAULT 0,
    _meta Tuple(bucket String, key String),
    runners Array(Tuple(name String, type String, cpu_info String, cpu_count UInt32,
                        mem_info String, avail_mem_in_gb UInt32, gpu_info String,
                        gpu_count UInt32, gpu_mem_info String, avail_gpu_mem_in_gb UInt32,
                        extra_info Map(String, String))),
    benchmark Tuple(name String, mode String, dtype String, extra_info Map(String, String)),
    model Tuple(name String, type String, backend String, origins Array(String),
                extra_info Map(String, String)),
    inputs Map(String, Tuple(dtype String, extra_info Map(String, String))),
    dependencies Map(String, Tuple(repo String, branch String, sha String, version String,
                                   extra_info Map(String, String))),
    metric Tuple(name String, benchmark_values Array(Float32), target_value Float32,
                 extra_info Map(String, String))
) ENGINE = MergeTree
ORDER BY (timestamp, head_branch, head_sha, workflow_id, job_id, servicelab_experiment_id,
          servicelab_trial_id)
"""

# As PyTorch's benchmark dashboards ask: per branch, model and metric, the latest value
# (the mean of its benchmark_values), with the device and arch from the first runner.
LATEST_PER_BRANCH = """
SELECT replaceOne(head_branch, 'refs/heads/', '') AS branch,
       model.'name' AS model_name, metric.'name' AS metric_name,
       argMax(arrayAvg(metric.'benchmark_values'), timestamp) AS latest,
       argMax(tupleElement(runners[1], 'name'), timestamp) AS device
FROM oss_ci_benchmark_v3
WHERE notEmpty(metric.'benchmark_values')
GROUP BY branch, model_name, metric_name
ORDER BY branch, model_name, metric_name
FORMAT JSONEachRow
"""


def test_export_loads_into_the_v3_table_and_a_dashboard_query_returns_our_numbers(tmp_path):
    chdb_session = pytest.importorskip("chdb.session")
    runs = [make_run([ok("bert", level, params={"device": "cpu"}, seed=seed),
                      ok("bert", 100.0 * level, metric="throughput", seed=seed + 1),
                      bad("gpt2", "oom")],
                     sha=f"{seed:040x}", branch=branch, created_at=created_at,
                     run_id=f"run-{seed}")
            for seed, (level, branch, created_at) in enumerate([
                (10.0, "main", "2026-01-01T00:00:00Z"), (12.0, "main", "2026-01-02T00:00:00Z"),
                (20.0, "feature", "2026-01-03T00:00:00Z")])]
    files = []
    for run in runs:
        files.append(tmp_path / f"{run.run_id}.json")
        files[-1].write_text(export_v3(run))
    session = chdb_session.Session(str(tmp_path / "db"))
    try:
        session.query(V3_TABLE)
        for path in files:
            session.query(f"INSERT INTO oss_ci_benchmark_v3 FROM INFILE '{path}' "
                          "FORMAT JSONEachRow")
        rows = [json.loads(line) for line in
                session.query(LATEST_PER_BRANCH).bytes().decode().splitlines()]
        stored = session.query("SELECT count() FROM oss_ci_benchmark_v3", "CSV").bytes()
        table = session.query("SELECT * FROM oss_ci_benchmark_v3 ORDER BY timestamp "
                              "SETTINGS output_format_json_quote_64bit_integers = 1",
                              "JSONEachRow").bytes().decode()
    finally:
        session.close()
    assert int(stored) == 9  # every result, the failures too
    expected = {(run.git["branch"], r.name, r.metric): r.summary.mean
                for run in runs[1:] for r in run.results if r.ok}  # the latest of each branch
    got = {(row["branch"], row["model_name"], row["metric_name"]): row["latest"] for row in rows}
    assert set(got) == set(expected)
    for key, mean in expected.items():
        assert got[key] == pytest.approx(mean, rel=1e-6), key  # the column is Float32
    assert {row["device"] for row in rows} == {"cpu"}
    # the table's rows read back as the runs they came from (its 64-bit integers as JSON
    # strings, as older ClickHouse servers write them by default)
    back = import_v3(table, source="table.json")
    assert [run.run_id for run in back] == [run.run_id for run in runs]
    for before, after in zip(runs, back, strict=True):
        assert after.git == before.git and after.created_at == before.created_at
        for was, now in zip(before.results, after.results, strict=True):
            assert (now.name, now.metric, now.status) == (was.name, was.metric, was.status)
            assert now.samples == pytest.approx(was.samples, rel=1e-6)  # stored as Float32


# --- fuzzing the importer ------------------------------------------------------------------

JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                      st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
JSON_VALUE = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
FIELDS = ["timestamp", "name", "repo", "head_branch", "head_sha", "workflow_id",
          "run_attempt", "job_id", "benchmark", "model", "metric", "runners", "dependencies",
          "inputs"]
PARTS = {"benchmark": ["name", "mode", "dtype", "extra_info"],
         "model": ["name", "type", "backend", "origins", "extra_info"],
         "metric": ["name", "benchmark_values", "target_value", "extra_info"]}


@st.composite
def v3_text(draw) -> str:
    """Records of ours and of dynamo's with fields replaced by arbitrary JSON, as JSON
    lines or a list."""
    seeds = records(export_v3(sample_run())) + records(PERFORMANCE.read_text())[:3]
    chosen = draw(st.lists(st.sampled_from(seeds), min_size=1, max_size=3))
    out = []
    for record in chosen:
        record = json.loads(json.dumps(record))
        for _ in range(draw(st.integers(0, 3))):
            field = draw(st.sampled_from(FIELDS))
            if field in PARTS and isinstance(record.get(field), dict) and draw(st.booleans()):
                record[field][draw(st.sampled_from(PARTS[field]))] = draw(JSON_VALUE)
            else:
                record[field] = draw(JSON_VALUE)
        out.append(record)
    if draw(st.booleans()):
        return json.dumps(out)
    return "".join(json.dumps(r) + "\n" for r in out)


@FUZZ
@given(v3_text())
@example('{"model": {"name": "m"}, "metric": {"name": "m", "benchmark_values": [1e308], '
         '"extra_info": {"unit": "s"}}}')
@example('{"model": {"name": "m"}, "metric": {"name": "m"}, "job_id": "\u00b2"}')
@example("\n\n")
def test_importer_gives_runs_or_a_clear_error(text):
    try:
        runs = import_v3(text, source="fuzz.json")
    except UserError as exc:
        assert str(exc).startswith("fuzz.json")
        return
    assert runs and all(run.results for run in runs)


@FUZZ
@given(st.binary(max_size=64))
def test_gunzip_of_any_bytes_gives_data_or_a_clear_error(data):
    try:
        gunzip(b"\x1f\x8b" + data, "fuzz.gz", limit=1 << 16)
    except UserError as exc:
        assert str(exc).startswith("fuzz.gz: ")


def test_gunzip_refuses_a_compression_bomb():
    bomb = gzip.compress(b"\0" * (1 << 20))
    with pytest.raises(UserError, match="decompresses to more than"):
        gunzip(bomb, "bomb.gz", limit=1 << 16)


# --- the command line ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def measured_run(tmp_path_factory):
    """A real run of the rnns suite (a tiny LSTM on this machine)."""
    folder = tmp_path_factory.mktemp("measured")
    done = torch_bench(folder, "run", "--suite", "rnns", "--variants", "aten", *TINY_RNN,
                       "--no-preflight", "--out", "run.json")
    assert done.returncode == 0, done.stderr
    return folder / "run.json"


def test_cli_export_gzipped_then_import_gives_the_run_back(measured_run, tmp_path):
    done = torch_bench(tmp_path, "export", str(measured_run), "--format", "pytorch-v3",
                       "--out", "records.json.gz")
    assert done.returncode == 0, done.stderr
    written = records(gzip.decompress((tmp_path / "records.json.gz").read_bytes()).decode())
    run = load_run(measured_run)
    assert len(written) == len(run.results)
    assert {r["runners"][0]["extra_info"]["fingerprint"] for r in written} == {run.fingerprint}
    done = torch_bench(tmp_path, "import", "records.json.gz", "--format", "pytorch-v3",
                       "--out", "back.json")
    assert done.returncode == 0, done.stderr
    assert load_run(tmp_path / "back.json").to_dict() == run.to_dict()
    flagged = torch_bench(tmp_path, "export", str(measured_run), "--pytorch-v3", "-")
    assert records(flagged.stdout) == written


def test_cli_import_of_several_jobs_fills_a_data_folder(tmp_path):
    text = uploaded(PERFORMANCE.read_text()) + uploaded(ACCURACY.read_text(),
                                                        job_id=54000000002)
    (tmp_path / "records.json").write_text(text)
    refused = torch_bench(tmp_path, "import", "records.json", "--format", "pytorch-v3",
                          "--out", "one.json")
    assert refused.returncode == 2
    assert "holds the records of 2 runs" in refused.stderr and "Traceback" not in refused.stderr
    done = torch_bench(tmp_path, "import", "records.json", "--format", "pytorch-v3",
                       "--out", "data", "--branch", "nightly")
    assert done.returncode == 0, done.stderr
    assert "imported 2 runs (30 results) into data: 2 new" in done.stderr
    stored = [json.loads(path.read_text()) for path in run_files(tmp_path / "data")]
    assert sorted(doc["git"]["branch"] for doc in stored) == ["nightly", "nightly"]
    again = torch_bench(tmp_path, "import", "records.json", "--format", "pytorch-v3",
                        "--out", "data")
    assert "0 new, 2 already there" in again.stderr


def test_cli_import_refuses_flags_the_records_answer_and_bad_records(tmp_path):
    (tmp_path / "r.json").write_text(PERFORMANCE.read_text())
    unit = torch_bench(tmp_path, "import", "r.json", "--format", "pytorch-v3", "--unit", "s")
    assert unit.returncode == 2 and "--unit: not used with --format pytorch-v3" in unit.stderr
    (tmp_path / "bad.json").write_text(PERFORMANCE.read_text() + '{"metric": 3}\n')
    bad_record = torch_bench(tmp_path, "import", "bad.json", "--format", "pytorch-v3")
    assert bad_record.returncode == 2
    assert "bad.json: line 27: metric: expected an object, got 3" in bad_record.stderr
    assert "Traceback" not in bad_record.stderr
