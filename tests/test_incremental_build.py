"""A site rebuilt after new runs, reusing what the previous build learned, is byte-identical to
a site built from scratch from the same history."""

from __future__ import annotations

import json
import math
from pathlib import Path

from torch_bench.render import paths
from torch_bench.render.build import build_site
from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import History


def run(index: int):
    step = 1.1 if index >= 40 else 1.0
    results = [measured("rnns", name, "forward_time",
                        [base * step * (1 + 0.01 * math.sin(index * 7 + k)) for k in range(5)],
                        params={"hidden_size": 64})
               for name, base in (("lstm", 2.0), ("gru", 3.0))]
    day, hour = divmod(index, 24)
    return new_run(results, created_at=f"2026-02-{day + 1:02d}T{hour:02d}:00:00Z",
                   git={"sha": f"{index:040x}", "branch": "main", "message": f"change {index}"},
                   ci={"provider": "local"}, env={"torch": "2.5.0", "fingerprint": "f"})


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_update_with_a_new_run_equals_a_full_build(tmp_path):
    runs = [run(i) for i in range(101)]
    updated = build_site(History(tuple(runs[:100])), tmp_path / "site")
    memo = json.loads((updated / paths.CHANGE_POINT_MEMO).read_text(encoding="utf-8"))
    assert memo  # complete chunks of the history were remembered
    build_site(History(tuple(runs)), updated)
    fresh = build_site(History(tuple(runs)), tmp_path / "fresh")
    assert tree(updated) == tree(fresh)
    # the step 61 runs back is marked, over the whole history
    series = json.loads(next((fresh / "json" / "series").glob("rnns-lstm-*.json")).read_text())
    assert [c["index"] for c in series["change_points"]] == [40]


def test_a_damaged_memo_is_ignored(tmp_path):
    runs = tuple(run(i) for i in range(90))
    site = build_site(History(runs), tmp_path / "site")
    (site / paths.CHANGE_POINT_MEMO).write_text("{not json", encoding="utf-8")
    build_site(History(runs), site)
    assert tree(site) == tree(build_site(History(runs), tmp_path / "fresh"))


def lstm_only_run(index: int):
    """A run that measured only the lstm benchmark."""
    full = run(index)
    return new_run([r for r in full.results if r.name == "lstm"], created_at=full.created_at,
                   git=full.git, ci=full.ci, env=full.env)


def file_ids(root: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file()}


def test_a_one_run_update_leaves_the_files_of_untouched_benchmarks_untouched(tmp_path,
                                                                            monkeypatch):
    from torch_bench.render import data

    monkeypatch.setattr(data, "RUN_CHUNK", 20)
    runs = [run(i) for i in range(60)]
    newest = lstm_only_run(60)
    site = build_site(History(tuple(runs)), tmp_path / "site")
    before = file_ids(site)
    build_site(History((*runs, newest)), site)
    after = file_ids(site)
    gru = [p for p in before if "rnns-gru-" in p]
    lstm = [p for p in before if "rnns-lstm-" in p]
    assert len(gru) == 3 and len(lstm) == 3  # page, history file, trend file
    assert all(after[p] == before[p] for p in gru)  # same inode, same mtime: not written
    assert all(after[p][0] != before[p][0] for p in lstm)  # the measured one was rewritten
    for old in (paths.run_table(0), paths.run_values_pack(0), paths.run_table(2)):
        assert after[old] == before[old]  # complete run tables are kept as they are
    assert after[paths.run_table(3)] != before.get(paths.run_table(3))  # the new run's
    assert after[paths.PLOTLY_FILE] == before[paths.PLOTLY_FILE]
    fresh = build_site(History((*runs, newest)), tmp_path / "fresh")
    assert tree(site) == tree(fresh)


def test_an_outdated_content_key_does_not_keep_a_stale_page(tmp_path):
    runs = [run(i) for i in range(30)]
    site = build_site(History(tuple(runs)), tmp_path / "site")
    page = next((site / paths.BENCHMARK_DIR).glob("rnns-gru-*.html"))
    page.write_text("stale", encoding="utf-8")  # same key, different bytes: kept as found
    keys = site / paths.RENDER_KEYS
    keys.write_text(keys.read_text(encoding="utf-8").replace('"', "'"), encoding="utf-8")
    build_site(History(tuple(runs)), site)  # unreadable keys: everything is rendered again
    assert tree(site) == tree(build_site(History(tuple(runs)), tmp_path / "fresh"))


def test_a_benchmark_file_missing_from_the_previous_site_is_made_again(tmp_path):
    runs = tuple(run(i) for i in range(30))
    site = build_site(History(runs), tmp_path / "site")
    next((site / "json" / "trend").glob("rnns-gru-*.json")).unlink()
    build_site(History(runs), site)
    assert tree(site) == tree(build_site(History(runs), tmp_path / "fresh"))


def test_a_new_run_rewrites_only_the_head_of_a_long_history(tmp_path, monkeypatch):
    from torch_bench.render import data

    monkeypatch.setattr(data, "CHUNK_POINTS", 10)
    runs = [run(i) for i in range(36)]
    site = build_site(History(tuple(runs[:35])), tmp_path / "site")
    chunks = sorted((site / "json" / "packs").glob("*/*.bin"))
    assert len(chunks) == 2 * 3  # two benchmarks (in two buckets), three complete chunks each
    inodes = {p: p.stat().st_ino for p in chunks}
    heads = {p: p.stat().st_ino for p in (site / "json" / "series").glob("*.json")}
    build_site(History(tuple(runs)), site)
    assert {p: p.stat().st_ino for p in chunks} == inodes  # kept, not written again
    assert all(p.stat().st_ino != inode for p, inode in heads.items())
    assert tree(site) == tree(build_site(History(tuple(runs)), tmp_path / "fresh"))


def test_a_value_changed_inside_a_complete_chunk_rewrites_its_pack_and_its_page(tmp_path,
                                                                               monkeypatch):
    from torch_bench.render import data

    monkeypatch.setattr(data, "CHUNK_POINTS", 10)
    runs = [run(i) for i in range(36)]
    site = build_site(History(tuple(runs)), tmp_path / "site")
    edited = list(runs)
    old = runs[3]  # the same run, its lstm result measured anew (say, re-imported): a small
    edited[3] = new_run([measured("rnns", "lstm", "forward_time", [2.01] * 5,  # difference
                                  params={"hidden_size": 64}), *old.results[1:]],
                        created_at=old.created_at, git=old.git, ci=old.ci, env=old.env,
                        run_id=old.run_id)
    build_site(History(tuple(edited)), site)
    assert tree(site) == tree(build_site(History(tuple(edited)), tmp_path / "fresh"))
