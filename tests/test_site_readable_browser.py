"""The dashboard of an imported history read as a person would, in Chromium at a desktop and
a phone width: cards named apart, one unit per chart agreeing with its values, axis labels
that neither overlap nor leave their chart, no page wider than the screen.

The history is a github-action-benchmark data.js with the kinds of names and units real
imports bring (Go, Rust, JMH, pytest, Catch2, .NET), read by the real importer."""

from __future__ import annotations

import json
import math
import re

import pytest

from site_names import CATCH2, DOTNET, GO, JMH, PYTEST, RUST
from test_site_browser import served
from torch_bench.formats.github_action_benchmark import import_github_action_benchmark
from torch_bench.render import paths
from torch_bench.render.build import build_site
from torch_bench.store.reader import History

playwright_api = pytest.importorskip("playwright.sync_api")

RUNS = 40
DAY_MS = 86_400_000
START_MS = 1_667_433_600_000  # 2022-11-03: the history spans years, as imported ones do
# suite: (tool, unit, names, typical value)
SUITES = {
    "Go Benchmark": ("go", "ns/op", GO, 2.0e5),
    "Rust Benchmark": ("cargo", "ns/iter", RUST, 208.0),
    "JMH Benchmark": ("jmh", "ops/s", JMH, 1.82e9),
    "pytest-benchmark": ("pytest", "iter/sec", PYTEST, 5.0e4),
    "Catch2 Benchmark": ("catch2", "ns", CATCH2, 3.5e6),
    "BenchmarkDotNet": ("benchmarkdotnet", "ns", DOTNET, 1.5e3),
    "Quick": ("customSmallerIsBetter", "ms", ["cold start", "warm start"], 40.0),
}
SECONDS_APART = {"Quick"}  # all its runs within a minute: its cards' dates are one label
WIDTHS = (1280, 390)


def data_js() -> str:
    entries = {}
    for s, (suite, (tool, unit, names, value)) in enumerate(SUITES.items()):
        runs = []
        for i in range(RUNS):
            step = 1.3 if i >= RUNS - 6 and s % 2 == 0 else 1.0  # recent change points
            benches = [{"name": name, "unit": unit,
                        "value": round(value * (1 + 0.1 * k) * step
                                       * (1 + 0.004 * math.sin(i + k)), 3)}
                       for k, name in enumerate(names)]
            sha = f"{s:02d}{i:038x}"
            runs.append({"commit": {"id": sha, "message": f"Change {i}",
                                    "url": f"https://github.com/octo/net/commit/{sha}",
                                    "timestamp": "2024-01-01T00:00:00Z"},
                         "date": START_MS + s * 1000 + i * (
                             1000 if suite in SECONDS_APART else 31 * DAY_MS),
                         "tool": tool, "benches": benches})
        entries[suite] = runs
    return "window.BENCHMARK_DATA = " + json.dumps(
        {"lastUpdate": START_MS, "repoUrl": "https://github.com/octo/net", "entries": entries})


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    runs = import_github_action_benchmark(data_js())
    return build_site(History(tuple(runs)), tmp_path_factory.mktemp("imported") / "site")


@pytest.fixture(scope="module")
def base_url(site):
    with served(site) as url:
        yield url


def pages_of(site, suites_whole=("JMH Benchmark", "pytest-benchmark", "Rust Benchmark")):
    """The overview, every suite page, the compare page and the first benchmark page of
    each of `suites_whole` (the longest names and the largest numbers)."""
    suites = sorted(p.relative_to(site).as_posix() for p in (site / "suites").glob("*.html"))
    benchmarks = sorted((site / paths.BENCHMARK_DIR).glob("*.html"))
    firsts = {}  # one benchmark page per suite: its crumb names the suite
    for page in benchmarks:
        crumb = re.search(r'class="crumbs"><a [^>]*>([^<]*)<', page.read_text()).group(1)
        firsts.setdefault(crumb, page.relative_to(site).as_posix())
    return ["index.html", *suites, *(firsts[s] for s in suites_whole), "compare.html"]


def open_page(browser, url, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.route("https://github.com/**", lambda route: route.fulfill(body="commit page"))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.errors = errors
    return page


def draw_every_card(page):
    """Scrolls through the page so that every trend card is fetched and drawn."""
    count = page.locator("figure.trend").count()
    for k in range(count):
        page.locator("figure.trend").nth(k).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure.trend')].every(f => f.dataset.rendered)",
        timeout=30_000)


CAPTIONS = """() => [...document.querySelectorAll('figure.trend figcaption')].map(c => ({
  text: c.textContent.replace(/\\s+/g, ' ').trim(),
  cut: [...c.children].filter(e => e.tagName === 'A' || e.classList.contains('suite'))
        .some(e => e.scrollWidth > e.clientWidth + 1),
  link: c.querySelector('a').getAttribute('href'),
  hover: c.getAttribute('title')}))"""
NO_WIDER_THAN_THE_SCREEN = "() => document.documentElement.scrollWidth - innerWidth"
# Per drawn chart: its tick labels' boxes, and the box they must stay in (the card, or the
# chart's own box on a benchmark page).
LABEL_BOXES = """() => [...document.querySelectorAll('.tchart')].map(chart => {
  const holder = chart.closest('figure.trend') || chart;
  const r = (e) => {
    const b = e.getBoundingClientRect();
    return [b.left, b.right, b.top, b.bottom];
  };
  return {holder: r(holder),
          x: [...chart.querySelectorAll('.axis.x .tick')].filter(t => t.offsetParent).map(r),
          y: [...chart.querySelectorAll('.axis.y .tick')].filter(t => t.offsetParent).map(r)};
})"""


@pytest.fixture(scope="module")
def seen(browser, base_url, site):
    """Each page at each width, read once: how much wider than the screen it is, its cards'
    captions, its charts' axis labels (every card scrolled into view and drawn first)."""
    found = {}
    for width in WIDTHS:
        for path in pages_of(site):
            page = open_page(browser, base_url + path, width)
            if page.locator("figure.trend").count():
                draw_every_card(page)
            found[path, width] = {"excess": page.evaluate(NO_WIDER_THAN_THE_SCREEN),
                                  "captions": page.evaluate(CAPTIONS),
                                  "charts": page.evaluate(LABEL_BOXES),
                                  "errors": page.errors}
            page.context.close()
    return found


@pytest.mark.parametrize("width", WIDTHS)
def test_every_card_is_named_apart_and_whole(seen, width):
    pages = {path: v for (path, w), v in seen.items() if w == width and v["captions"]}
    assert "index.html" in pages and len(pages) >= 1 + len(SUITES)
    for path, found in pages.items():
        captions = found["captions"]
        texts = [c["text"] for c in captions]
        duplicates = {t for t in texts if texts.count(t) > 1}
        assert not duplicates, (path, width, duplicates)
        cut = [c["text"] for c in captions if c["cut"]]
        assert not cut, (path, width, cut)
        for caption in captions:  # the full name on hover, the card's link to its page
            assert caption["link"].endswith(".html")
            assert caption["text"].split(" · ")[0] in caption["hover"]


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_is_wider_than_the_screen(seen, width):
    wider = {path: v["excess"] for (path, w), v in seen.items() if w == width and v["excess"] > 0}
    assert not wider, (width, wider)
    assert not [v["errors"] for v in seen.values() if v["errors"]]


def overlaps(a, b):
    return a[0] < b[1] - 0.5 and b[0] < a[1] - 0.5 and a[2] < b[3] - 0.5 and b[2] < a[3] - 0.5


@pytest.mark.parametrize("width", WIDTHS)
def test_axis_labels_neither_overlap_nor_leave_their_chart(seen, width):
    problems = []
    for (path, w), found in seen.items():
        if w != width:
            continue
        for k, chart in enumerate(found["charts"]):
            left, right = chart["holder"][0], chart["holder"][1]
            for axis in ("x", "y"):
                boxes = chart[axis]
                for i, box in enumerate(boxes):
                    if box[0] < left - 0.5 or box[1] > right + 0.5:
                        problems.append((path, k, axis, "outside", box, chart["holder"]))
                    problems += [(path, k, axis, "overlap", box, other)
                                 for other in boxes[i + 1:] if overlaps(box, other)]
    assert not problems, (width, problems[:5], len(problems))
    assert sum(len(v["charts"]) for (_, w), v in seen.items() if w == width) > 50


def unit_of(text):
    """The unit after a number: "208 ns" -> "ns", "1.82 G items/s" -> "G items/s"."""
    match = re.match(r"^[-\d,.]+ ?(.*)$", text.strip())
    return match.group(1) if match else None


@pytest.mark.parametrize("suite", list(SUITES))
def test_a_benchmark_page_says_one_unit_everywhere(browser, base_url, site, suite):
    path = next(p for p in pages_of(site, list(SUITES))
                if p.startswith(paths.BENCHMARK_DIR + "/") and suite in (site / p).read_text())
    page = open_page(browser, base_url + path, 1280)
    header = page.locator("h1 small").inner_text()
    axis = page.locator("#trend .tchart .unit").inner_text()
    latest = page.locator(".headline strong").inner_text()
    assert header.startswith(f"({axis}, "), (header, axis)
    assert axis and unit_of(latest) == axis, (latest, axis)
    medians = page.locator("table").last.locator("tbody tr td.num:nth-last-child(3)")
    assert {unit_of(t) for t in medians.all_inner_texts()} == {axis}
    spreads = page.locator("table").last.locator("tbody tr td.num:nth-last-child(2)")
    assert set(spreads.all_inner_texts()) == {"none recorded"}  # one value a run, no spread
    page.wait_for_selector("#trend[data-interactive='1']")
    box = page.locator("#trend .plot").bounding_box()
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
    tip = page.locator("#trend-tip")
    tip.wait_for(state="visible")
    value = tip.locator("strong").inner_text()
    assert unit_of(value) == axis, (value, axis)
    assert "no spread recorded" in tip.inner_text() and "IQR" not in tip.inner_text()
    assert "torch" not in tip.inner_text()  # an imported run never saw torch
    assert "torch" not in page.locator("table").last.inner_text()
    page.context.close()


def test_card_values_and_axes_agree_on_one_unit(browser, base_url, site):
    page = open_page(browser, base_url + "index.html", 1280)
    draw_every_card(page)
    cards = page.evaluate("""() => [...document.querySelectorAll('figure.trend')].map(f => ({
      unit: f.querySelector('.tchart .unit').textContent,
      visible: f.querySelector('.tchart .unit').getClientRects().length > 0,
      latest: f.querySelector('.latest').textContent,
      labels: [...f.querySelectorAll('.axis.y .tick')].map(t => t.textContent)}))""")
    page.context.close()
    for card in cards:
        assert card["visible"] or not card["unit"], card
        assert unit_of(card["latest"]) == card["unit"], card
        assert all(len(label) <= 5 for label in card["labels"]), card  # "2,500,000,000" no more


def test_a_benchmark_page_says_how_its_noise_band_and_a_reports_resolution_differ(site):
    page = next(p for p in (site / paths.BENCHMARK_DIR).glob("*.html")
                if "noise band ±" in p.read_text())
    text = page.read_text()
    band = re.search(r"noise band <span[^>]*>(±[\d.]+%)</span>", text).group(1)
    note = re.search(r'<p class="hint" id="noise-note">([^<]*)</p>', text).group(1)
    assert f"The noise band ({band})" in note and "resolution" in note
