"""The benchmark page decodes every way a packed segment stores its columns (real Chromium):
quartiles not centred on the median kept as q1 and q3, run steps and sample counts two bytes
wide, environments one byte wide, as packs.decode_segment reads them."""

from __future__ import annotations

import csv
import io
import json
import struct

import numpy as np
import pytest

from test_history_chunks import range_served
from test_site_browser import CHROMIUM, CHROMIUM_ARGS, interactive_trend, visit
from torch_bench.render import data, packs
from torch_bench.render.build import build_site
from torch_bench.render.columns import Columns, Descriptor

playwright_api = pytest.importorskip("playwright.sync_api")
RUNS = 1500
# positions of the runs that measured the benchmark: steps from 1 to 700
MEASURED = np.cumsum(np.resize([1, 300, 2, 700, 5, 40], 9)) - 1
SAMPLES = np.resize([5, 600, 7, 9], len(MEASURED))


def run_facts(i: int) -> dict:
    sha = f"{i:040x}"
    return {"run_id": f"run-{i:05d}", "created_at": f"2026-01-01T00:00:00.{i:05d}Z",
            "repository": "octo/net", "sha": sha, "branch": "main", "message": f"change {i}",
            "url": f"https://github.com/octo/net/commit/{sha}", "pr_number": None,
            "pr_title": "", "gpu": "CPU", "torch": f"2.{i}.0", "cuda": "", "driver": "",
            "fingerprint": "f", "fingerprint_filter": "f", "results": 1, "failures": 0,
            "training": []}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    count = len(MEASURED)
    median = 10.0 * (1 + 0.01 * np.arange(count))
    rows = {"run": MEASURED.astype(np.int32), "desc": np.zeros(count, np.int32),
            "status": np.zeros(count, np.int32), "median": median, "q1": median * 0.9,
            "q3": median * 1.3, "n": SAMPLES.astype(np.int32),
            "error": np.full(count, -1, np.int32)}
    descriptor = Descriptor("rnns", "sparse", "forward_time", "ms", "lower", {"hidden": 8},
                            "rnns/sparse")
    columns = Columns([run_facts(i) for i in range(RUNS)], [descriptor], ["ok"], [], rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data, "CHUNK_POINTS", 4)
        yield build_site(columns, tmp_path_factory.mktemp("widths") / "site")


@pytest.fixture(scope="module")
def base_url(site):
    with range_served(site) as url:
        yield url


def test_the_page_reads_wide_and_skewed_segments_as_python_does(site, base_url):
    head_file = next((site / "json" / "series").glob("*.json"))
    head = json.loads(head_file.read_text(encoding="utf-8"))
    assert len(head["chunks"]) == 2
    decoded = []
    for chunk in head["chunks"]:
        packed = (site / "bench" / chunk["file"]).resolve().read_bytes()
        part = packed[chunk["offset"]:chunk["offset"] + chunk["length"]]
        _, mode, run_width, n_width, env_width = struct.unpack_from("<5B", part)
        assert (mode, run_width, n_width, env_width) == (packs.QUARTILES, 2, 2, 1)
        decoded.append(packs.decode_segment(part, chunk["count"]))
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        visit(page, base_url, "bench/" + head_file.stem + ".html")
        interactive_trend(page)
        page.click("#zoom-all")
        page.wait_for_function("() => document.getElementById('zoom-state').textContent === "
                               "'whole history'")
        with page.expect_download() as download:
            page.click("#download-csv")
        text = open(download.value.path(), encoding="utf-8").read()
        browser.close()
    assert errors == []
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["run"] for row in rows] == [f"run-{i:05d}" for i in MEASURED]
    chunked = rows[:8]
    for name in ("median", "q1", "q3"):
        assert [float(row[name]) for row in chunked] == [
            float(f"{v:.6g}") for part in decoded for v in part[name].tolist()]
    assert [int(row["n"]) for row in rows] == SAMPLES.tolist()
    assert [row["env"] for row in chunked] == [head["environments"][e]["label"]
                                               for part in decoded for e in part["env"]]
