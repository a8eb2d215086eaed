"""Trend card titles (render/names.py, card_titles): each card of a suite named apart from the
others within the width of its title line, on the kinds of names real imports bring."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from site_names import CATCH2, DOTNET, GO, JMH, PYTEST, RUST
from torch_bench.render.names import CARD_TITLE_CHARS, ELLIPSIS, boundaries, card_titles


def pieces(title: str) -> list[str]:
    return [p for p in title.split(ELLIPSIS) if p]


def appears_in_order(title: str, name: str) -> bool:
    """Every piece of the title is a part of the name, in the name's order."""
    at = 0
    for piece in pieces(title):
        at = name.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return True


def check(names: list[str]) -> dict[str, str]:
    titles = card_titles(names)
    assert set(titles) == set(names)
    assert len(set(titles.values())) == len(set(names)), titles  # no two cards alike
    for name, title in titles.items():
        assert title == name or len(title) <= CARD_TITLE_CHARS, title
        assert appears_in_order(title, name), (title, name)
    return titles


def test_short_names_are_kept_whole():
    titles = check(GO[:6] + RUST)
    assert titles["BenchmarkFib10-8"] == "BenchmarkFib10-8"
    assert titles["fib/10"] == "fib/10"


def test_jmh_titles_keep_class_and_method_not_the_package():
    titles = check(JMH)
    for name, title in titles.items():
        assert title.startswith(ELLIPSIS), title
        assert "openjdk" not in title
        method = name.rsplit(".", 1)[1]
        assert title.endswith(method[-8:]), title  # the method, where they differ, is seen
    # the two methods of one sample class stay apart, at the start of what differs too
    assert titles[JMH[1]] != titles[JMH[2]]


def test_pytest_paths_keep_the_case_and_its_parameters():
    titles = check(PYTEST)
    shown = titles["tests/test_throughput.py::test_case_006[cpu-128]"]
    assert "006" in shown and "cpu-128" in shown, shown
    assert not shown.startswith("tests/"), shown


def test_a_long_unique_name_is_cut_in_the_middle_not_at_its_end():
    titles = check(CATCH2)
    with_reserve = titles[CATCH2[3]]
    without = titles[CATCH2[4]]
    assert with_reserve.endswith("with reserve") and without.endswith("without reserve")
    assert ELLIPSIS in with_reserve


def test_dotnet_methods_with_arguments():
    titles = check(DOTNET)
    assert titles[DOTNET[1]].endswith("Serialize(size: 100)")
    assert titles[DOTNET[2]].endswith("Deserialize(size: 1)")


def test_names_differing_only_deep_in_the_middle_stay_apart():
    names = [f"a_very_long_shared_start_{k}_and_an_equally_long_shared_end_of_it" for k in
             ("alpha", "beta", "gamma")]
    titles = check(names)
    assert all(len(t) <= CARD_TITLE_CHARS for t in titles.values())


def test_word_boundaries():
    assert boundaries("BenchmarkFib10-8") == [0, 9, 12, 14, 15, 16]
    assert 3 in boundaries("fib/10") and 4 in boundaries("fib/10")


NAME = st.text(alphabet="abcXYZ019_./:-[] ", min_size=1, max_size=60)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a busy machine
@given(st.lists(NAME, min_size=1, max_size=12), st.integers(min_value=8, max_value=40))
def test_any_names_get_distinct_titles_within_the_budget_or_whole(names, budget):
    titles = card_titles(names, budget)
    assert len(set(titles.values())) == len(set(names))
    for name, title in titles.items():
        assert title == name or len(title) <= budget
        assert appears_in_order(title, name)


def test_a_common_prefix_is_cut_at_a_word_boundary():
    titles = check([f"torch_bench.suites.transformers.{m}_inference_latency_fp16"
                    for m in ("bert", "gpt2", "t5")])
    for title in titles.values():
        assert re.match(rf"{ELLIPSIS}[a-z0-9]", title) or not title.startswith(ELLIPSIS), title
