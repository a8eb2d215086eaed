"""A benchmark page fetches, in idle time, its own history and not the site's run tables
(real Chromium, every request recorded, the site served with byte ranges as GitHub Pages
serves it): a long, sparsely measured series' whole history costs at most twice its points'
own bytes, and the run facts a point shows (commit, message, date, branch) come from the one
run table holding that point's run, fetched when the point is shown, and are right."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from test_history_chunks import range_served
from test_site_browser import point_at, visit
from torch_bench.render import data, paths
from torch_bench.render.build import build_site
from torch_bench.render.columns import Columns, Descriptor
from torch_bench.render.model import build_model, no_change_points

pytest.importorskip("playwright.sync_api")  # the browser fixture: conftest.py
RUNS = 1280
SPARSE = np.arange(0, RUNS, 4)  # the runs that measured the page's benchmark: 320 points
CHUNK = 100  # points per packed chunk here: three chunks and a head of 20
RUN_CHUNK = 200  # runs per run table here: seven tables
OLD_BRANCH = "fix/<b>early</b>"  # only on one early run the benchmark measured


def sha_of(run: int) -> str:
    return f"{run:08x}" + "5eed" * 8


def branch_of(run: int) -> str:
    return OLD_BRANCH if run == 8 else (f"pr-{run}" if run % 40 == 20 else "main")


def created_at(run: int) -> str:
    seconds = run * 3600 + (run * 37) % 600  # an hour apart, give or take ten minutes
    return f"2026-{1 + seconds // (28 * 86400):02d}-{1 + seconds // 86400 % 28:02d}T" \
           f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def run_facts(run: int) -> dict:
    sha = sha_of(run)
    return {"run_id": f"run-{run:05d}", "created_at": created_at(run),
            "repository": "octo/net", "sha": sha, "branch": branch_of(run),
            "message": f"Change {run}: <i>tune</i> & measure",
            "url": f"https://github.com/octo/net/commit/{sha}", "pr_number": None,
            "pr_title": "", "gpu": "CPU", "torch": "2.13.0", "cuda": "", "driver": "",
            "fingerprint": "f", "fingerprint_filter": "f", "results": 2, "failures": 0,
            "training": []}


def sparse_median(index):
    return 10.0 + 0.01 * index


def history() -> Columns:
    """Two benchmarks: the page's, measured in every 4th run, and one measured in every run."""
    every = np.arange(RUNS)
    run = np.concatenate([SPARSE, every])
    desc = np.concatenate([np.zeros(len(SPARSE), int), np.ones(RUNS, int)])
    order = np.lexsort((desc, run))
    median = np.concatenate([sparse_median(np.arange(len(SPARSE))), np.full(RUNS, 20.0)])[order]
    count = len(run)
    rows = {"run": run[order].astype(np.int32), "desc": desc[order].astype(np.int32),
            "status": np.zeros(count, np.int32), "median": median, "q1": median * 0.99,
            "q3": median * 1.01, "n": np.full(count, 9, np.int32),
            "error": np.full(count, -1, np.int32)}
    descriptors = [Descriptor("rnns", name, "forward_time", "ms", "lower", {"hidden": 8},
                              f"rnns/{name}") for name in ("sparse", "dense")]
    return Columns([run_facts(i) for i in range(RUNS)], descriptors, ["ok"], [], rows)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data, "CHUNK_POINTS", CHUNK)
        patch.setattr(data, "RUN_CHUNK", RUN_CHUNK)
        yield build_site(history(), tmp_path_factory.mktemp("facts") / "site",
                         finder=no_change_points)


@pytest.fixture(scope="module")
def base_url(site):
    with range_served(site) as url:
        yield url


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    context.route("https://github.com/**", lambda route: route.fulfill(body="commit page"))
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.requests = []  # (url, bytes received) of every request the page made
    tab.on("requestfinished", lambda request: tab.requests.append(
        (request.url, request.sizes()["responseBodySize"])))
    yield tab
    context.close()
    assert errors == []


def sparse_page(site) -> str:
    return next(p.relative_to(site).as_posix()
                for p in (site / paths.BENCHMARK_DIR).glob("*.html") if "sparse" in p.name)


def own_bytes() -> int:
    """The page's points' own bytes: their values as JSON columns, as a head file stores
    them (run, environment, median, quartiles, sample count)."""
    series = next(s for s in build_model(history()).series if s.name == "sparse")
    pts = series.points
    values = {"run": pts.run.tolist(), "env": data.environment_index(pts)[0].tolist(),
              "median": data.rounded_list(pts.median), "q1": data.rounded_list(pts.q1),
              "q3": data.rounded_list(pts.q3), "n": pts.n.tolist()}
    return len(json.dumps(values, separators=(",", ":")).encode())


def data_requests(page) -> list[tuple[str, int]]:
    return [(url, size) for url, size in page.requests if f"/{paths.JSON_DIR}/" in url]


def idle_history(page, base_url, site):
    """The page, left alone until it has fetched the whole history in idle time."""
    visit(page, base_url, sparse_page(site))
    page.wait_for_selector("#trend[data-interactive='1']", timeout=20000)
    page.wait_for_load_state("networkidle")


def test_the_idle_fetch_is_the_series_own_history_within_twice_its_points_bytes(
        page, base_url, site):
    idle_history(page, base_url, site)
    fetched = data_requests(page)
    assert not [url for url, _ in fetched if "/json/runs/" in url]
    assert any("/json/packs/" in url for url, _ in fetched)  # the older points, by range
    assert 0 < sum(size for _, size in fetched) <= 2 * own_bytes()
    options = page.eval_on_selector_all("#branch option", "os => os.map(o => o.value)")
    assert OLD_BRANCH in options  # a branch only an old chunk's point ran on
    page.select_option("#branch", OLD_BRANCH)
    page.wait_for_function("() => document.querySelectorAll('#trend svg polyline.line')"
                           ".length === 0 || document.querySelector('#trend svg polyline.line')"
                           ".points.numberOfItems === 1")


def test_pointing_at_the_drawn_runs_fetches_no_run_table(page, base_url, site):
    idle_history(page, base_url, site)  # the newest points drawn, the whole history loaded
    drawn = page.evaluate("() => JSON.parse(document.getElementById('chart-points')"
                          ".textContent).median.length")
    page.mouse.move(*point_at(page, drawn - 10, drawn))
    page.wait_for_selector("#trend[data-hover]", timeout=10000)
    run = int(SPARSE[int(page.get_attribute("#trend", "data-hover"))])
    assert run > SPARSE[-drawn]
    assert sha_of(run)[:8] in page.inner_text("#trend-tip")
    assert not [url for url, _ in data_requests(page) if "/json/runs/" in url]


def test_a_shown_points_run_facts_come_from_the_one_table_holding_its_run(page, base_url, site):
    idle_history(page, base_url, site)
    page.click("#zoom-all")
    page.wait_for_function("() => document.getElementById('zoom-state').textContent === "
                           "'whole history'")
    index = 30  # a point of the oldest chunk: run 120, in the first run table
    page.mouse.move(*point_at(page, index, len(SPARSE)))
    page.wait_for_selector("#trend[data-hover]", timeout=10000)
    shown = int(page.get_attribute("#trend", "data-hover"))
    run = int(SPARSE[shown])
    tip = page.inner_text("#trend-tip")
    assert abs(shown - index) <= 1
    assert sha_of(run)[:8] in tip
    assert f"Change {run}: <i>tune</i> & measure" in tip  # as text, never as markup
    assert created_at(run)[:16].replace("T", " ") in tip
    assert branch_of(run) in tip
    tables = [url for url, _ in data_requests(page) if "/json/runs/" in url]
    assert tables == [f"{base_url}json/runs/table-{run // RUN_CHUNK}.json"]


def test_a_click_opens_an_old_points_commit_and_the_csv_carries_every_runs_facts(
        page, base_url, site):
    idle_history(page, base_url, site)
    page.click("#zoom-all")
    page.wait_for_function("() => document.getElementById('zoom-state').textContent === "
                           "'whole history'")
    with page.context.expect_page() as opened:  # the run table is fetched on the click
        page.mouse.click(*point_at(page, 3, len(SPARSE), sparse_median(3)))
    assert opened.value.url.endswith(f"/commit/{sha_of(SPARSE[3])}")
    with page.expect_download() as download:
        page.click("#download-csv")
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert [row["run"] for row in rows] == [f"run-{r:05d}" for r in SPARSE]
    assert [row["date"] for row in rows] == [created_at(r) for r in SPARSE]
    assert [row["sha"] for row in rows] == [sha_of(r) for r in SPARSE]
    assert [row["branch"] for row in rows] == [branch_of(r) for r in SPARSE]
    assert [row["message"] for row in rows] == [f"Change {r}: <i>tune</i> & measure"
                                                for r in SPARSE]
