"""Values are shown with a unit scaled to their size, the same everywhere people read them."""

import pytest

from torch_bench.metrics import format_quantity, scaled
from torch_bench.render.formatting import format_value
from torch_bench.report.console import results_table
from torch_bench.report.markdown import value_cell
from torch_bench.results.schema import measured


@pytest.mark.parametrize("value, unit, shown", [
    (3e-6, "ms", "3 ns"),
    (2.5e-3, "ms", "2.5 µs"),
    (12.345678, "ms", "12.35 ms"),
    (1500.0, "ms", "1.5 s"),
    (0.0, "ms", "0 ms"),
    (0.5, "MB", "512 KB"),
    (3072.0, "MB", "3 GB"),
    (1523.6183, "items/s", "1,523.62 items/s"),
    (1.23456, "ratio", "1.235"),
    (None, "ms", "N/A"),
])
def test_values_show_with_a_unit_that_fits_their_size(value, unit, shown):
    assert format_quantity(value, unit) == shown


def test_scaled_keeps_the_value():
    number, symbol = scaled(3e-6, "ms")
    assert symbol == "ns" and number == pytest.approx(3.0)


def test_terminal_markdown_and_dashboard_share_the_formatting():
    assert value_cell(3e-6, "ms") == format_value(3e-6, "ms") == "3 ns"
    table = results_table([measured("x", "tiny-op", "time", [3e-6, 3e-6])])
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(table)
    assert "3 ns" in console.export_text() and "0.0000" not in console.export_text()
