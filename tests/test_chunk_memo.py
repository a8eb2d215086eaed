"""The chunk memo: the previous build's digests and lengths of complete history chunks are
reused only while the runs and points they were made from are the same, and reusing them
gives exactly what working them out again gives."""

from __future__ import annotations

import json

import pytest

from test_incremental_build import run, tree
from torch_bench.render import chunk_memo, data
from torch_bench.render.build import build_site
from torch_bench.render.chunk_memo import ChunkMemo, all_chunks
from torch_bench.render.content_key import run_digests
from torch_bench.render.model import build_model
from torch_bench.render.plan import environment_codes
from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import History


@pytest.fixture(autouse=True)
def short_chunks(monkeypatch):
    monkeypatch.setattr(data, "CHUNK_POINTS", 10)


def model_of(runs):
    return build_model(History(tuple(runs)))


def kept_after(runs) -> dict:
    """The memo a build of `runs` keeps, as the build cache stores it (JSON)."""
    model = model_of(runs)
    memo = ChunkMemo(None, run_digests(model.runs))
    all_chunks(model.series, memo, environment_codes)
    return json.loads(json.dumps(memo.kept()))


def chunks_with(stored, runs):
    """(chunks from the memo, series whose environments had to be worked out, chunks worked
    out from scratch)."""
    model = model_of(runs)
    asked = []

    def env_of(series):
        asked.append(series.name)
        return environment_codes(series)
    found = all_chunks(model.series, ChunkMemo(stored, run_digests(model.runs)), env_of)
    fresh = all_chunks(model.series, ChunkMemo(None, run_digests(model.runs)),
                       environment_codes)
    return found, sorted(asked), fresh


def test_a_new_run_inside_the_head_reuses_every_remembered_chunk():
    runs = [run(i) for i in range(36)]
    found, asked, fresh = chunks_with(kept_after(runs[:35]), runs)
    assert asked == []  # 36 points: the same three complete chunks, none worked out again
    assert found == fresh
    assert all(len(chunks.digests) == 3 for chunks in found.values())


def test_a_chunk_completed_by_the_new_run_is_worked_out_and_added():
    runs = [run(i) for i in range(40)]
    found, asked, fresh = chunks_with(kept_after(runs[:39]), runs)
    assert asked == ["gru", "lstm"]
    assert found == fresh
    assert all(len(chunks.digests) == 4 for chunks in found.values())


def test_a_value_changed_inside_a_remembered_chunk_is_not_trusted():
    runs = [run(i) for i in range(36)]
    stored = kept_after(runs)
    old = runs[3]
    runs[3] = new_run([measured("rnns", "lstm", "forward_time", [2.01] * 5,
                                params={"hidden_size": 64}), *old.results[1:]],
                      created_at=old.created_at, git=old.git, ci=old.ci, env=old.env,
                      run_id=old.run_id)
    found, asked, fresh = chunks_with(stored, runs)
    assert asked == ["lstm"]  # gru's points are the same: its chunks still hold
    assert found == fresh


def test_a_run_added_before_the_remembered_ones_voids_the_memo():
    runs = [run(i) for i in range(36)]
    stored = kept_after(runs[1:])
    found, asked, fresh = chunks_with(stored, runs)  # run 0 sorts first: positions moved
    assert asked == ["gru", "lstm"]
    assert found == fresh


def test_a_run_whose_display_facts_changed_voids_the_memo():
    runs = [run(i) for i in range(36)]
    stored = kept_after(runs)
    old = runs[3]  # the same results, the commit message edited (the pages show it)
    runs[3] = new_run(list(old.results), created_at=old.created_at,
                      git={**old.git, "message": "a better message"}, ci=old.ci, env=old.env,
                      run_id=old.run_id)
    found, asked, fresh = chunks_with(stored, runs)
    assert asked == ["gru", "lstm"]
    assert found == fresh


def test_another_renderer_or_a_damaged_memo_is_not_used(monkeypatch):
    runs = [run(i) for i in range(36)]
    stored = kept_after(runs)
    damaged = json.loads(json.dumps(stored))
    first = next(iter(damaged["series"].values()))
    first["digests"] = first["digests"][:1]  # fewer digests than the points it covers
    for memo in (damaged, {"series": []}, "not a memo", None):
        found, asked, fresh = chunks_with(memo, runs)
        assert found == fresh
    assert chunks_with(damaged, runs)[1] == [damaged_name(stored, first)]
    monkeypatch.setattr(chunk_memo, "renderer_fingerprint", lambda: "a newer renderer")
    assert chunks_with(stored, runs)[1] == ["gru", "lstm"]


def damaged_name(stored: dict, entry: dict) -> str:
    key = next(key for key, value in stored["series"].items()
               if value["hash"] == entry["hash"])
    return "lstm" if "lstm" in key else "gru"


def test_a_site_updated_with_the_memo_equals_a_fresh_build(tmp_path):
    runs = [run(i) for i in range(46)]
    site = build_site(History(tuple(runs[:44])), tmp_path / "site")
    build_site(History(tuple(runs[:45])), site)  # the memo covers four chunks
    build_site(History(tuple(runs)), site)
    assert tree(site) == tree(build_site(History(tuple(runs)), tmp_path / "fresh"))


def test_hashes_made_by_threads_come_back_in_order(monkeypatch):
    import hashlib

    import numpy as np

    from torch_bench.render import workers
    monkeypatch.setattr(workers, "default_jobs", lambda: 4)  # threads even on one core
    arrays = [np.full(1000 + 37 * i, i, np.float64) for i in range(50)]

    def sha(values):
        return hashlib.sha1(values).hexdigest()
    assert workers.on_threads(sha, arrays) == [sha(a) for a in arrays]
    assert workers.on_threads(sha, []) == []
