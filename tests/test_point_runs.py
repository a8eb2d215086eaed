"""Each point carries what the chart needs of its run (when it was made, on which branch), in
the head file and in every packed segment, so that a benchmark page draws and filters its
whole history without the site's run tables: the minute and branch columns cost nothing
where every value is the same, a byte where they vary a little, and decode as written; each
part of a history names its own branches, so a head file does not grow with every branch
the benchmark ever ran on."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from torch_bench.render import data, packs
from torch_bench.render.build import build_site
from torch_bench.render.columns import Columns, Descriptor
from torch_bench.render.model import MINUTE_LIMIT, build_model, minute_of, no_change_points

MINUTE = 29_000_000  # 2025-02-20


def points(count: int, **changes) -> dict[str, np.ndarray]:
    median = np.linspace(1.0, 2.0, count)
    columns = {"run": np.arange(3, 3 + count), "n": np.full(count, 5), "median": median,
               "q1": median - 0.01, "q3": median + 0.01, "env": np.zeros(count, int),
               "minute": MINUTE + 60 * np.arange(count), "branch": np.zeros(count, int)}
    return {**columns, **changes}


@pytest.mark.parametrize(("changes", "extra_bytes"), [
    ({}, 0),  # a run an hour on one branch: both columns are their header's base
    ({"minute": MINUTE + 60 * np.arange(50) + np.arange(50) % 7}, 49),  # jitter: a byte
    ({"minute": MINUTE + np.cumsum(np.arange(50) ** 2)}, 49 * 2),  # gaps up to 1.6 days
    ({"branch": np.arange(50) % 2}, 50),  # a pull request's runs among main's
    ({"branch": np.arange(50) * 10}, 50 * 2),  # hundreds of branches
])
def test_minute_and_branch_take_the_width_their_values_need(changes, extra_bytes):
    columns = points(50, **changes)
    segment = packs.encode_segment(columns)
    assert len(segment) == packs.HEADER.size + 50 * 8 + extra_bytes
    decoded = packs.decode_segment(segment, 50)
    for name in ("run", "minute", "branch"):
        assert decoded[name].tolist() == np.asarray(columns[name]).tolist(), name


def test_a_segment_made_without_run_facts_reads_them_as_zero():
    columns = {k: v for k, v in points(20).items() if k not in ("minute", "branch")}
    decoded = packs.decode_segment(packs.encode_segment(columns), 20)
    assert decoded["minute"].tolist() == [0] * 20 and decoded["branch"].tolist() == [0] * 20
    assert decoded["branches"] == []


def test_a_segment_ends_with_the_names_of_its_branches():
    names = ["main", "fix/<b>\u2028</b>", "pr-7 ü"]
    columns = points(30, branch=np.arange(30) % 3)
    segment = packs.encode_segment(columns, names)
    assert len(segment) == packs.segment_lengths(columns, 30)[0] + len(packs.json_bytes(names))
    assert packs.decode_segment(segment, 30)["branches"] == names
    for tail in (b"\0", b'{"main": 1}', b"[1]", b'["ma'):
        with pytest.raises(ValueError):
            packs.decode_segment(segment[:-len(packs.json_bytes(names))] + tail, 30)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60).flatmap(lambda count: st.tuples(
    st.lists(st.integers(1, 10**6), min_size=count - 1, max_size=count - 1),
    st.lists(st.integers(-MINUTE_LIMIT, MINUTE_LIMIT), min_size=count, max_size=count),
    st.lists(st.integers(0, 70_000), min_size=count, max_size=count),
    st.lists(st.integers(-1, 10**6), min_size=count, max_size=count),
    st.lists(st.text(max_size=12), max_size=4))))
# the two farthest minutes: their step must still fit the segment's int32 columns
@example(([1], [-MINUTE_LIMIT, MINUTE_LIMIT], [0, 0], [0, 0], []))
def test_any_columns_and_branch_names_decode_as_written_and_their_length_is_known(columns):
    steps, minute, branch, n, names = columns
    count = len(minute)
    made = points(count, run=np.concatenate([[0], np.cumsum(steps)]).astype(np.int64),
                  minute=np.asarray(minute), branch=np.asarray(branch), n=np.asarray(n))
    segment = packs.encode_segment(made, names)
    named = len(packs.json_bytes(names)) if names else 0
    assert packs.segment_lengths(made, count).tolist() == [len(segment) - named]
    decoded = packs.decode_segment(segment, count)
    for name in ("run", "minute", "branch", "n"):
        assert decoded[name].tolist() == np.asarray(made[name]).tolist(), name
    assert decoded["branches"] == names


def test_a_runs_minute_is_read_from_its_time_in_utc():
    assert minute_of("2026-01-01T00:01:59Z") == minute_of("2026-01-01T00:01:00+00:00")
    assert minute_of("2026-01-01T02:01:00+02:00") == minute_of("2026-01-01T00:01:00Z")
    assert minute_of("2026-01-01T00:01:00") == minute_of("2026-01-01T00:01:00Z")  # as UTC
    assert minute_of("2026-01-01T00:00:00.00012Z") == 1_767_225_600 // 60
    assert minute_of("yesterday") == 0 and minute_of("") == 0
    assert -MINUTE_LIMIT <= minute_of("0001-01-01T00:00:00Z") < 0
    assert minute_of("9999-12-31T23:59:59Z") == MINUTE_LIMIT  # any two differ by an int32


def run_facts(i: int, branch: str) -> dict:
    sha = f"{i:040x}"
    return {"run_id": f"run-{i:04d}", "created_at": f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z",
            "repository": "octo/net", "sha": sha, "branch": branch, "message": f"change {i}",
            "url": f"https://github.com/octo/net/commit/{sha}", "pr_number": None,
            "pr_title": "", "gpu": "CPU", "torch": "2.13.0", "cuda": "", "driver": "",
            "fingerprint": "f", "fingerprint_filter": "f", "results": 1, "failures": 0,
            "training": []}


def history(branches: list[str]) -> Columns:
    """One benchmark measured in every run; run i on `branches[i]`."""
    count = len(branches)
    median = 10.0 + np.arange(count) % 3
    rows = {"run": np.arange(count, dtype=np.int32), "desc": np.zeros(count, np.int32),
            "status": np.zeros(count, np.int32), "median": median, "q1": median - 0.1,
            "q3": median + 0.1, "n": np.full(count, 5, np.int32),
            "error": np.full(count, -1, np.int32)}
    descriptor = Descriptor("rnns", "lstm", "forward_time", "ms", "lower", {}, "rnns/lstm")
    return Columns([run_facts(i, b) for i, b in enumerate(branches)], [descriptor], ["ok"],
                   [], rows)


def test_points_number_their_branches_as_they_first_appear_among_them():
    grown = build_model(history(["main", "pr-1", "main", "pr-2", "main", "pr-3", "pr-1",
                                 "main"])).series[0].points
    codes, names = data.branch_index(grown[:5])
    assert names == ["main", "pr-1", "pr-2"] and codes.tolist() == [0, 1, 0, 2, 0]
    codes, names = data.branch_index(grown[5:])
    assert names == ["pr-3", "pr-1", "main"] and codes.tolist() == [0, 1, 2]


def test_the_head_file_carries_its_points_minutes_and_branches_and_locates_run_tables(
        tmp_path, monkeypatch):
    monkeypatch.setattr(data, "CHUNK_POINTS", 4)
    monkeypatch.setattr(data, "RUN_CHUNK", 3)
    branches = ["main", "main", "pr-1", "main", "main", "pr-2", "main", "main", "main", "main"]
    site = build_site(history(branches), tmp_path / "site", finder=no_change_points)
    head_file = next((site / "json" / "series").glob("*.json"))
    head = json.loads(head_file.read_text(encoding="utf-8"))
    assert head["branches"] == ["main"]  # its own points' only: pr-1 and pr-2 ran earlier
    assert head["run_tables"] == [f"../json/runs/table-{k}.json" for k in range(4)]
    assert head["run_table_first"] == [0, 3, 6, 9]
    minutes, named = [], []
    for chunk in head["chunks"]:
        packed = (site / "bench" / chunk["file"]).resolve().read_bytes()
        part = packs.decode_segment(packed[chunk["offset"]:chunk["offset"] + chunk["length"]],
                                    chunk["count"])
        minutes += part["minute"].tolist()
        named += [part["branches"][c] for c in part["branch"].tolist()]
    minutes += np.cumsum(head["points"]["minute_steps"]).tolist()
    named += [head["branches"][c] for c in head["points"]["branch"]]
    assert minutes == [minute_of(f"2026-01-01T00:{i:02d}:00Z") for i in range(10)]
    assert named == branches


def test_renaming_an_older_branch_rebuilds_as_a_fresh_build_would(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "CHUNK_POINTS", 4)
    before = history(["main", "main", "pr-1", "pr-2", "main", "pr-2", "pr-1", "main", "main"])
    # pr-1 and pr-2 swap names in the first chunk only
    renamed = dataclasses.replace(before, runs=[
        {**facts, "branch": {"pr-1": "pr-2", "pr-2": "pr-1"}[facts["branch"]]}
        if i < 4 and facts["branch"] in ("pr-1", "pr-2") else facts
        for i, facts in enumerate(before.runs)])
    build_site(before, tmp_path / "site", finder=no_change_points)
    build_site(renamed, tmp_path / "site", finder=no_change_points)
    build_site(renamed, tmp_path / "fresh", finder=no_change_points)
    packed = sorted((tmp_path / "fresh" / "json" / "packs").rglob("*.bin"))
    assert len(packed) == 2
    for path in packed:
        kept = tmp_path / "site" / path.relative_to(tmp_path / "fresh")
        assert kept.read_bytes() == path.read_bytes(), path.name
