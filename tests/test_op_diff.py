"""The operator diff's logic and its rendering, on hand-made profiles: what grew, shrank,
appeared or vanished, split by shapes where the sides differ; the noise floor; escaping of
operator names; the profile document's parser under fuzzing; the explain budget."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_bench.analyze.explain import Target, explain, targets_from_verdicts
from torch_bench.analyze.op_diff import diff_profiles
from torch_bench.execute.profile_sides import SideOutcome
from torch_bench.report.fit import COMMENT_LIMIT, utf16_length
from torch_bench.report.op_diff import headline, markdown_full, markdown_short
from torch_bench.results.op_profile import (
    Compilation,
    OpProfile,
    OpRow,
    profile_from_dict,
)
from torch_bench.suites.base import CaseSpec, Output

FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def profile(*rows, compilation=None):
    return OpProfile("planted/mlp", "latency", 5, tuple(OpRow(*r) for r in rows), compilation)


BASE = profile(("aten::addmm", "[[64, 128]]", "cpu", 1000.0, 2.0),
               ("aten::relu", "[[64, 128]]", "cpu", 50.0, 1.0),
               ("aten::copy_", "[[64]]", "cpu", 30.0, 1.0))


def test_a_grown_operator_leads_with_its_relative_change():
    head = profile(("aten::addmm", "[[64, 128]]", "cpu", 1410.0, 2.0),
                   ("aten::relu", "[[64, 128]]", "cpu", 51.0, 1.0),
                   ("aten::copy_", "[[64]]", "cpu", 30.0, 1.0))
    diff = diff_profiles(BASE, head)
    first = diff.changes[0]
    assert (first.name, first.kind, first.by_shape) == ("aten::addmm", "grew", ())
    assert first.relative == pytest.approx(0.41)
    assert [c.name for c in diff.notable()] == ["aten::addmm"]  # relu's +1 µs is noise
    assert headline(diff, str) == "aten::addmm +0.41 ms (+41%)"


def test_new_and_vanished_operators_and_call_counts():
    head = profile(("aten::addmm", "[[64, 128]]", "cpu", 1000.0, 2.0),
                   ("aten::relu", "[[64, 128]]", "cpu", 50.0, 1.0),
                   ("aten::sort", "[[64, 128]]", "cpu", 200.0, 2.0))
    diff = diff_profiles(BASE, head)
    kinds = {c.name: c.kind for c in diff.notable()}
    assert kinds == {"aten::sort": "new", "aten::copy_": "vanished"}
    assert headline(diff, str) == "new aten::sort (+0.2 ms, 2 call(s)), aten::copy_ gone " \
                                  "(-0.03 ms)"


def test_an_operator_with_other_shapes_is_split_by_shape():
    head = profile(("aten::addmm", "[[64, 1024]]", "cpu", 3000.0, 2.0),
                   ("aten::relu", "[[64, 128]]", "cpu", 50.0, 1.0),
                   ("aten::copy_", "[[64]]", "cpu", 30.0, 1.0))
    first = diff_profiles(BASE, head).changes[0]
    assert (first.name, first.shapes, first.delta_us) == ("aten::addmm", None, 2000.0)
    assert {(p.shapes, p.kind) for p in first.by_shape} == {("[[64, 1024]]", "new"),
                                                            ("[[64, 128]]", "vanished")}


def test_graph_breaks_and_kernels_come_into_the_headline():
    base = profile(("aten::mm", "", "cpu", 10.0, 1.0), ("gemm_kernel", "", "cuda", 90.0, 1.0),
                   compilation=Compilation(graphs=1, graph_breaks=0, frames=1))
    head = profile(("aten::mm", "", "cpu", 10.0, 1.0), ("gemm_kernel", "", "cuda", 90.0, 3.0),
                   compilation=Compilation(graphs=2, graph_breaks=1, frames=2,
                                           break_reasons=(("graph_break()", 1),)))
    line = headline(diff_profiles(base, head), str)
    assert line.startswith("graph breaks 0 → 1, graphs 1 → 2, frames compiled 1 → 2")
    assert line.endswith("kernels per step 1 → 3")


def test_nothing_notable_says_what_it_could_see():
    assert headline(diff_profiles(BASE, BASE), str) == "no operator changed beyond 0.0216 ms"


HOSTILE = "aten::x|</summary><img src=x onerror=alert(1)> @octocat [a](http://evil) ``"


def test_operator_names_are_escaped_in_markdown():
    head = profile(*((r.name, r.shapes, r.device, r.self_us, r.calls) for r in BASE.rows),
                   (HOSTILE, "|[x]|", "cpu", 900.0, 1.0))
    target = Target("explainwork.suite", CaseSpec("planted", "mlp|<b>", {}, (Output("t"),)))
    explanation = explain([target], lambda t, side: (SideOutcome(BASE if side == "base"
                                                                 else head), None), 100)
    for text in (markdown_short(explanation), markdown_full(explanation)):
        assert "<img" not in text and "</summary><img" not in text and "@octocat" not in text
        assert "](http" not in text and "mlp|<b>" not in text
        table_rows = [line for line in text.splitlines() if line.startswith("| ")]
        assert all(line.count(" | ") == 6 for line in table_rows)  # no cell broke out


def test_many_cases_stay_short_in_the_comment():
    rows = [(f"aten::op{i}", f"[[{i}]]", "cpu", float(i), 1.0) for i in range(2000)]
    head = profile(*((n, s, d, us * 3, c) for n, s, d, us, c in rows))
    targets = [Target("s", CaseSpec("planted", f"case{i}", {}, (Output("t"),)), "latency",
                      None, "regression", 1.5) for i in range(20)]
    explanation = explain(targets, lambda t, side: (SideOutcome(profile(*rows) if side == "base"
                                                                else head), None), 1e9)
    assert utf16_length(markdown_short(explanation)) < COMMENT_LIMIT / 4


def test_targets_are_regressions_then_improvements_of_planned_cases():
    planned = [("s", CaseSpec("planted", n, {"device": "cpu"}, (Output("latency"),)))
               for n in ("a", "b", "c")]
    verdicts = [
        {"suite": "planted", "name": "a", "params": {"device": "cpu"}, "metric": "latency",
         "verdict": "improvement", "ratio": 0.5},
        {"suite": "planted", "name": "b", "params": {"device": "cpu"}, "metric": "latency",
         "verdict": "unchanged", "ratio": 1.0},
        {"suite": "planted", "name": "c", "params": {"device": "cpu", "runtime": "compiled"},
         "metric": "latency", "verdict": "regression", "ratio": 1.2},
        {"suite": "planted", "name": "gone", "params": {}, "metric": "latency",
         "verdict": "regression", "ratio": 2.0},
    ]
    found = targets_from_verdicts(planned, verdicts)
    assert [(t.case.name, t.kind, t.runtime) for t in found] == [
        ("c", "regression", "compiled"), ("a", "improvement", None)]


def test_the_budget_stops_before_a_case_it_cannot_finish():
    now = [0.0]

    def profile_side(target, side):
        now[0] += 30.0  # each side of each case takes 30 s
        return SideOutcome(BASE), None

    targets = [Target("s", CaseSpec("planted", n, {}, (Output("t"),))) for n in "abcd"]
    done = explain(targets, profile_side, budget_s=150.0, clock=lambda: now[0])
    # 60 s per case: a, b (120 s); c would end at 180 s > 150 s
    assert [e.target.case.name for e in done.explained] == ["a", "b"]
    assert [t.case.name for t in done.skipped] == ["c", "d"]


VALID = {"schema": "torch-bench-op-profile", "version": 1, "label": "planted/mlp",
         "window": "latency", "steps": 5, "trace": None,
         "rows": [{"name": "aten::mm", "shapes": "[[2, 2]]", "device": "cpu", "self_us": 1.5,
                   "calls": 1}],
         "compilation": {"graphs": 1, "graph_breaks": 1, "frames": 2,
                         "break_reasons": [["graph_break()", 1]]}}


def test_a_profile_survives_its_json_form():
    parsed = profile_from_dict(VALID)
    assert profile_from_dict(json.loads(json.dumps(parsed.to_dict()))) == parsed


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=4),
    max_leaves=30)


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(VALID) + ["rows", "x"]), json_values,
                       max_size=8), json_values)
def test_a_mangled_profile_is_a_value_error_or_a_valid_profile(replacements, row):
    data = {**VALID, **replacements}
    if isinstance(data.get("rows"), list):
        data["rows"] = [*data["rows"], row]
    try:
        parsed = profile_from_dict(data)
    except ValueError:
        return
    assert all(math.isfinite(r.self_us) and r.self_us >= 0 for r in parsed.rows)
    diff_profiles(parsed, parsed)  # whatever parses can be compared


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["aten::a", "aten::b", "k"]),
                          st.sampled_from(["", "[[1]]", "[[2]]"]),
                          st.sampled_from(["cpu", "cuda"]),
                          st.floats(0, 1e6), st.floats(0, 100)), max_size=12),
       st.lists(st.tuples(st.sampled_from(["aten::a", "aten::b", "k"]),
                          st.sampled_from(["", "[[1]]", "[[2]]"]),
                          st.sampled_from(["cpu", "cuda"]),
                          st.floats(0, 1e6), st.floats(0, 100)), max_size=12))
def test_the_changes_add_up_to_the_change_of_the_step(base_rows, head_rows):
    diff = diff_profiles(profile(*base_rows), profile(*head_rows))
    total = sum(c.delta_us for c in diff.changes)
    assert math.isclose(total, diff.head_total_us - diff.base_total_us, rel_tol=1e-9,
                        abs_tol=1e-6)
    sizes = [abs(c.delta_us) for c in diff.changes]
    assert sizes == sorted(sizes, reverse=True)
    for change in diff.changes:
        if change.by_shape:
            assert math.isclose(sum(p.delta_us for p in change.by_shape), change.delta_us,
                                rel_tol=1e-9, abs_tol=1e-6)
