"""A long history is split into chunks packed with other series' chunks: a new run rewrites
only the series' head file, and the benchmark page joins head and chunks into the whole
history (real Chromium), reading its segments by HTTP range request where the server honours
ranges and cutting them out of whole files where it does not."""

from __future__ import annotations

import contextlib
import csv
import functools
import http.server
import io
import json
import re
import threading

import numpy as np
import pytest

from site_history import RUNS, XSS_MESSAGE, sha_of, write_history
from test_site_browser import (
    BERT,
    QuietHandler,
    hover_point,
    interactive_trend,
    line_lengths,
    point_at,
    step_finder,
    trend_path,
    visit,
)
from torch_bench.render import data, packs
from torch_bench.render.build import build_site
from torch_bench.store.reader import load_history

playwright_api = pytest.importorskip("playwright.sync_api")
CHUNK = 4  # points per chunk here: RUNS points make several chunks and a head
RUN_CHUNK = 5  # runs per run table here: RUNS runs make three


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("chunked")
    write_history(root / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data, "CHUNK_POINTS", CHUNK)
        patch.setattr(data, "RUN_CHUNK", RUN_CHUNK)
        yield build_site(load_history(root / "data"), root / "site", finder=step_finder)


class RangeHandler(QuietHandler):
    """A static server that honours single byte ranges (as GitHub Pages does), counting the
    requests it answers in part and in whole."""
    parts: list[str]
    wholes: list[str]

    def send_head(self):
        asked = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if asked is None or not path.endswith(".bin"):
            self.wholes.append(self.path)
            return super().send_head()
        body = open(path, "rb").read()
        start, end = int(asked[1]), min(int(asked[2]), len(body) - 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.parts.append(self.path)
        return io.BytesIO(body[start:end + 1])


@contextlib.contextmanager
def range_served(folder, handler_class=None):
    """`folder` served on 127.0.0.1 (by default byte ranges honoured and requests counted, a
    `RangeHandler` of its own): its URL."""
    handler_class = handler_class or type("Handler", (RangeHandler,), {"parts": [], "wholes": []})
    handler = functools.partial(handler_class, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module", params=["ranges", "whole files"])
def served(request, site):
    handler_class = type("Handler", (RangeHandler,), {"parts": [], "wholes": []}) \
        if request.param == "ranges" else QuietHandler
    with range_served(site, handler_class) as url:
        yield url, handler_class


@pytest.fixture(scope="module")
def base_url(served):
    return served[0]


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


def test_the_head_file_locates_its_complete_chunks_in_packs_and_holds_the_rest(site):
    head_link = trend_path(site, BERT).replace("bench/", "json/series/").replace(".html", ".json")
    head = json.loads((site / head_link).read_text(encoding="utf-8"))
    assert len(head["chunks"]) == RUNS // CHUNK
    assert len(head["points"]["median"]) == RUNS % CHUNK
    runs = []
    for chunk in head["chunks"]:
        packed = (site / "bench" / chunk["file"]).resolve().read_bytes()
        segment = packs.decode_segment(packed[chunk["offset"]:chunk["offset"] + chunk["length"]],
                                       chunk["count"])
        assert len(segment["median"]) == chunk["count"] == CHUNK
        runs += segment["run"].tolist()
    shas = []
    for table in head["run_tables"]:
        shas += json.loads((site / "bench" / table).resolve().read_text("utf-8"))["sha"]
    assert len(head["run_tables"]) == 3
    assert [shas[i] for i in runs + head["points"]["run"]] == [sha_of(i) for i in range(RUNS)]


def chunk_points(site) -> tuple[dict, list[str]]:
    """The points of BERT's complete chunks, decoded in Python, and its environments."""
    head_link = trend_path(site, BERT).replace("bench/", "json/series/").replace(".html", ".json")
    head = json.loads((site / head_link).read_text(encoding="utf-8"))
    parts = []
    for chunk in head["chunks"]:
        packed = (site / "bench" / chunk["file"]).resolve().read_bytes()
        parts.append(packs.decode_segment(
            packed[chunk["offset"]:chunk["offset"] + chunk["length"]], chunk["count"]))
    return ({name: np.concatenate([part[name] for part in parts]) for name in parts[0]},
            [env["label"] for env in head["environments"]])


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
                                                                           site, served):
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
    # packed float32 values come back as the six significant digits the JSON files carry
    assert [float(row["median"]) for row in rows[-len(medians):]] == medians
    assert all(len(row["median"].replace(".", "").lstrip("0")) <= 6 for row in rows)
    # the page decodes the packed segments as packs.decode_segment does
    decoded, labels = chunk_points(site)
    chunked = rows[:len(decoded["median"])]
    for name in ("q1", "q3", "median"):
        assert [float(row[name]) for row in chunked] == [float(f"{v:.6g}")
                                                         for v in decoded[name].tolist()]
    assert [int(row["n"]) for row in chunked] == decoded["n"].tolist()
    assert [row["env"] for row in chunked] == [labels[e] for e in decoded["env"].tolist()]
    handler = served[1]
    if handler is not QuietHandler:  # the packs were read in parts, never whole
        assert any(path.endswith(".bin") for path in handler.parts)
        assert not any(path.endswith(".bin") for path in handler.wholes)


def test_the_compare_page_reads_a_run_of_an_older_table(page, base_url, served):
    visit(page, base_url, "compare.html")
    page.wait_for_selector("#compare-form[data-ready='1']")
    page.select_option("#run-a", index=RUNS - 1)  # the oldest run: the first run table
    page.wait_for_selector("#compare-table[data-rendered='1']")
    assert page.inner_text("#run-a-commit") == sha_of(0)[:8]
    bert = page.locator("#compare-table tbody tr", has_text=BERT)
    assert "worse" in bert.locator("td").last.get_attribute("class")
    handler = served[1]
    if handler is not QuietHandler:
        assert any("/values-" in path for path in handler.parts)
        assert not any(path.endswith(".bin") for path in handler.wholes)
