"""The units the dashboard writes its figures in (render/units.py): the stored unit's own scale,
SI prefixes for any other unit, one unit per chart for every figure about it."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from torch_bench.render.escape import breakable
from torch_bench.render.model import RunInfo
from torch_bench.render.svg_chart import trend_chart
from torch_bench.render.units import display_unit, format_value, significant


def test_times_and_memory_use_their_own_scale():
    assert format_value(208e-6, "ms") == "208 ns"
    assert format_value(12.345, "ms") == "12.35 ms"
    assert format_value(2048.0, "MB") == "2 GB"


def test_other_units_take_si_prefixes():
    assert format_value(1_820_491_309.13, "items/s") == "1.82 G items/s"
    assert format_value(1523.62, "samples/s") == "1.524 k samples/s"
    assert format_value(950.0, "items/s") == "950 items/s"
    assert format_value(2.5e9, "1") == "2.5 G"  # an imported score of no known unit
    assert format_value(1.234, "ratio") == "1.234"  # ratios stay as they are


def test_significant_digits():
    assert significant(1234.6) == "1,235"  # the whole part is never cut
    assert significant(12.3456) == "12.35"
    assert significant(0.00123456) == "0.001235"
    assert significant(-0.00001) == "-0.00001"
    assert significant(100.0) == "100"


@given(st.floats(min_value=1e-9, max_value=1e18, allow_nan=False),
       st.sampled_from(["ms", "MB", "items/s", "1", "count", "ratio", "ops/s"]))
def test_a_value_in_its_display_unit_reads_back_within_four_digits(value, unit):
    shown = display_unit(value, unit)
    number = float(shown.number(value).replace(",", ""))
    assert math.isclose(number * shown.size, value, rel_tol=1e-3)
    assert number < 10_000 or unit in ("ratio",) or shown.size >= 1e15 or (
        unit == "MB" and shown.symbol == "TB") or (unit == "ms" and shown.symbol == "s")


def test_a_charts_header_values_and_spreads_share_its_unit():
    # 900-1100 ns: the axis' top (1.2 µs) picks µs; every figure of the chart follows it
    values = [9e-4, 1e-3, 1.1e-3]
    chart = trend_chart(values, ["2026-01-01T00:00:00Z"] * 3, "ms")
    assert chart.unit == "µs" and chart.shown.symbol == "µs"
    assert chart.shown.format(9e-4) == "0.9 µs"


def run_info(**env):
    facts = {"gpu": "CPU", "torch": "", "cuda": "", "fingerprint": "", **env}
    return RunInfo(index=0, run_id="r", created_at="", date="", sha="", short_sha="",
                   branch="", message="", url=None, pr_number=None, pr_title="",
                   driver="", **facts)


def test_the_environment_line_names_only_what_the_run_recorded():
    assert run_info().environment == "not recorded"  # an imported Rust or Go history
    assert run_info(torch="2.6.0", fingerprint="f00d").environment == "CPU · torch 2.6.0"
    assert run_info(gpu="NVIDIA A100", torch="2.6.0", cuda="12.4").environment == (
        "NVIDIA A100 · torch 2.6.0 · CUDA 12.4")
    assert "torch" not in run_info(gpu="NVIDIA A100", fingerprint="ab").environment


def test_a_long_name_may_wrap_at_its_separators_and_stays_escaped():
    shown = str(breakable("tests/test_x.py::test_<b>[a-1]"))
    assert shown == ("tests/<wbr>test_<wbr>x.<wbr>py::<wbr>test_<wbr>&lt;b&gt;[<wbr>a-<wbr>1]")
    assert "<b>" not in shown
