"""The run notes on a benchmark page in real Chromium (Playwright), served over HTTP: the
operator diff and the first bad commit at the change point their run begins, a hostile
operator name and commit subject shown as text."""

from __future__ import annotations

import shutil

import pytest

from run_notes_data import FIRST_BAD, HOSTILE_OP, HOSTILE_SUBJECT, STEP_AT, write_data
from support.browser import CHROMIUM, CHROMIUM_ARGS
from test_run_notes import step_finder
from torch_bench.render.build import build_site_from_data

playwright_api = pytest.importorskip("playwright.sync_api")
if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is missing: run scripts/setup-browser", allow_module_level=True)


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    from test_site_browser import served

    root = tmp_path_factory.mktemp("notes-site")
    runs = write_data(root / "data")
    site = build_site_from_data(root / "data", root / "site", finder=step_finder)
    page = next(p.relative_to(site).as_posix() for p in (site / "bench").glob("*mlp*.html"))
    with served(site) as url:
        yield url + page, runs


def marker_labels(page) -> list[str]:
    return page.locator("#trend path.cp").evaluate_all("marks => marks.map(m => m.textContent)")


def test_the_change_point_shows_its_runs_operator_diff_and_first_bad_commit(served_site):
    url, runs = served_site
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.route("https://github.com/**", lambda route: route.fulfill(body="commit"))
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            note = page.locator(f'tr.change-note[data-run="{runs[STEP_AT].run_id}"]')
            assert note.count() == 1
            first_bad = note.locator("p.first-bad")
            assert first_bad.locator("code").inner_text() == FIRST_BAD[:7]
            assert HOSTILE_SUBJECT in first_bad.inner_text()  # shown as text
            assert first_bad.locator("a").get_attribute("href").endswith(f"/commit/{FIRST_BAD}")
            diff = note.locator("details.op-diff")
            assert not diff.locator("table").is_visible()  # collapsed until asked
            diff.locator("summary").click()
            rows = diff.locator("tbody tr")
            assert rows.count() == 10
            assert rows.first.locator("td").first.inner_text() == HOSTILE_OP
            assert "2 smaller change(s) not kept" in diff.inner_text()
            said = f"first bad commit {FIRST_BAD[:7]}, operator diff below"
            assert any(said in label for label in marker_labels(page))  # drawn by the server
            page.hover("#trend .plot")
            page.wait_for_selector("#trend[data-interactive='1']", timeout=15000)
            page.eval_on_selector_all("#trend path.cp", "marks => marks.forEach("
                                      "m => m.setAttribute('data-old', '1'))")
            page.select_option("#branch", "main")  # redrawn by dashboard.js from the data
            page.wait_for_function("() => !document.querySelector('#trend [data-old]')"
                                   " && document.querySelectorAll('#trend path.cp').length")
            assert any(said in label for label in marker_labels(page))
            assert page.evaluate("() => typeof window.__xss") == "undefined"
            assert errors == []
        finally:
            browser.close()
