"""`torch-bench site` into an existing site reads only the data files its build cache does not
hold, and the result is byte-identical to a build from scratch whatever happened to the data
folder in between: runs added, a file rewritten, removed or compacted, the cache damaged."""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path

import numpy as np
import pytest

from torch_bench.cli import main
from torch_bench.render import history_cache, paths
from torch_bench.render.columns import ROW_FIELDS
from torch_bench.render.history_cache import (
    CACHE_FORMAT,
    CACHE_NAMES,
    INDEX_NAME,
    ROWS_NAME,
    TAIL_NAME,
    load_columns,
    read_cache,
    rows_of_parquet,
    rows_parquet,
)
from torch_bench.results.document import save_run
from torch_bench.results.schema import measured, new_run
from torch_bench.store.layout import run_path


def a_run(index: int, scale: float = 1.0):
    results = [measured("rnns", name, "forward_time",
                        [base * scale * (1 + 0.01 * math.sin(index * 7 + k)) for k in range(5)],
                        params={"hidden_size": 64})
               for name, base in (("lstm", 2.0), ("gru", 3.0))]
    month, day = divmod(index, 28)
    return new_run(results, run_id=f"run-{index:03d}",
                   created_at=f"2026-{month + 1:02d}-{day + 1:02d}T00:00:00Z",
                   git={"sha": f"{index:040x}", "branch": "main", "message": f"change {index}"},
                   ci={"provider": "local"}, env={"torch": "2.5.0", "fingerprint": "f"})


def store(data: Path, run) -> Path:
    return save_run(run, data / run_path(run))


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def site(data: Path, out: Path, capsys) -> str:
    assert main(["site", "--data", str(data), "--out", str(out)]) == 0
    return capsys.readouterr().err


@pytest.fixture
def history(tmp_path, capsys):
    data = tmp_path / "data"
    for i in range(40):
        store(data, a_run(i))
    site(data, tmp_path / "site", capsys)
    return data, tmp_path / "site"


def cached_files(cache: Path) -> dict[str, tuple]:
    """What a build cache holds per data file (its key and rows), however its rows are split
    between the two row files."""
    return {path: (entry.key, entry.problems, entry.block.runs,
                   {name: column.tobytes() for name, column in entry.block.rows.items()})
            for path, entry in read_cache(cache).items()}


def assert_same_as_fresh(data: Path, updated: Path, tmp_path: Path, capsys,
                         cache_inside: bool = True, cache: Path | None = None) -> None:
    """The updated site is byte for byte the fresh build's, and its build cache (in the
    site, or in `cache`) holds the same as the fresh build's, possibly split otherwise."""
    fresh = tmp_path / "fresh"
    site(data, fresh, capsys)
    row_files = {f"{paths.BUILD_CACHE_DIR}/{name}" for name in CACHE_NAMES}
    kept_apart = row_files | {f"{paths.BUILD_CACHE_DIR}/{name}"
                              for name in ("changepoints.json", "chunks.json")}
    expected = {path: content for path, content in tree(fresh).items()
                if path not in (row_files if cache_inside else kept_apart)}
    assert {path: content for path, content in tree(updated).items()
            if path not in row_files} == expected
    fresh_cache = cached_files(fresh / paths.BUILD_CACHE_DIR)
    assert fresh_cache  # the comparison is not of two empty caches
    assert cached_files(cache or updated / paths.BUILD_CACHE_DIR) == fresh_cache


def test_a_new_run_file_is_the_only_file_read(history, tmp_path, capsys):
    data, out = history
    store(data, a_run(40, scale=1.2))
    log = site(data, out, capsys)
    assert "read 1 data files, 40 from the cache" in log
    assert_same_as_fresh(data, out, tmp_path, capsys)
    assert "read 0 data files, 41 from the cache" in site(data, out, capsys)


def test_a_cache_that_cannot_be_written_leaves_no_scratch_behind(history, tmp_path,
                                                                 monkeypatch):
    data, out = history
    store(data, a_run(40))

    def full_disk(folder: Path, entries, base_files: int = 0):
        (folder / INDEX_NAME).write_bytes(b"{")  # written in part, then the disk was full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(history_cache, "write_cache", full_disk)
    scratch = tmp_path / "scratch"
    with pytest.raises(OSError, match="No space left"):
        load_columns(data, out / paths.BUILD_CACHE_DIR, scratch_in=scratch)
    assert list(scratch.iterdir()) == []


def rows_in(cache: Path, name: str) -> int:
    return len(rows_of_parquet(cache / name)["run"])


def test_new_runs_rewrite_only_the_tail_of_the_cached_rows_until_it_grows(history, tmp_path,
                                                                        capsys):
    data, out = history
    cache = out / paths.BUILD_CACHE_DIR
    base = (cache / ROWS_NAME).read_bytes()
    for index in range(40, 44):  # 2 rows a run: the tail holds up to 10% of them
        store(data, a_run(index))
        site(data, out, capsys)
        assert (cache / ROWS_NAME).read_bytes() == base
        assert rows_in(cache, TAIL_NAME) == 2 * (index - 39)
    assert_same_as_fresh(data, out, tmp_path, capsys)
    store(data, a_run(44))  # 10 rows of 90 in the tail: more than 10%, written as one
    site(data, out, capsys)
    assert (rows_in(cache, ROWS_NAME), rows_in(cache, TAIL_NAME)) == (90, 0)
    assert_same_as_fresh(data, out, tmp_path, capsys)


def test_a_file_of_the_first_part_changed_writes_both_parts_anew(history, tmp_path, capsys):
    data, out = history
    cache = out / paths.BUILD_CACHE_DIR
    store(data, a_run(40))
    site(data, out, capsys)
    path = store(data, a_run(7, scale=3.0))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    site(data, out, capsys)
    assert (rows_in(cache, ROWS_NAME), rows_in(cache, TAIL_NAME)) == (82, 0)
    assert_same_as_fresh(data, out, tmp_path, capsys)


def test_a_file_rewritten_in_place_is_read_again(history, tmp_path, capsys):
    data, out = history
    before = tree(out)
    path = store(data, a_run(7, scale=3.0))  # same run id and path, other values
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert "read 1 data files, 39 from the cache" in site(data, out, capsys)
    assert tree(out) != before
    assert_same_as_fresh(data, out, tmp_path, capsys)


def test_a_removed_file_and_a_compacted_month_leave_no_trace(history, tmp_path, capsys):
    data, out = history
    (data / run_path(a_run(3))).unlink()
    assert main(["data", "compact", "--data", str(data), "--before", "2026-02"]) == 0
    capsys.readouterr()
    log = site(data, out, capsys)
    assert "read 1 data files" in log  # the new archive; the run files of February stay cached
    assert_same_as_fresh(data, out, tmp_path, capsys)


@pytest.mark.parametrize("damage", [
    (INDEX_NAME, b"{not json"), (ROWS_NAME, b"PAR1 truncated"), (ROWS_NAME, b""),
    (TAIL_NAME, b"PAR1 truncated"),
])
def test_a_damaged_cache_is_ignored(history, tmp_path, capsys, damage):
    data, out = history
    name, content = damage
    (out / paths.BUILD_CACHE_DIR / name).write_bytes(content)
    store(data, a_run(40))
    assert "read 41 data files, 0 from the cache" in site(data, out, capsys)
    assert_same_as_fresh(data, out, tmp_path, capsys)


def test_a_broken_file_is_reported_by_every_build(history, tmp_path, capsys):
    data, out = history
    broken = data / "runs" / "2026" / "01" / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert "skipped" in site(data, out, capsys) and str(broken) in capsys.readouterr().err + \
        site(data, out, capsys)
    assert_same_as_fresh(data, out, tmp_path, capsys)


def git(cwd: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout


def test_blob_ids_come_from_the_data_folders_repository_whatever_the_environment(
        tmp_path, monkeypatch):
    """A build run from a git hook or another repository's job (GIT_DIR, GIT_INDEX_FILE set
    there) still keys the data folder's files by their own blob ids."""
    data_repo, elsewhere = tmp_path / "data-repo", tmp_path / "elsewhere"
    store(data_repo / "data", a_run(0))
    for repo in (data_repo, elsewhere):
        git(repo if repo.exists() else tmp_path, "init", "-q", str(repo))
    (elsewhere / "other.txt").write_text("not a data file")
    for repo in (data_repo, elsewhere):
        git(repo, "add", ".")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "files")
    expected = {"runs/2026/01/run-000.json":
                "git:" + git(data_repo, "rev-parse", "HEAD:data/runs/2026/01/run-000.json").strip()}
    assert history_cache.git_blob_ids(data_repo / "data") == expected
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    assert history_cache.git_blob_ids(data_repo / "data") == expected


def test_a_fresh_clone_finds_its_files_in_a_cache_kept_apart(tmp_path, capsys):
    """As in CI: every job clones the data branch anew (new modification times) and builds
    into a fresh folder; the cache restored between jobs is a folder of its own."""
    origin = tmp_path / "origin"
    for i in range(30):
        store(origin / "data", a_run(i))
    git(origin, "init", "-q")
    git(origin, "add", ".")
    git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "runs")
    cache = tmp_path / "cache"
    first = tmp_path / "clone1"
    git(tmp_path, "clone", "-q", str(origin), str(first))
    assert main(["site", "--data", str(first / "data"), "--out", str(tmp_path / "site1"),
                 "--cache", str(cache)]) == 0
    assert "read 30 data files, 0 from the cache" in capsys.readouterr().err
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [*CACHE_NAMES, "changepoints.json", "chunks.json"])
    assert not (tmp_path / "site1" / paths.BUILD_CACHE_DIR / ROWS_NAME).exists()
    second = tmp_path / "clone2"
    git(tmp_path, "clone", "-q", str(origin), str(second))
    store(second / "data", a_run(30))  # the new run, not committed yet
    edited = store(second / "data", a_run(5, scale=2.0))  # and one committed file changed
    os.utime(edited, ns=(0, 0))
    assert main(["site", "--data", str(second / "data"), "--out", str(tmp_path / "site2"),
                 "--cache", str(cache)]) == 0
    assert "read 2 data files, 29 from the cache" in capsys.readouterr().err
    assert_same_as_fresh(second / "data", tmp_path / "site2", tmp_path, capsys,
                         cache_inside=False, cache=cache)


def test_a_cache_of_another_format_or_not_matching_its_index_is_ignored(history, tmp_path,
                                                                       capsys):
    data, out = history
    cache = out / paths.BUILD_CACHE_DIR
    index = cache / INDEX_NAME
    current = f'"format":{CACHE_FORMAT}'.encode()
    assert current in index.read_bytes()
    index.write_bytes(index.read_bytes().replace(current, b'"format":2'))
    assert "read 40 data files, 0 from the cache" in site(data, out, capsys)
    rows = rows_of_parquet(cache / ROWS_NAME)  # rows of fewer files than the index lists
    (cache / ROWS_NAME).write_bytes(rows_parquet({k: v[:-2] for k, v in rows.items()}))
    assert "read 40 data files, 0 from the cache" in site(data, out, capsys)
    assert_same_as_fresh(data, out, tmp_path, capsys)


def test_cached_rows_come_back_bit_for_bit(tmp_path):
    rng = np.random.default_rng(0)
    size = 5000
    median = rng.uniform(0.01, 1e4, size) * 10.0 ** rng.integers(-6, 6, size)
    half = median * rng.uniform(0, 0.5, size)
    rows = {name: rng.integers(-1, 1000, size).astype(dtype) for name, dtype in ROW_FIELDS}
    rows |= {"median": median, "q1": median - half, "q3": median + half}
    skewed = rng.random(size) < 0.05  # quartiles not centred: kept as they are
    rows["q3"][skewed] = median[skewed] * 3
    missing = rng.random(size) < 0.05  # results without a summary
    for name in ("median", "q1", "q3"):
        rows[name][missing] = np.nan
    (tmp_path / "rows.parquet").write_bytes(rows_parquet(rows))
    back = rows_of_parquet(tmp_path / "rows.parquet")
    for name, dtype in ROW_FIELDS:
        assert back[name].dtype == dtype
        assert back[name].tobytes() == rows[name].tobytes(), name


def test_cached_rows_in_many_row_groups_come_back_bit_for_bit(tmp_path, monkeypatch):
    """Row groups end at file ends only, are read by several threads, and a file's rows come
    back whole whether its rows lie in one row group or (a cache another writer cut) span
    several."""
    monkeypatch.setattr(history_cache, "ROW_GROUP_ROWS", 7)
    size = 100
    rows = {name: np.arange(size, dtype=dtype) * 3 for name, dtype in ROW_FIELDS}
    rows["q1"], rows["q3"] = rows["median"] - 1.5, rows["median"] + 2.0
    file_ends = [5, 9, 20, 21, 40, 41, 42, 77, 100]
    assert history_cache.row_group_spans(size, file_ends) == [
        (0, 9), (9, 20), (20, 40), (40, 77), (77, 100)]
    (tmp_path / "rows.parquet").write_bytes(rows_parquet(rows, file_ends))
    groups = history_cache.RowGroups(history_cache.row_groups_of_parquet(
        tmp_path / "rows.parquet"))
    assert [len(g["run"]) for g in groups.groups] == [9, 11, 20, 37, 23]
    for start, end in [(0, 5), (5, 9), (9, 20), (41, 42), (0, 0), (100, 100),
                       (3, 30), (0, 100), (39, 78)]:  # the last three cross groups
        got = groups.span(start, end)
        for name, _ in ROW_FIELDS:
            assert got[name].tobytes() == rows[name][start:end].tobytes(), (start, end, name)
    with pytest.raises(IndexError):
        groups.span(90, 101)


def test_a_cache_in_many_row_groups_gives_the_fresh_build(history, tmp_path, capsys,
                                                         monkeypatch):
    data, out = history
    monkeypatch.setattr(history_cache, "ROW_GROUP_ROWS", 10)  # a run file: 2 rows
    monkeypatch.setattr(history_cache, "TAIL_SHARE", 0.0)  # every build rewrites the rows
    store(data, a_run(40, scale=1.2))
    assert "read 1 data files, 40 from the cache" in site(data, out, capsys)
    assert len(history_cache.row_groups_of_parquet(
        out / paths.BUILD_CACHE_DIR / ROWS_NAME)) == 9  # 82 rows: 8 groups of 10, the last run's 2
    store(data, a_run(41, scale=0.9))
    assert "read 1 data files, 41 from the cache" in site(data, out, capsys)
    assert_same_as_fresh(data, out, tmp_path, capsys)
