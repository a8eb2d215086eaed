"""Parts of the benchmark pages made once and shared by many (a run's table cells, a chart's
x coordinates): each page still shows its own runs and its own values."""

from __future__ import annotations

import re

from torch_bench.render.build import build_site
from torch_bench.render.svg_chart import VIEW, trend_chart
from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import History


def run(index: int, names: tuple[str, ...]):
    results = [measured("rnns", name, "forward_time", [2.0 + 0.01 * index + k / 100
                                                       for k in range(5)])
               for name in names]
    return new_run(results, created_at=f"2026-03-01T{index:02d}:00:00Z",
                   git={"sha": f"{index:040x}", "branch": "main",
                        "message": f"change {index} <b>bold</b>"},
                   ci={"provider": "local"}, env={"torch": "2.5.0", "fingerprint": "f"})


def table_messages(page: str) -> list[str]:
    return re.findall(r'<td class="message" title="[^"]*">([^<]*)</td>', page)


def test_each_page_lists_its_own_runs_with_their_text_escaped(tmp_path):
    runs = [run(i, ("lstm", "gru") if i % 2 else ("lstm",)) for i in range(8)]
    site = build_site(History(tuple(runs)), tmp_path / "site")
    lstm = next((site / "bench").glob("rnns-lstm-*.html")).read_text(encoding="utf-8")
    gru = next((site / "bench").glob("rnns-gru-*.html")).read_text(encoding="utf-8")
    assert len(table_messages(lstm)) == 8 and len(table_messages(gru)) == 4
    assert table_messages(gru)[0] == "change 7 &lt;b&gt;bold&lt;/b&gt;"
    assert "change 6" not in "".join(table_messages(gru))  # a run gru was not measured in
    assert "<b>bold</b>" not in lstm + gru


def pairs(points: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in points.split())]


def test_a_chart_draws_every_point_and_a_ribbon_inside_the_plot():
    values = [10.0 + (i % 7) * 0.1 for i in range(120)]
    chart = trend_chart(values, [f"2026-03-01T{i % 24:02d}:00:00Z" for i in range(120)], "ms",
                        quartiles=([v - 5 for v in values], [v + 50 for v in values]))
    line, ribbon = pairs(chart.line), pairs(chart.spread)
    assert len(line) == 120 and line[0][0] == 0 and line[-1][0] == VIEW
    assert line[-1] == chart.last
    assert len(ribbon) == 240 and [x for x, _ in ribbon[:120]] == [x for x, _ in line]
    assert all(0 <= y <= VIEW for _, y in ribbon)  # the wide quartiles are clipped
    assert "-0" not in chart.spread
    one = trend_chart([3.0], ["2026-03-01T00:00:00Z"], "ms")
    assert pairs(one.line)[0][0] == VIEW / 2  # a single point in the middle
