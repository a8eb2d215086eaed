"""The dashboard's charts as a reader sees them, in Debian's Chromium at a laptop's 1280 x 720
and a phone's 390 px: every chart's axis labels are there, legible (a real font size, inside
the screen, none on top of another), say values and dates, and the names on the cards tell
the benchmarks apart."""

from __future__ import annotations

import re

import pytest

import test_site_browser as shared
from site_history import RUNS, sha_of
from test_site_browser import BERT, served, trend_path
from torch_bench.render.build import build_site
from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import History

playwright_api = pytest.importorskip("playwright.sync_api")

# The browser tests' fixtures: one Chromium, the synthetic site served on 127.0.0.1.
site, base_url, page = shared.site, shared.base_url, shared.page  # browser: conftest.py

SCREENS = {"laptop": {"width": 1280, "height": 720}, "phone": {"width": 390, "height": 844}}
MIN_FONT_PX = 11
NUMBER = re.compile(r"-?[\d,]+(\.\d+)?")
DATE = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}( \d{4})?"
                  r"( \d\d:\d\d)?")

# Every drawn chart inside the first screen, with the boxes of its visible labels.
LABELS = """() => Array.from(document.querySelectorAll('.tchart')).filter((chart) => {
  const box = chart.getBoundingClientRect();
  return box.bottom > 0 && box.top < innerHeight && box.height > 0;
}).map((chart) => Array.from(chart.querySelectorAll('.axis .tick, .unit')).filter((label) =>
  label.checkVisibility() && label.textContent.trim()).map((label) => {
  const box = label.getBoundingClientRect();
  return {text: label.textContent, axis: label.classList.contains('unit') ? 'unit'
            : label.parentElement.classList.contains('y') ? 'y' : 'x',
          left: box.left, right: box.right, top: box.top, bottom: box.bottom,
          font: parseFloat(getComputedStyle(label).fontSize)};
}))"""


def overlapping(a: dict, b: dict) -> bool:
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5)


def check_legible(tab, min_y: int, min_x: int) -> int:
    """Asserts every chart on the first screen is legible; returns how many there are."""
    charts = tab.evaluate(LABELS)
    width = tab.viewport_size["width"]
    for labels in charts:
        ys = [label for label in labels if label["axis"] == "y"]
        xs = [label for label in labels if label["axis"] == "x"]
        assert len(ys) >= min_y and len(xs) >= min_x, labels
        assert all(NUMBER.fullmatch(label["text"]) for label in ys), ys
        assert all(DATE.fullmatch(label["text"]) for label in xs), xs
        for label in labels:
            assert label["font"] >= MIN_FONT_PX, label
            assert 0 <= label["left"] and label["right"] <= width, label
        for k, one in enumerate(labels):
            for other in labels[k + 1:]:
                assert not overlapping(one, other), (one, other)
    return len(charts)


def open_page(browser, url: str, screen: str, tmp_path, name: str):
    context = browser.new_context(viewport=SCREENS[screen])
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(url)
    tab.wait_for_load_state("networkidle")
    tab.screenshot(path=str(tmp_path / f"{name}-{screen}.png"))
    tab.errors = errors
    return context, tab


@pytest.mark.parametrize("screen", SCREENS)
def test_benchmark_chart_reads_at_first_sight(browser, base_url, site, screen, tmp_path):
    context, tab = open_page(browser, base_url + trend_path(site, BERT), screen, tmp_path,
                             "benchmark")
    try:
        assert check_legible(tab, min_y=4, min_x=3) == 1
        assert tab.inner_text("#trend .unit") == "ms"
        labels = [float(t.replace(",", "")) for t in
                  tab.locator("#trend .axis.y .tick").all_inner_texts()]
        assert labels == sorted(labels)  # bottom to top
        steps = {round(b - a, 6) for a, b in zip(labels, labels[1:], strict=False)}
        assert len(steps) == 1  # equal steps
        assert labels[0] <= 10 and labels[-1] >= 12.5  # the range holds the 10 -> 12.5 step
        headline = tab.inner_text(".headline")
        assert re.search(r"latest 12\.\d+ ms .* [+-]\d+\.\d% vs main .* noise band ±", headline)
        box = tab.locator("#trend .plot").bounding_box()
        assert box["x"] + box["width"] <= SCREENS[screen]["width"]
        assert box["width"] >= SCREENS[screen]["width"] * 0.6  # the plot takes the width
        assert tab.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("screen", SCREENS)
def test_overview_opens_on_legible_trends_changes_first(browser, base_url, screen, tmp_path):
    context, tab = open_page(browser, base_url + "index.html", screen, tmp_path, "overview")
    try:
        tab.wait_for_selector("figure.trend[data-rendered='1']", timeout=15000)
        assert check_legible(tab, min_y=2, min_x=2) >= (4 if screen == "laptop" else 1)
        first = tab.locator("figure.trend").first
        assert "worse" in first.get_attribute("class")  # a regression comes first
        card_top = first.bounding_box()["y"]
        assert card_top < SCREENS[screen]["height"] / 2
        assert all(table.bounding_box()["y"] > card_top
                   for table in tab.locator("table").all())
        assert tab.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("screen", SCREENS)
def test_suite_cards_read_at_first_sight(browser, base_url, site, screen, tmp_path):
    suite = next((site / "suites").glob("transformers-*.html")).relative_to(site).as_posix()
    context, tab = open_page(browser, base_url + suite, screen, tmp_path, "suite")
    try:
        tab.wait_for_selector("figure.trend[data-rendered='1']", timeout=15000)
        assert check_legible(tab, min_y=2, min_x=2) >= 1
        assert tab.errors == []
    finally:
        context.close()


def test_a_redrawn_chart_has_the_labels_the_server_drew(page, base_url, site):
    """The page's own drawing (zoom, filters) follows the server's rules: the same points
    get the same axis labels."""
    page.goto(base_url + trend_path(site, BERT))
    page.wait_for_selector("#trend[data-interactive='1']", timeout=15000)
    server = [page.locator(f"#trend .axis.{a} .tick").all_inner_texts() for a in "xy"]
    page.click("#zoom-all")  # the whole history: here the same RUNS points
    page.wait_for_function("() => document.getElementById('zoom-state').textContent === "
                           "'whole history'")
    assert page.locator("#trend svg polyline.line").evaluate(
        "l => l.points.numberOfItems") == RUNS
    assert [page.locator(f"#trend .axis.{a} .tick").all_inner_texts() for a in "xy"] == server


def prefixed_run(index: int):
    """A run of a pytest-benchmark suite: every name shares a long prefix."""
    results = [measured("pytest", f"benchmarks/test_synthetic.py::test_case_{k:03d}", "time",
                        [1.0 + k + 0.01 * index] * 3) for k in range(6)]
    return new_run(results, created_at=f"2026-03-{index + 1:02d}T12:00:00Z",
                   git={"repository": "octo/net", "sha": f"{index:040x}", "branch": "main"},
                   ci={"provider": "local"}, env={"fingerprint": "f00d"})


def test_cards_and_rows_of_a_suite_differ_where_their_names_do(browser, tmp_path):
    history = History(tuple(prefixed_run(i) for i in range(4)))
    site_dir = build_site(history, tmp_path / "site")
    suite = next((site_dir / "suites").glob("*.html")).relative_to(site_dir).as_posix()
    with served(site_dir) as url:
        context = browser.new_context(viewport=SCREENS["phone"])
        try:
            tab = context.new_page()
            tab.goto(url + suite)
            links = tab.locator("figure.trend figcaption a")
            titles = links.all_inner_texts()
            assert len(set(titles)) == 6  # each card's visible title is its own
            assert titles[0] == "…test_case_000"
            for link in links.all():  # and fits its card, not cut at the end
                assert link.evaluate("a => a.scrollWidth <= a.clientWidth")
            captions = tab.locator("figure.trend figcaption").evaluate_all(
                "cs => cs.map(c => c.title)")
            assert "benchmarks/test_synthetic.py::test_case_000 · time" in captions[0]
            row = tab.locator("#suite-table tbody tr a").first
            assert row.inner_text() == "…test_case_000"
            assert row.get_attribute("title") == "benchmarks/test_synthetic.py::test_case_000"
        finally:
            context.close()


def test_a_tap_on_a_phone_shows_the_values_and_links_the_commit(browser, base_url, site):
    context = browser.new_context(viewport=SCREENS["phone"], has_touch=True, is_mobile=True)
    context.route("https://github.com/**", lambda route: route.fulfill(body="commit page"))
    try:
        tab = context.new_page()
        tab.goto(base_url + trend_path(site, BERT))
        box = tab.locator("#trend .plot").bounding_box()
        tab.touchscreen.tap(box["x"] + box["width"] * 3 / (RUNS - 1), box["y"] + 20)
        tab.wait_for_selector("#trend[data-hover='3'] .tip.pinned")
        assert sha_of(3)[:8] in tab.inner_text("#trend-tip")
        link = tab.locator("#trend-tip a")
        with context.expect_page() as opened:
            link.tap()
        assert opened.value.url.endswith(f"/commit/{sha_of(3)}")
    finally:
        context.close()
