"""A series' points on a branch: the positions a page asks for, before any end it names, are
the ones a plain scan of the points' branches finds, however often and in whatever order it
is asked."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_bench.render.model import Points, RunInfo, RunTable

BRANCHES = ("main", "pr", "")


def info(index: int, branch: str) -> RunInfo:
    return RunInfo(index=index, run_id=f"r{index}", created_at="2026-01-01T00:00:00Z",
                   date="2026-01-01 00:00", sha="0" * 40, short_sha="0" * 8, branch=branch,
                   message="", url=None, pr_number=None, pr_title="", gpu="", torch="2.5",
                   cuda="", driver="", fingerprint="f")


def points_of(branches: list[str]) -> Points:
    table = RunTable(info(i, b) for i, b in enumerate(branches))
    values = np.arange(len(branches), dtype=np.float64)
    return Points(table, np.arange(len(branches), dtype=np.int32), values, values, values,
                  np.ones(len(branches), np.int32))


@settings(max_examples=150, deadline=None)
@given(branches=st.lists(st.sampled_from(BRANCHES), max_size=30),
       questions=st.lists(st.tuples(st.sampled_from((*BRANCHES, "gone", None)),
                                    st.one_of(st.none(), st.integers(-40, 40))), max_size=8))
def test_positions_on_a_branch_are_those_a_scan_finds(branches, questions):
    points = points_of(branches)
    for branch, end in questions:
        scanned = [i for i, b in enumerate(branches[:end]) if branch is not None and b == branch]
        assert points.on_branch(branch, end).tolist() == scanned
        found = points.last_on_branch(branch, end)
        assert (found.run.index if found else None) == (scanned[-1] if scanned else None)


def test_the_positions_kept_for_the_next_question_cannot_be_changed_by_a_caller():
    points = points_of(["main", "pr", "main"])
    with pytest.raises(ValueError):
        points.on_branch("main")[0] = 1
    assert points.on_branch("main").tolist() == [0, 2]
