"""Parquet history: compaction writes it, every reader reads it, JSON archives migrate,
`data export --parquet` gives the whole history as one dataset.

Tables are read with `use_threads=False`, as torch-bench reads them: a process that started
Arrow's thread pool can abort at exit ("terminate called without an active exception")."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_bench.render.history_cache import load_columns
from torch_bench.render.model import build_model
from torch_bench.results.document import save_run
from torch_bench.results.schema import failed, measured, new_run
from torch_bench.store import plan
from torch_bench.store.archive import (
    Archive,
    decode_archive,
    drop_samples,
    encode_archive,
    encode_json_archive,
)
from torch_bench.store.archive import digest as archive_digest
from torch_bench.store.archive_bounds import MAX_ARCHIVE_ROWS
from torch_bench.store.folder import store_in_folder
from torch_bench.store.layout import archive_files, archive_path, run_files
from torch_bench.store.reader import load_history
from torch_bench.store.scan import scan_folder


def month_of_runs(month="2025-11", days=3, benchmarks=4):
    runs = []
    for day in range(1, days + 1):
        results = [measured("suite", f"bench{b}", "latency",
                            [1.0 + b + day / 10, 1.1 + b, 1.05 + b],
                            params={"batch": 2 ** b, "dtype": "float32"}, group="g",
                            extra={"wall_samples": [1.0, 2.0, 3.0]})
                   for b in range(benchmarks)]
        results.append(failed("suite", "broken", "latency", "oom", "CUDA out of memory"))
        runs.append(new_run(results, created_at=f"{month}-{day:02d}T12:00:00Z",
                            git={"branch": "main", "sha": f"{day:040x}",
                                 "repository": "octo/bench"},
                            env={"fingerprint": "fp1", "torch": "2.13.0"},
                            config={"suite": "suite", "repeats": day}))
    return runs


# -- round trip ----------------------------------------------------------------------------------

# names as the schema accepts them: no control, format (bidi) or line-separator characters
NOT_IN_NAMES = ("Cs", "Cc", "Cf", "Zl", "Zp")
names = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF,
                              blacklist_categories=NOT_IN_NAMES, blacklist_characters="/"),
                min_size=1, max_size=12).filter(lambda s: not s.startswith(".") and s.strip())
suites = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF,
                               blacklist_categories=NOT_IN_NAMES, blacklist_characters="/\\."),
                min_size=1, max_size=8).filter(str.strip)  # "\xa0" alone is only a space
param_values = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                         st.floats(allow_nan=False, allow_infinity=False), names)
samples = st.lists(st.floats(min_value=1e-9, max_value=1e9), min_size=1, max_size=8)


@st.composite
def results(draw):
    params = draw(st.dictionaries(names, param_values, max_size=3))
    suite, name = draw(suites), draw(names)
    if draw(st.booleans()):
        return measured(suite, name, draw(st.sampled_from(["latency", "peak_memory"])),
                        draw(samples), params=params, group=draw(st.none() | names),
                        extra=draw(st.dictionaries(names, param_values, max_size=2)))
    return failed(suite, name, "latency", draw(st.sampled_from(["oom", "timeout", "error"])),
                  draw(names), params=params)


@st.composite
def runs(draw):
    day = draw(st.integers(1, 28))
    return new_run(draw(st.lists(results(), max_size=4)),
                   created_at=f"2025-11-{day:02d}T{draw(st.integers(0, 23)):02d}:00:00Z",
                   git={"branch": draw(names), "sha": "ab" * 20, "pr_number": None},
                   env={"fingerprint": draw(st.none() | names), "cpu_count": 2},
                   config=draw(st.dictionaries(names, param_values, max_size=3)))


def in_order(history):
    return sorted(history, key=lambda run: (run.created_at, run.run_id))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(runs(), min_size=1, max_size=5, unique_by=lambda run: run.run_id))
def test_a_parquet_archive_gives_back_the_runs_it_was_given(history):
    data = encode_archive(Archive("2025/11", tuple(history), summarised=False))
    trusted, problems = decode_archive(data, "a.parquet")
    assert problems == [] and list(trusted.runs) == in_order(history)
    checked, problems = decode_archive(data, "a.parquet", trust=False)
    assert problems == [] and list(checked.runs) == in_order(history)
    summarised, _ = decode_archive(encode_archive(Archive("2025/11", tuple(history), True)),
                                   "b.parquet")
    assert summarised.summarised and list(summarised.runs) == [
        drop_samples(run) for run in in_order(history)]


def test_compacted_history_reads_back_equal_with_its_samples(tmp_path, cli):
    root = tmp_path / "benchmarks"
    before = month_of_runs("2025-11") + month_of_runs("2025-12") + month_of_runs("2026-01")
    store_in_folder(before, root)
    done = cli("data", "compact", "--before", "2026-01", "--keep-samples", check=True)
    assert "archive/2025/11-" in done.stdout and ".parquet" in done.stdout
    assert [p.suffix for p in archive_files(root)] == [".parquet", ".parquet"]
    assert len(run_files(root)) == 3
    assert list(load_history(root).runs) == in_order(before)
    assert cli("data", "verify", check=True).returncode == 0
    listed = cli("data", "list", check=True).stdout
    assert listed.count("archive") == 6 and "9 runs" in listed


def test_the_archive_is_a_plain_table_for_pandas_and_pyarrow(tmp_path):
    runs = month_of_runs()
    path = tmp_path / "month.parquet"
    path.write_bytes(encode_archive(Archive("2025/11", tuple(runs), summarised=False)))
    frame = pq.read_table(path, use_threads=False).to_pandas(use_threads=False)
    assert len(frame) == 3 * 5  # a row per result
    bench1 = frame[frame["name"] == "bench1"]
    assert list(bench1["median"]) == pytest.approx([2.1, 2.1, 2.1])
    assert set(frame["benchmark_id"]) == {r.benchmark_id for r in runs[0].results}
    assert frame["status"].tolist().count("oom") == 3
    assert all(len(s) == 3 for s in bench1["samples"])
    metadata = pq.ParquetFile(path).metadata
    column = metadata.row_group(0).column(metadata.schema.names.index("benchmark_id"))
    assert column.compression == "ZSTD" and "RLE_DICTIONARY" in column.encodings


def test_a_run_without_results_survives_compaction(tmp_path):
    empty = new_run([], created_at="2025-11-05T00:00:00Z", env={"fingerprint": "f"})
    data = encode_archive(Archive("2025/11", (empty, *month_of_runs(days=1)), False))
    archive, problems = decode_archive(data, "x.parquet", trust=False)
    assert problems == [] and empty in archive.runs and len(archive.runs) == 2


# -- migration -----------------------------------------------------------------------------------

def test_json_archives_are_read_and_the_next_compaction_converts_them(tmp_path, cli):
    root = tmp_path / "benchmarks"
    old = month_of_runs("2025-10")
    legacy = root / archive_path("2025/10", archive_digest(r.run_id for r in old))
    legacy = legacy.with_name(legacy.name.replace(".parquet", ".json.gz"))
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(encode_json_archive(Archive("2025/10", tuple(old), summarised=False)))
    recent = month_of_runs("2026-01")
    store_in_folder(recent, root)
    assert list(load_history(root).runs) == in_order(old + recent)
    assert cli("data", "verify", check=True).returncode == 0
    done = cli("data", "compact", "--before", "2025-12", check=True)  # nothing loose to fold
    assert f"delete {legacy.relative_to(root).as_posix()}" in done.stdout
    assert not legacy.exists()
    (converted,) = archive_files(root)
    assert converted.suffix == ".parquet"
    assert list(load_history(root).runs) == in_order(old + recent)  # samples kept as they were


# -- edits and verify ----------------------------------------------------------------------------

def compacted(root, cli):
    runs = month_of_runs("2025-11") + month_of_runs("2025-12")
    store_in_folder(runs, root)
    cli("data", "compact", "--before", "2025-12", "--keep-samples", check=True)
    return runs


def test_rename_and_prune_rewrite_parquet_archives(tmp_path, cli):
    root = tmp_path / "benchmarks"
    compacted(root, cli)
    cli("data", "rename", "--benchmark", "bench1", "bench_one", check=True)
    cli("data", "rename", "--param", "batch", "8", "16", check=True)
    history = load_history(root)
    archived = [run for run in history.runs if run.created_at < "2025-12"]
    names = {(r.name, r.params.get("batch")) for run in archived for r in run.results}
    assert ("bench_one", 2) in names and ("bench3", 16) in names and ("bench1", 2) not in names
    cli("data", "prune", "--before", "2025-11-03", check=True)
    assert len(load_history(root).runs) == 4
    (archive,) = archive_files(root)
    assert archive.suffix == ".parquet"
    assert cli("data", "verify", check=True).returncode == 0


def test_verify_names_a_damaged_or_invalid_parquet_archive(tmp_path, cli):
    root = tmp_path / "benchmarks"
    compacted(root, cli)
    (archive,) = archive_files(root)
    # Edited by another tool: written without torch-bench's metadata, one unit made invalid.
    table = pq.read_table(archive, use_threads=False)
    units = table.column("unit").to_pylist()
    units[6] = "furlongs"
    table = table.set_column(table.schema.get_field_index("unit"), "unit",
                             pa.array(units, pa.string())).replace_schema_metadata(None)
    pq.write_table(table, archive)
    damaged = archive.with_name("12-damaged.parquet")
    damaged.write_bytes(archive.read_bytes()[:-100])
    history = load_history(root)
    assert len(history.runs) == 5  # the run with the bad unit is skipped
    assert any("runs[1]: results[1].unit" in p for p in history.problems)
    assert any("12-damaged.parquet: not a readable Parquet archive" in p
               for p in history.problems)
    done = cli("data", "verify")
    assert done.returncode == 1
    assert "runs[1]: results[1].unit" in done.stdout and "12-damaged.parquet" in done.stdout


# -- export --------------------------------------------------------------------------------------

def test_export_gives_the_whole_history_as_one_dataset(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = compacted(root, cli)
    cli("data", "export", "--parquet", "all.parquet", check=True)
    done = cli("data", "export", "--parquet", "by-month", check=True)
    assert "6 runs (30 results) written to by-month (2 files)" in done.stderr
    one = pq.read_table(tmp_path / "all.parquet", use_threads=False)
    many = ds.dataset(tmp_path / "by-month", format="parquet").to_table(use_threads=False)
    for table in (one, many):
        assert table.num_rows == 30
        assert set(table.column("run_id").to_pylist()) == {run.run_id for run in runs}
        medians = table.column("median").to_pylist()
        expected = [r.summary.median if r.summary else None
                    for run in in_order(runs) for r in run.results]
        assert all((a is None and b is None) or math.isclose(a, b)
                   for a, b in zip(medians, expected, strict=True))
    refused = cli("data", "export", "--parquet", "benchmarks/runs/2025/12/" +
                  run_files(root)[0].name)
    assert refused.returncode == 2 and "is a file" in refused.stderr


# -- the site reads it ---------------------------------------------------------------------------

def test_the_site_reads_parquet_history_as_it_reads_run_files(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = compacted(root, cli)
    columns = load_columns(root, None).columns
    from_files = build_model(load_history(root))
    from_cache = build_model(columns)
    assert len(from_cache.runs) == len(runs) == len(from_files.runs)
    assert [s.benchmark_id for s in from_cache.series] == [
        s.benchmark_id for s in from_files.series]
    for mine, theirs in zip(from_cache.series, from_files.series, strict=True):
        assert mine.points.median.tolist() == pytest.approx(theirs.points.median.tolist())


def test_an_archive_rewritten_by_another_tool_in_another_order_still_reads(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = compacted(root, cli)
    (archive,) = archive_files(root)
    table = pq.read_table(archive, use_threads=False)
    backwards = table.take(pa.array(range(table.num_rows - 1, -1, -1)))
    pq.write_table(backwards.replace_schema_metadata(None), archive)
    history = load_history(root)  # validated, since torch-bench did not write it
    assert history.problems == () and list(history.runs) == in_order(runs)
    cli("data", "rename", "--benchmark", "bench2", "bench_two", check=True)  # rewritten again
    (archive,) = archive_files(root)
    assert archive.parent.name == "2025" and archive.name.startswith("11-")
    assert "bench_two" in pq.read_table(archive, use_threads=False).column("name").to_pylist()


# -- what is not ours, or too big ----------------------------------------------------------------

READERS = (("data", "verify"), ("data", "list"), ("data", "export", "--parquet", "all.parquet"),
           ("data", "compact", "--dry-run"), ("site", "--data", "benchmarks", "--out", "site"),
           ("store", "head.json", "--to-folder", "benchmarks"))


def run_every_reader(tmp_path, cli, head):
    save_run(head, tmp_path / "head.json")
    for argv in READERS:
        yield argv, cli(*argv)
    yield ("compare",), cli("compare", "auto", "head.json", "--history", "benchmarks")


def assert_every_reader_skips(tmp_path, cli, runs, said):
    """Every reader goes on past the bad archive and names it (`said`) without a traceback;
    `data verify` fails. (`store --to-folder` reads no archive.)"""
    head = new_run(runs[-1].results, created_at="2025-12-20T12:00:00Z",
                   git={"branch": "pr", "sha": "f" * 40, "base_branch": "main"},
                   env=runs[-1].env)
    for argv, done in run_every_reader(tmp_path, cli, head):
        assert "Traceback" not in done.stderr, argv
        assert done.returncode == (1 if argv == ("data", "verify") else 0), (argv, done.stderr)
        if argv[0] != "store":
            assert said in done.stdout + done.stderr, argv


def test_a_parquet_file_without_our_columns_is_skipped_by_name_in_every_reader(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = compacted(root, cli)
    foreign = root / "archive" / "2025" / "10-foreign.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), foreign)
    assert_every_reader_skips(tmp_path, cli, runs,
                              "10-foreign.parquet: not a torch-bench archive: no column "
                              "'run_id'")
    assert "7 runs" in cli("data", "list").stdout  # 6 beside it (3 archived) and the head


def test_an_archive_claiming_more_rows_than_the_cap_is_refused_before_decoding(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = compacted(root, cli)
    (archive,) = archive_files(root)
    table = pq.read_table(archive, use_threads=False)
    # a few hundred KB on disk: the same row over and over
    huge = table.take(pa.array([0] * (MAX_ARCHIVE_ROWS + 1)))
    bomb = archive.with_name("10-huge.parquet")
    pq.write_table(huge.replace_schema_metadata(table.schema.metadata), bomb,
                   compression="zstd")
    assert bomb.stat().st_size < 2 << 20
    assert_every_reader_skips(tmp_path, cli, runs,
                              f"10-huge.parquet: not read: {MAX_ARCHIVE_ROWS + 1:,} rows, over "
                              f"the cap of {MAX_ARCHIVE_ROWS:,}")


def test_compaction_leaves_a_month_that_would_pass_the_cap_as_run_files(tmp_path, cli,
                                                                          monkeypatch):
    root = tmp_path / "benchmarks"
    store_in_folder(month_of_runs("2025-11") + month_of_runs("2025-10", days=1), root)
    monkeypatch.setattr(plan, "MAX_ARCHIVE_ROWS", 10)  # November has 15 results, October 5
    compact = plan.plan_compact(scan_folder(root), "2025/12", summarise=True)
    assert compact.left == ("2025/11: not compacted: 15 results, over the cap of 10 an "
                            "archive is read with",)
    assert [path.parts[:2] for path in compact.writes] == [("archive", "2025")]
    assert all("/11/" not in str(path) for path in compact.deletes)
