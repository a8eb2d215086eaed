"""A long history is split into chunk files: a new run rewrites only the series' head file,
and the benchmark page joins head and chunks into the whole history (real Chromium)."""

from __future__ import annotations

import csv
import functools
import http.server
import io
import json
import threading

import pytest

from site_history import RUNS, XSS_MESSAGE, sha_of, write_history
from test_site_browser import (
    BERT,
    CHROMIUM,
    CHROMIUM_ARGS,
    QuietHandler,
    hover_point,
    interactive_trend,
    line_lengths,
    point_at,
    step_finder,
    trend_path,
    visit,
)
from torch_bench.render import data
from torch_bench.render.build import build_site
from torch_bench.store.reader import load_history

playwright_api = pytest.importorskip("playwright.sync_api")
CHUNK = 4  # points per chunk file here: RUNS points make several chunks and a head


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("chunked")
    write_history(root / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data, "CHUNK_POINTS", CHUNK)
        yield build_site(load_history(root / "data"), root / "site", finder=step_finder)


@pytest.fixture(scope="module")
def base_url(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    context.route("https://github.com/**", lambda route: route.fulfill(body="commit page"))
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert errors == []


def test_the_head_file_lists_complete_chunks_and_holds_the_rest(site):
    head_link = trend_path(site, BERT).replace("bench/", "json/series/").replace(".html", ".json")
    head = json.loads((site / head_link).read_text(encoding="utf-8"))
    assert len(head["chunks"]) == RUNS // CHUNK
    assert len(head["points"]["median"]) == RUNS % CHUNK
    for chunk in head["chunks"]:
        part = json.loads((site / "bench" / chunk["file"]).resolve().read_text(encoding="utf-8"))
        assert len(part["points"]["median"]) == chunk["count"] == CHUNK


def whole_history(page):
    """The benchmark's chart drawn by the page from every point it fetched."""
    interactive_trend(page)
    page.click("#zoom-all")
    page.wait_for_function("() => document.getElementById('zoom-state').textContent === "
                           "'whole history'")


def test_the_page_joins_every_chunk_into_one_history(page, base_url, site):
    visit(page, base_url, trend_path(site, BERT))
    whole_history(page)
    assert line_lengths(page) == [RUNS]
    assert page.locator("#trend svg .cp").count() == 1
    assert page.locator("#trend svg line.env").count() == 1
    hover = hover_point(page, 3, RUNS)
    assert sha_of(3)[:8] in hover and XSS_MESSAGE in hover


def test_a_point_of_an_older_chunk_opens_its_commit_and_downloads_carry_all(page, base_url,
                                                                           site):
    visit(page, base_url, trend_path(site, BERT))
    whole_history(page)
    medians = page.evaluate("() => JSON.parse(document.getElementById('chart-points')"
                            ".textContent).median")
    with page.context.expect_page() as opened:  # point 5 lies in the second chunk
        page.mouse.click(*point_at(page, 5, RUNS, medians[5]))
    assert opened.value.url.endswith(f"/commit/{sha_of(5)}")
    with page.expect_download() as download:
        page.click("#download-csv")
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert [row["sha"] for row in rows] == [sha_of(i) for i in range(RUNS)]
