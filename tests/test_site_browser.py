"""The built dashboard in a real browser: Debian's Chromium driven by Playwright, the site
served over HTTP on 127.0.0.1. One browser for the module, a fresh page per test."""

from __future__ import annotations

import contextlib
import csv
import functools
import http.server
import io
import re
import shutil
import threading
from dataclasses import dataclass

import pytest

from site_history import MAIN_RUNS, RUNS, XSS_BRANCH, XSS_MESSAGE, XSS_NAME, sha_of, write_history
from support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: F401 - imported from here too
from torch_bench.render.build import build_site
from torch_bench.render.data import TRAINING_RUNS
from torch_bench.results.document import save_run
from torch_bench.results.schema import measured, new_run
from torch_bench.store.layout import run_path
from torch_bench.store.reader import load_history

playwright_api = pytest.importorskip("playwright.sync_api")
if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is missing: run scripts/setup-browser", allow_module_level=True)


@dataclass(frozen=True)
class Step:
    index: int
    before: float
    after: float
    ratio: float


def step_finder(values):
    """A stand-in for the analysis module: any jump of more than 10% is a change point."""
    return [Step(i, values[i - 1], values[i], values[i] / values[i - 1])
            for i in range(1, len(values)) if abs(values[i] / values[i - 1] - 1) > 0.10]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("dashboard")
    write_history(root / "data")
    return build_site(load_history(root / "data"), root / "site", finder=step_finder)


@contextlib.contextmanager
def served(folder):
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def base_url(site):
    with served(site) as url:
        yield url


def lstm_run(index: int):
    """An rnns run whose variants all share their sizes and device, as fastrnns runs do."""
    sizes = {"device": "cpu", "seq_length": 100, "hidden_size": 512}
    results = [measured("rnns", "lstm", "forward_time", [2.0 + 0.01 * index + k] * 3,
                        params={**sizes, "variant": variant})
               for k, variant in enumerate(("cudnn", "jit", "py"))]
    return new_run(results, created_at=f"2026-02-{index + 1:02d}T12:00:00Z",
                   git={"repository": "octo/net", "sha": sha_of(index), "branch": "main"},
                   ci={"provider": "local"}, env={"torch": "2.6.0", "fingerprint": "f00d"})


@pytest.fixture(scope="module")
def lstm_url(tmp_path_factory):
    root = tmp_path_factory.mktemp("lstm-dashboard")
    for run in (lstm_run(i) for i in range(3)):
        save_run(run, root / "data" / run_path(run))
    with served(build_site(load_history(root / "data"), root / "site")) as url:
        yield url


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    # Commit links point at github.com; answer them locally (no internet here).
    context.route("https://github.com/**", lambda route: route.fulfill(body="commit page"))
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.errors = errors
    yield tab
    context.close()
    assert errors == [], f"console errors: {errors}"


def visit(page, base_url, path):
    page.goto(base_url + path)
    return page


def benchmark_path(site, name_part):
    found = sorted(p.relative_to(site).as_posix() for p in (site / "bench").glob("*.html")
                   if name_part in p.name)
    return found


def trend_path(site, page_text_filter):
    """The benchmark page whose params line contains `page_text_filter`."""
    for path in sorted((site / "bench").glob("*.html")):
        if page_text_filter in path.read_text(encoding="utf-8"):
            return path.relative_to(site).as_posix()
    raise AssertionError(f"no benchmark page mentions {page_text_filter!r}")


def wait_rendered(page, selector):
    page.wait_for_selector(f"{selector}[data-rendered='1']", timeout=15000)


def interactive_trend(page):
    """The benchmark page's trend, drawn by the server, made interactive by pointing at it."""
    wait_rendered(page, "#trend")
    page.hover("#trend .plot")
    page.wait_for_selector("#trend[data-interactive='1']", timeout=15000)


def line_lengths(page):
    """How many points each drawn line of the benchmark's chart has."""
    return page.eval_on_selector_all(
        "#trend svg polyline.line", "lines => lines.map(l => l.points.numberOfItems)")


def point_at(page, index, count, line_value=None):
    """Page coordinates of the `index`-th of `count` points of the benchmark's chart, at the
    height of `line_value` (the middle of the plot without one)."""
    box = page.locator("#trend .plot").bounding_box()
    x = box["x"] + box["width"] * (index / (count - 1) if count > 1 else 0.5)
    if line_value is None:
        return x, box["y"] + box["height"] / 2
    chart = page.locator("#trend .tchart")
    low, high = float(chart.get_attribute("data-low")), float(chart.get_attribute("data-high"))
    return x, box["y"] + box["height"] * (1 - (line_value - low) / (high - low))


def hover_point(page, index, count, run=None):
    """The hover text of the `index`-th of the `count` drawn points (run `run` of the whole
    history, when the drawn points start later)."""
    page.mouse.move(*point_at(page, index, count))
    page.wait_for_selector(f"#trend[data-hover='{index if run is None else run}']",
                           timeout=5000)
    return page.inner_text("#trend-tip")


def xss_fired(page):
    return page.evaluate("() => typeof window.__xss !== 'undefined'")


def visible_rows(page, table):
    return page.locator(f"{table} tbody tr:visible").count()


BERT = "batch_size=1, device=cuda, dtype=float32, mode=inference, model=bert, seq_length=128"


def test_overview_draws_summary_charts_and_filters_runs_by_branch(page, base_url):
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url))
    visit(page, base_url, "index.html")
    for chart in ("[data-summary-chart='0']", "[data-summary-chart='1']"):
        wait_rendered(page, chart)
        assert page.get_attribute(chart, "data-points") == str(RUNS)
        assert page.locator(f"{chart} svg .line").count() == 1
        assert page.locator(f"{chart} .axis.y .tick").count() >= 3  # drawn with its axes
    assert page.locator("figure.summary figcaption").first.inner_text().startswith(
        "geometric-mean speedup")
    assert not any("plotly" in url for url in loaded)  # the overview needs no chart library
    assert visible_rows(page, "#recent-runs") == min(RUNS, 15)
    page.select_option("select[data-row-filter='branch']", XSS_BRANCH)
    assert visible_rows(page, "#recent-runs") == RUNS - MAIN_RUNS
    page.locator("#recent-runs").scroll_into_view_if_needed()  # laid out near the view only
    # the PR title, as text, once the rows near the view are laid out (not at once on a busy
    # machine)
    page.wait_for_function("(title) => document.querySelector('#recent-runs').innerText"
                           ".includes(title)", arg=f"#7 {XSS_MESSAGE}")
    # the change point of the synthetic history is listed, as a regression (latency went up)
    changes = page.locator("section", has_text="Recent change points")
    assert changes.locator("td.worse").count() >= 1
    assert not xss_fired(page)


def test_suite_search_and_facets_reduce_the_rows(page, base_url, site):
    suite = next((site / "suites").glob("transformers-*.html")).relative_to(site).as_posix()
    visit(page, base_url, suite)
    total = visible_rows(page, "#suite-table")
    assert total == 10
    page.fill("#search", "gpt2")
    assert visible_rows(page, "#suite-table") == 4
    page.select_option("select[data-facet='dtype']", "float16")
    assert visible_rows(page, "#suite-table") == 2
    page.select_option("select[data-facet='batch_size']", "8")
    assert visible_rows(page, "#suite-table") == 1
    assert page.inner_text("#row-count") == "1 of 10 benchmarks"
    page.fill("#search", "")
    page.select_option("select[data-facet='dtype']", "")
    page.select_option("select[data-facet='batch_size']", "")
    page.select_option("select[data-facet='model']", XSS_NAME)
    assert visible_rows(page, "#suite-table") == 1
    assert page.locator("#suite-table tbody tr:visible a").first.inner_text() == XSS_NAME
    # the failed newest result shows its status, not a stale change
    t5 = page.locator("#suite-table tbody tr", has_text="t5")
    assert "oom" in t5.inner_text()
    assert not xss_fired(page)


def test_benchmark_trend_points_hover_markers_and_branch_filter(page, base_url, site):
    visit(page, base_url, trend_path(site, BERT))
    interactive_trend(page)
    assert line_lengths(page) == [RUNS]
    assert page.locator("#trend svg .cp").count() == 1
    assert page.locator("#trend svg line.env").count() == 1  # torch 2.5 -> 2.6
    assert page.locator("#trend svg polygon.iqr").count() == 1  # each run's quartiles
    # hover over the run whose commit message tries to close a script tag
    hover = hover_point(page, 3, RUNS)
    # the commit as the server's drawing names it, whether or not the whole history has come
    assert page.locator("#trend-tip code").first.inner_text() == sha_of(3)[:8]
    assert XSS_MESSAGE in hover  # shown as text
    assert "ms" in hover and "IQR" in hover
    assert not xss_fired(page)
    page.focus("#trend")  # from the keyboard: the newest run, then the one before
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f"#trend[data-hover='{RUNS - 1}']")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f"#trend[data-hover='{RUNS - 2}']")
    assert sha_of(RUNS - 2)[:8] in page.inner_text("#trend-tip")
    page.select_option("#branch", "main")
    page.wait_for_function(f"() => document.querySelector('#trend svg polyline.line')"
                           f".points.numberOfItems === {MAIN_RUNS}")


LINES = "() => document.querySelectorAll('#trend svg polyline.line').length"


def test_benchmark_overlays_axis_and_log_scale(page, base_url, site):
    visit(page, base_url, trend_path(site, BERT))
    interactive_trend(page)
    page.select_option("#overlay", "dtype")
    page.wait_for_function(f"{LINES} === 2")
    names = page.locator("#trend-legend > span").all_inner_texts()
    assert sorted(n.strip() for n in names) == ["dtype=float16", "dtype=float32"]
    page.select_option("#overlay", "gpu")
    page.wait_for_function(f"{LINES} === 1")
    page.select_option("#overlay", "")
    assert page.locator("#trend-legend").count() == 0
    low = page.locator("#trend .axis.y .tick").first.inner_text()
    page.check("#log-scale")
    page.wait_for_selector("#trend .tchart[data-log='1']")
    assert page.locator("#trend .axis.y .tick").count() >= 2
    page.uncheck("#log-scale")
    page.wait_for_function("() => !document.querySelector('#trend .tchart[data-log]')")
    assert page.locator("#trend .axis.y .tick").first.inner_text() == low
    page.select_option("#axis", "date")
    page.wait_for_function(f"{LINES} === 1")
    assert page.locator("#trend .axis.x .tick").count() >= 2


def test_drag_zooms_and_double_click_shows_the_whole_history(page, base_url, site):
    visit(page, base_url, trend_path(site, BERT))
    interactive_trend(page)
    start = point_at(page, 1.6, RUNS)  # from just before the third point to past the seventh
    end = point_at(page, 6.4, RUNS)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 20, start[1], steps=2)
    page.mouse.move(*end, steps=4)
    page.mouse.up()
    page.wait_for_function("() => document.querySelector('#trend svg polyline.line')"
                           ".points.numberOfItems === 5")
    assert "5 points zoomed" in page.inner_text("#zoom-state")
    first_date = page.locator("#trend .axis.x .tick").first.inner_text()
    assert first_date == "Jan 3"  # the zoomed range's own dates
    assert sha_of(3)[:8] in hover_point(page, 1, 5, run=3)  # hover reads the zoomed points
    page.dblclick("#trend .plot")
    page.wait_for_function(f"() => document.querySelector('#trend svg polyline.line')"
                           f".points.numberOfItems === {RUNS}")
    assert page.inner_text("#zoom-state") == "whole history"
    assert page.locator("#trend svg polygon.iqr").count() == 1  # redrawn with the ribbon


def test_click_opens_the_commit_and_downloads_carry_the_series(page, base_url, site):
    visit(page, base_url, trend_path(site, BERT))
    interactive_trend(page)
    medians = page.evaluate("() => JSON.parse(document.getElementById('chart-points')"
                            ".textContent).median")
    with page.context.expect_page() as opened:
        page.mouse.click(*point_at(page, 5, RUNS, medians[5]))
    assert opened.value.url.endswith(f"/commit/{sha_of(5)}")
    with page.expect_download() as download:
        page.click("#download-csv")
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert len(rows) == RUNS
    assert rows[3]["message"] == XSS_MESSAGE and rows[3]["sha"] == sha_of(3)
    json_link = page.get_attribute("a[download]", "href")
    assert re.fullmatch(r"\.\./json/series/[\w.-]+\.json", json_link)


def test_hostile_benchmark_name_stays_text(page, base_url, site):
    [path] = benchmark_path(site, "img-src-x")
    visit(page, base_url, path)
    interactive_trend(page)
    assert XSS_NAME in page.inner_text("h1")
    assert XSS_MESSAGE in hover_point(page, 3, RUNS)
    assert page.locator("img").count() == 0
    assert not xss_fired(page)


def test_training_page_draws_eager_and_compiled_loss_curves(page, base_url):
    visit(page, base_url, "training.html")
    page.wait_for_function(
        "document.querySelectorAll(\".loss-chart[data-rendered='1']\").length === 2",
        timeout=15000)
    # native and compiled of one model share a chart with one linear step axis
    for chart in page.locator(".loss-chart").all():
        assert sorted(chart.evaluate("el => el.data.map(t => [t.meta, t.x.length])")) == [
            ["eager", 20], ["inductor", 20]]
        assert chart.evaluate("el => el._fullLayout.xaxis.type") == "linear"
        box = chart.bounding_box()
        drawn = chart.locator(".main-svg").first.bounding_box()
        assert drawn["x"] + drawn["width"] <= box["x"] + box["width"] + 1  # stays in its box
    captions = page.locator("#loss-charts figcaption").all_inner_texts()
    assert any("cnn" in c and "identical" in c for c in captions)
    assert not any("mlp" in c and "identical" in c for c in captions)
    assert page.locator("table tbody tr").count() == 2  # one row per model
    assert page.locator("#training-run option").count() == min(RUNS, TRAINING_RUNS)
    page.select_option("#training-run", "1")
    wait_rendered(page, ".loss-chart")


def test_compare_page_switches_runs(page, base_url):
    visit(page, base_url, "compare.html")
    table = "#compare-table"
    assert visible_rows(page, table) == 16  # server-side: newest run against main's newest
    assert "+25.0%" not in page.inner_text(table)
    page.wait_for_selector("#compare-form[data-ready='1']")
    assert page.locator("#run-a option").count() == RUNS
    page.select_option("#run-a", index=RUNS - 1)  # the oldest run, before the slowdown
    page.wait_for_selector(f"{table}[data-rendered='1']")
    assert page.inner_text("#run-a-commit") == sha_of(0)[:8]
    assert visible_rows(page, table) == 16
    bert = page.locator(f"{table} tbody tr", has_text=BERT)
    assert "worse" in bert.locator("td").last.get_attribute("class")
    page.fill("#compare-search", "gpt2")
    assert visible_rows(page, table) == 4
    assert not xss_fired(page)


def test_trend_cards_put_changes_first_and_draw_only_as_they_scroll_into_view(browser, base_url):
    context = browser.new_context(viewport={"width": 900, "height": 420})
    tab = context.new_page()
    fetched: list[str] = []
    tab.on("request", lambda r: fetched.append(r.url) if "/json/trend/" in r.url else None)
    try:
        tab.goto(base_url + "index.html")
        cards = tab.locator("figure.trend")
        total = cards.count()
        assert total > 8
        # the synthetic step (+25% latency) is flagged as a regression and comes first
        assert "change point +25.0%" in cards.first.inner_text()
        assert "worse" in cards.first.get_attribute("class")
        tab.wait_for_selector("figure.trend[data-rendered='1']", timeout=15000)
        assert 0 < len(fetched) < total  # the cards far below the fold were not fetched
        assert tab.locator("figure.trend").last.get_attribute("data-rendered") is None
        tab.locator("figure.trend").last.scroll_into_view_if_needed()
        tab.wait_for_selector("figure.trend:last-of-type[data-rendered='1']", timeout=15000)
        flagged = tab.locator("figure.trend.worse").first
        assert flagged.locator("svg .cp.worse").count() == 1  # its change point
        assert flagged.locator("svg rect.band").count() == 1  # and the noise band
        assert flagged.locator(".axis.y .tick").count() >= 2  # with values on an axis
        assert flagged.locator(".axis.x .tick").evaluate_all(  # it may be off screen now
            "ticks => ticks.map(t => t.textContent)") == ["Jan 1", "Jan 12"]
    finally:
        context.close()


def test_benchmark_page_chart_is_in_the_page_and_interactive_without_a_library(
        page, browser, base_url, site):
    scriptless = browser.new_context(java_script_enabled=False)
    try:  # no script at all: the chart, its axes and its figures are there
        tab = scriptless.new_page()
        tab.goto(base_url + trend_path(site, BERT))
        assert tab.locator("#trend svg .line").count() == 1
        assert tab.locator("#trend svg .cp.worse").count() == 1  # the +25% step
        assert tab.locator("#trend .axis.y .tick").count() >= 3
        assert tab.locator("#trend .axis.x .tick").first.inner_text() == "Jan 1"
        assert "latest 12." in tab.inner_text(".headline")
    finally:
        scriptless.close()
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url))
    visit(page, base_url, trend_path(site, BERT))
    # the whole history is fetched in idle time, before the reader points at the chart
    page.wait_for_selector("#trend[data-interactive='1']", timeout=15000)
    page.select_option("#branch", "main")
    page.wait_for_function(f"() => document.querySelector('#trend svg polyline.line')"
                           f".points.numberOfItems === {MAIN_RUNS}")
    assert not any("plotly" in url for url in loaded)


def test_trend_cards_drawn_together_each_fit_their_own_card(page, base_url, site):
    suite = next((site / "suites").glob("transformers-*.html")).relative_to(site).as_posix()
    visit(page, base_url, suite)
    page.wait_for_function("() => document.querySelectorAll("
                           "\"figure.trend[data-rendered='1'] svg\").length >= 4")
    inside = page.eval_on_selector_all(
        "figure.trend[data-rendered='1']", "cards => cards.map(c => {"
        "const card = c.getBoundingClientRect(); const svg = c.querySelector('svg')"
        ".getBoundingClientRect(); return svg.width > 50 && svg.left >= card.left && "
        "svg.right <= card.right; })")
    assert inside and all(inside)
    bands = page.eval_on_selector_all("figure.trend svg rect.band title",
                                      "titles => titles.map(t => t.textContent)")
    number = r"-?\d{1,3}(,\d{3})*(\.\d+)?"
    # in the card's unit, the one its axis and latest value are written in
    assert bands and all(re.fullmatch(f"noise band {number} ms – {number} ms", b) for b in bands)


def test_compare_rows_show_only_the_params_they_differ_in(page, lstm_url):
    visit(page, lstm_url, "compare.html")
    shared = "device=cpu, hidden_size=512, seq_length=100"
    table = "#compare-table"
    page.wait_for_selector("#compare-form[data-ready='1']")
    for drawn_by in ("the site", "the page"):
        assert page.inner_text("#compare-shared .params") == shared, drawn_by
        params = page.locator(f"{table} tbody td.params").all_inner_texts()
        assert params == ["variant=cudnn", "variant=jit", "variant=py"], drawn_by
        page.fill("#compare-search", "hidden_size=512")  # shared params still match a search
        assert visible_rows(page, table) == 3, drawn_by
        page.fill("#compare-search", "")
        page.select_option("#run-a", index=2)  # another pair: the table is drawn in the page
        page.wait_for_selector(f"{table}[data-rendered='1']")


# Notes, at each trend fetch, whether that card is on screen and how many on-screen cards
# were drawn by then.
FETCH_LOG = """
window.__trendFetches = [];
const pageFetch = window.fetch;
window.fetch = function (url, ...rest) {
  const onScreen = (el) => el.getBoundingClientRect().top < innerHeight;
  const cards = Array.from(document.querySelectorAll("figure.trend")).filter(onScreen);
  const card = document.querySelector(`figure.trend[data-trend="${url}"]`);
  if (card) window.__trendFetches.push({ onScreen: onScreen(card), screenDrawn:
    cards.filter((c) => c.getAttribute("data-rendered") === "1").length, screen: cards.length });
  return pageFetch.call(this, url, ...rest);
};
"""


def test_cards_below_the_screen_wait_until_the_cards_on_it_are_drawn(browser, base_url, site):
    suite = next((site / "suites").glob("transformers-*.html")).relative_to(site).as_posix()
    context = browser.new_context(viewport={"width": 900, "height": 520})
    tab = context.new_page()
    tab.add_init_script(FETCH_LOG)
    try:
        tab.goto(base_url + suite)
        tab.wait_for_function("() => window.__trendFetches.some((f) => !f.onScreen)",
                              timeout=15000)
        fetches = tab.evaluate("() => window.__trendFetches")
        below = [f for f in fetches if not f["onScreen"]]
        assert len(fetches) - len(below) == fetches[0]["screen"] > 0
        assert all(f["screenDrawn"] == f["screen"] for f in below)
        # and they are drawn too, before the reader scrolls to them
        tab.wait_for_function("() => document.querySelectorAll("
                              "\"figure.trend[data-rendered='1']\").length === "
                              f"{len(fetches)}", timeout=15000)
    finally:
        context.close()


def test_table_and_cards_below_the_screen_are_laid_out_only_near_the_view(page, base_url, site):
    suite = next((site / "suites").glob("transformers-*.html")).relative_to(site).as_posix()
    page.set_viewport_size({"width": 900, "height": 160})  # "near" grows with the view
    visit(page, base_url, suite)
    skipped = "el => !el.checkVisibility({contentVisibilityAuto: true})"
    last_row = page.locator("#suite-table tbody tr").last
    last_card = page.locator("figure.trend figcaption").last  # inside the card: skipped
    wait_rendered(page, "figure.trend")  # the page has settled what is near the view
    assert last_row.evaluate(skipped) and last_card.evaluate(skipped)
    assert "t5" in last_row.text_content()  # still in the page, for search and find
    last_row.scroll_into_view_if_needed()
    page.wait_for_function("el => el.checkVisibility({contentVisibilityAuto: true})",
                           arg=last_row.element_handle())
    assert last_row.is_visible()
