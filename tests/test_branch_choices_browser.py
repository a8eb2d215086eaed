"""The branch filter of a benchmark page with a long history (real Chromium): the page as
served lists only the drawn points' branches, and every older branch joins the list once the
whole history has been fetched, so an old pull request's runs can still be picked."""

from __future__ import annotations

import re

import numpy as np
import pytest

from test_site_browser import CHROMIUM, CHROMIUM_ARGS, interactive_trend, served, visit
from torch_bench.render.build import build_site
from torch_bench.render.columns import Columns, Descriptor
from torch_bench.render.trends import TREND_POINTS

playwright_api = pytest.importorskip("playwright.sync_api")
RUNS = TREND_POINTS + 30
OLD_BRANCHES = ("pr-old-b", "pr-old-a")  # measured before the drawn window only


def branch_of(i: int) -> str:
    if i < 10:
        return OLD_BRANCHES[i % 2]
    return "pr-new" if i == RUNS - 3 else "main"


def run_facts(i: int) -> dict:
    sha = f"{i:040x}"
    return {"run_id": f"run-{i:05d}", "created_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
            "repository": "octo/net", "sha": sha, "branch": branch_of(i),
            "message": f"change {i}", "url": f"https://github.com/octo/net/commit/{sha}",
            "pr_number": None, "pr_title": "", "gpu": "CPU", "torch": "2.9.0", "cuda": "",
            "driver": "", "fingerprint": "f", "fingerprint_filter": "f", "results": 1,
            "failures": 0, "training": []}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    median = 10.0 + 0.01 * np.arange(RUNS)
    rows = {"run": np.arange(RUNS, dtype=np.int32), "desc": np.zeros(RUNS, np.int32),
            "status": np.zeros(RUNS, np.int32), "median": median, "q1": median * 0.95,
            "q3": median * 1.05, "n": np.full(RUNS, 5, np.int32),
            "error": np.full(RUNS, -1, np.int32)}
    descriptor = Descriptor("rnns", "lstm", "forward_time", "ms", "lower", {"hidden": 8},
                            "rnns/lstm")
    columns = Columns([run_facts(i) for i in range(RUNS)], [descriptor], ["ok"], [], rows)
    return build_site(columns, tmp_path_factory.mktemp("branches") / "site")


def served_choices(html: str) -> list[str]:
    select = re.search(r'<select id="branch">(.*?)</select>', html, re.S).group(1)
    return re.findall(r'<option value="([^"]*)"', select)


def test_old_branches_join_the_filter_once_the_history_is_fetched(site):
    page_file = next((site / "bench").glob("*.html"))
    assert served_choices(page_file.read_text(encoding="utf-8")) == ["", "main", "pr-new"]
    with served(site) as base_url, playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        visit(page, base_url, page_file.relative_to(site).as_posix())
        interactive_trend(page)
        choices = page.eval_on_selector("#branch", "s => Array.from(s.options, o => o.value)")
        page.select_option("#branch", "pr-old-a")
        page.wait_for_function("() => document.querySelector('#trend svg polyline.line')"
                               ".points.numberOfItems === 5")
        browser.close()
    assert choices == ["", "main", "pr-new", "pr-old-a", "pr-old-b"]
    assert errors == []
