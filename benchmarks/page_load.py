"""What a first visit to the dashboard costs in a real browser, side by side with a
whole-history single-file page (github-action-benchmark's data.js, one chart per benchmark)
on the same synthetic history.

Pages: the overview, the first suite page by name, the biggest suite page when it is another
one, the first benchmark page, and the single-file page. Each visit uses a fresh headless
Chromium (Debian's /usr/bin/chromium through Playwright, no cache), the site served from
127.0.0.1, and the load average is printed before each history size. Per page it prints:

  raw KB     bytes transferred (the local server does not compress)
  gzip KB    the same files gzip-compressed (level 6), as GitHub Pages serves them (parts
             of packed files read by range request: as sent)
  charts ms  from navigation until every chart in the first screen is drawn (trend cards,
             summary charts, the benchmark trend; for the single-file page, every chart)
  input ms   worst delay between a click and its handler, clicking every 50 ms during load
  heap MB    used JavaScript heap once the charts are drawn

and for the pages with an interactive chart (the benchmark page and the single-file page):

  point ms   from the pointer moving onto the chart, the moment it is drawn, until the chart
             is interactive: its hover values shown and (benchmark page) the whole history
             loaded, so zoom works
  zoom ms    from a click on "whole history" until the whole history is drawn
  pt-in ms   worst delay between a key press and its handler, pressing every 50 ms from the
             moment the pointer moves onto the chart until a second after the zoom, while the
             pointer moves across the chart (the pointer stays on the chart, so keys, not
             clicks, probe the main thread here)

Targets at every history size: first visit < 600 KB gzip, visible charts < 1.5 s, worst input
wait < 200 ms, during load and while the reader reaches for a chart.

    .venv/bin/python benchmarks/page_load.py [--sizes 100x28 1000x200]

With --site FOLDER, the pages of a site already built are visited instead (say the
10,000 x 1,000 one `site_build.py --scale 10000x1000 --keep` leaves, whose history is too
big to make again here); there is no single-file page to compare with then.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).parent))
from site_build import (  # noqa: E402 - the sibling script, not a package
    CHROMIUM,
    CHROMIUM_ARGS,
    serve,
    synthetic_history,
    write_single_file_page,
)
from torch_bench.render import paths  # noqa: E402
from torch_bench.render.build import build_site  # noqa: E402

CLICK_EVERY_MS = 50

# Records how long each click waited for its handler (the main thread was busy meanwhile).
INPUT_PROBE = """
window.__inputWaits = [];
const note = (e) => window.__inputWaits.push(performance.now() - e.timeStamp);
addEventListener("click", note, true);
addEventListener("keydown", note, true);
"""

# The benchmark page's chart has its hover values shown and the whole history loaded; the
# single-file page's first Plotly chart shows a hover label.
POINTED = """() => Boolean(document.querySelector("#trend[data-interactive='1'][data-hover]") ||
  document.querySelector("[data-whole-chart] .hoverlayer .hovertext"))"""
WHOLE_HISTORY = "() => document.getElementById('zoom-state').textContent === 'whole history'"

# Every chart element intersecting the first screen has been drawn.
VISIBLE_CHARTS_DRAWN = """() => {
  const charts = Array.from(document.querySelectorAll(
    "[data-trend], [data-summary-chart], #trend, .loss-chart, [data-whole-chart]"));
  const visible = charts.filter((el) => {
    const box = el.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  });
  return visible.length > 0 && visible.every((el) => el.getAttribute("data-rendered") === "1");
}"""

WHOLE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script src="../PLOTLY"></script><script src="data.js"></script></head>
<body><div id="charts"></div><script>
// One chart per benchmark from the whole history, as the common tool's page draws them.
const holder = document.getElementById("charts");
const series = new Map();
Object.values(window.BENCHMARK_DATA.entries).forEach((runs) => runs.forEach((run) =>
  run.benches.forEach((b) => {
    if (!series.has(b.name)) series.set(b.name, {x: [], y: []});
    series.get(b.name).x.push(run.commit.id.slice(0, 7));
    series.get(b.name).y.push(b.value);
  })));
series.forEach((s, name) => {
  const div = document.createElement("div");
  div.style = "width:600px;height:300px";
  div.setAttribute("data-whole-chart", "");
  holder.appendChild(div);
  Plotly.newPlot(div, [{x: s.x, y: s.y, mode: "lines+markers"}], {title: {text: name}})
    .then(() => div.setAttribute("data-rendered", "1"));
});
</script></body></html>"""


def gzip_size(site: Path, url: str, sent: int) -> int:
    """What GitHub Pages would send: the file gzip-compressed, or a part of a packed file
    read by range request as it is (`sent` bytes, fewer than the file has)."""
    path = site / urlparse(url).path.lstrip("/")
    if not path.is_file():
        return 0
    body = path.read_bytes()
    return sent if sent < len(body) else len(gzip.compress(body, compresslevel=6))


def cold_visit(playwright, site: Path, url: str) -> dict:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1366, "height": 800})
        page.add_init_script(INPUT_PROBE)
        sizes: list[tuple[str, int]] = []  # a packed file may be read in several parts
        page.on("requestfinished", lambda request: sizes.append(
            (request.url, request.sizes()["responseBodySize"])))
        page.goto(url, wait_until="commit")
        deadline = time.monotonic() + 120
        while not page.evaluate(VISIBLE_CHARTS_DRAWN):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}: charts not drawn within 120 s")
            page.mouse.click(1300, 790)  # an empty corner: the click only measures the wait
            page.wait_for_timeout(CLICK_EVERY_MS)
        drawn_ms = page.evaluate("() => performance.now()")
        waits = page.evaluate("() => window.__inputWaits.splice(0)")
        pointing = point_at_chart(page)
        page.wait_for_load_state("networkidle")
        heap = page.evaluate("() => performance.memory.usedJSHeapSize")
    finally:
        browser.close()
    return {"raw_kb": sum(sent for _, sent in sizes) / 1024,
            "gzip_kb": sum(gzip_size(site, url, sent) for url, sent in sizes) / 1024,
            "charts_ms": drawn_ms, "input_ms": max(waits, default=0.0),
            "heap_mb": heap / 2**20, "files": len(sizes), **pointing}


def probe_until(page, done: str, what: str) -> float:
    """Presses a key every CLICK_EVERY_MS until `done` holds; the time it took, in ms."""
    start = page.evaluate("() => performance.now()")
    deadline = time.monotonic() + 60
    while not page.evaluate(done):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not reached within 60 s")
        page.keyboard.press("Shift")
        page.wait_for_timeout(CLICK_EVERY_MS)
    return page.evaluate("() => performance.now()") - start


def point_at_chart(page) -> dict:
    """Points at the page's first interactive chart the moment the charts are drawn: the time
    until it is interactive, the time a zoom to the whole history takes, and the worst input
    wait meanwhile. Empty for pages without one."""
    chart = page.locator("#trend .plot, [data-whole-chart]").first
    if not chart.count():
        return {}
    box = chart.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.6, y)
    point_ms = probe_until(page, POINTED, "pointing at the chart")
    zoom_ms = None
    if page.locator("#zoom-all").count():
        page.click("#zoom-all")
        zoom_ms = probe_until(page, WHOLE_HISTORY, "zoom to the whole history")
    for k in range(20):  # a second of moving across the chart after it
        page.mouse.move(box["x"] + box["width"] * (0.1 + 0.04 * k), y)
        page.keyboard.press("Shift")
        page.wait_for_timeout(CLICK_EVERY_MS)
    waits = page.evaluate("() => window.__inputWaits")
    return {"point_ms": point_ms, "zoom_ms": zoom_ms, "point_input_ms": max(waits, default=0.0)}


def pages_of(site: Path, single_file: bool = True) -> dict[str, str]:
    """The pages visited: the first suite by name and, when another one is bigger, the
    biggest suite too (the most rows and trend cards to lay out)."""
    suites = sorted((site / "suites").glob("*.html"))
    biggest = max(suites, key=lambda page: page.stat().st_size)
    bench = sorted((site / paths.BENCHMARK_DIR).glob("*.html"))[0]
    pages = {"overview": paths.INDEX_PAGE, "suite": suites[0].relative_to(site).as_posix()}
    if biggest != suites[0]:
        pages["suite-big"] = biggest.relative_to(site).as_posix()
    pages["benchmark"] = bench.relative_to(site).as_posix()
    return {**pages, "single-file": "whole/index.html"} if single_file else pages


def measure(playwright, runs: int, benchmarks: int, work: Path) -> list[tuple[str, dict]]:
    history = synthetic_history(runs, benchmarks=benchmarks)
    site = build_site(history, work / "site")
    write_single_file_page(site, history, WHOLE_PAGE)
    return visit_pages(playwright, site, single_file=True)


def visit_pages(playwright, site: Path, single_file: bool) -> list[tuple[str, dict]]:
    server, base = serve(site)
    try:
        return [(name, cold_visit(playwright, site, base + path))
                for name, path in pages_of(site, single_file).items()]
    finally:
        server.shutdown()
        server.server_close()


def figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", nargs="+", default=["100x28", "1000x200"],
                        help="histories as RUNSxBENCHMARKS")
    parser.add_argument("--site", type=Path,
                        help="visit the pages of this built site instead of building any")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    if args.site is not None and not (args.site / paths.INDEX_PAGE).is_file():
        parser.error(f"--site {args.site}: no {paths.INDEX_PAGE} there; build the site first")
    from playwright.sync_api import sync_playwright

    print(f"{'history':>10} {'page':>12} {'files':>5} {'raw KB':>8} {'gzip KB':>8} "
          f"{'charts ms':>9} {'input ms':>8} {'heap MB':>7} {'point ms':>8} {'zoom ms':>7} "
          f"{'pt-in ms':>8}")
    rows = []
    with sync_playwright() as playwright:
        for size in ([args.site.name] if args.site is not None else args.sizes):
            print(f"{size:>10} load average {os.getloadavg()[0]:.2f} (1 min)", flush=True)
            work = Path(tempfile.mkdtemp(prefix="page-load-"))
            try:
                if args.site is not None:
                    visited = visit_pages(playwright, args.site, single_file=False)
                else:
                    runs, benchmarks = (int(x) for x in size.split("x"))
                    visited = measure(playwright, runs, benchmarks, work)
                for name, row in visited:
                    rows.append({"history": size, "page": name, **row})
                    print(f"{size:>10} {name:>12} {row['files']:>5} {row['raw_kb']:>8.0f} "
                          f"{row['gzip_kb']:>8.0f} {row['charts_ms']:>9.0f} "
                          f"{row['input_ms']:>8.0f} {row['heap_mb']:>7.1f} "
                          f"{figure(row.get('point_ms')):>8} {figure(row.get('zoom_ms')):>7} "
                          f"{figure(row.get('point_input_ms')):>8}", flush=True)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
