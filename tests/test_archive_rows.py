"""A Parquet archive read column by column for the dashboard (render/archive_rows.py) gives
the very block the general path makes of its decoded runs, whatever the archive holds; an
archive that is not torch-bench's own, as written, is left to the general path."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_bench.render.archive_rows import block_of_archive
from torch_bench.render.columns import RowBlock, block_of_runs
from torch_bench.results.schema import failed, measured, new_run
from torch_bench.store import columnar
from torch_bench.store.archive import Archive, decode_archive, encode_archive

PARAM_VALUES = st.sampled_from([1, 1.0, True, 2, "a", "b", 0.5, None, [1, 2]])
PARAMS = st.dictionaries(st.sampled_from(["batch", "seq", "device"]), PARAM_VALUES,
                         max_size=2)
BENCHMARKS = st.sampled_from([("rnns", "lstm", "forward_time"), ("rnns", "gru", "peak_memory"),
                              ("training", "tiny", "loss"), ("cnns", "resnet", "forward_time")])


@st.composite
def results(draw):
    suite, name, metric = draw(BENCHMARKS)
    params = draw(PARAMS)
    extra = draw(st.sampled_from([{}, {"loss_curve": [3.0, 2.5], "verdict_loss": 2.5},
                                  {"verdict_rule": "within 5%", "other": [1]}]))
    if draw(st.booleans()):
        samples = draw(st.lists(st.floats(0.001, 1e6), min_size=1, max_size=4))
        status = draw(st.sampled_from(["ok", "pass", "fail_accuracy"]))
        return measured(suite, name, metric, samples, params=params, extra=extra,
                        status=status)
    return failed(suite, name, metric, draw(st.sampled_from(["error", "oom", "skipped"])),
                  draw(st.sampled_from(["out of memory", "boom\nline two", ""])),
                  params=params, extra=extra)


@st.composite
def runs(draw):
    made = []
    for index in range(draw(st.integers(0, 5))):
        git = draw(st.sampled_from([
            {"sha": f"{index:040x}", "branch": "main", "message": "a\nb",
             "url": "https://example.org/c", "pr_number": 7, "repository": "octo/net"},
            {"sha": "", "branch": "pr/1", "message": " x ", "url": "javascript:alert(1)"},
            {}]))
        env = draw(st.sampled_from([{"torch": "2.9.0", "fingerprint": "f", "gpu_name": "A100"},
                                    {"cuda": "12.4", "driver": "550"}, {}]))
        made.append(new_run(draw(st.lists(results(), max_size=5)),
                            run_id=f"run-{draw(st.integers(0, 3))}",  # ids may repeat
                            created_at=f"2026-03-0{index + 1}T00:00:00Z", git=git, env=env,
                            ci={"provider": "local"}, config={"repeats": 3}))
    return made


def same_blocks(fast: RowBlock, general: RowBlock) -> None:
    assert fast.runs == general.runs
    assert [(d.to_json(), [type(v) for v in d.params.values()]) for d in fast.descriptors] == \
        [(d.to_json(), [type(v) for v in d.params.values()]) for d in general.descriptors]
    assert fast.statuses == general.statuses
    assert fast.errors == general.errors
    assert fast.rows.keys() == general.rows.keys()
    for name, column in general.rows.items():
        assert fast.rows[name].dtype == column.dtype, name
        assert fast.rows[name].tobytes() == column.tobytes(), name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans())
def test_the_columns_give_the_block_of_the_decoded_runs(made, summarised):
    data = encode_archive(Archive("2026/03", tuple(made), summarised))
    fast = block_of_archive(data, {})
    assert fast is not None
    decoded, problems = decode_archive(data, "archive")
    assert problems == []
    same_blocks(fast, block_of_runs(decoded.runs, {}))


def test_blocks_share_descriptors_as_the_general_path_does():
    made = [new_run([measured("rnns", "lstm", "forward_time", [1.0], params={"b": 1})],
                    run_id=f"run-{i}", created_at=f"2026-03-0{i + 1}T00:00:00Z")
            for i in range(2)]
    shared: dict = {}
    first = block_of_archive(encode_archive(Archive("2026/03", tuple(made[:1]), False)), shared)
    second = block_of_archive(encode_archive(Archive("2026/03", tuple(made[1:]), False)), shared)
    assert first.descriptors[0] is second.descriptors[0]


def rewritten(data: bytes, change) -> bytes:
    table = change(pq.read_table(pa.BufferReader(data)))
    sink = pa.BufferOutputStream()
    columnar.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def test_an_archive_that_is_not_ours_as_written_goes_the_general_way():
    run = new_run([measured("rnns", "lstm", "forward_time", [1.0, 2.0])], run_id="run-1",
                  created_at="2026-03-01T00:00:00Z")
    data = encode_archive(Archive("2026/03", (run,), False))
    assert block_of_archive(data, {}) is not None
    no_metadata = rewritten(data, lambda table: table.replace_schema_metadata({}))
    assert block_of_archive(no_metadata, {}) is None
    other_version = rewritten(data, lambda table: table.replace_schema_metadata(
        {columnar.METADATA_KEY: b'{"schema": {"name": "torch-bench/archive", "version": 9}}'}))
    assert block_of_archive(other_version, {}) is None
    assert block_of_archive(b"\x1f\x8b not parquet", {}) is None  # a JSON archive: gzip
    assert block_of_archive(data[:len(data) // 2], {}) is None
