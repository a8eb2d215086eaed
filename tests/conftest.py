from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).parent


@pytest.fixture
def child_can_import_support(monkeypatch):
    """Case processes import the test suites in tests/support."""
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(TESTS_DIR), path) if p))


@pytest.fixture
def cli(tmp_path):
    """Run `python -m torch_bench ...` in a subprocess, in tmp_path."""

    def run(*args: str, check: bool = False, env: dict | None = None):
        done = subprocess.run(
            [sys.executable, "-m", "torch_bench", *args], cwd=tmp_path, capture_output=True,
            text=True, env={**os.environ, **(env or {})}, timeout=600,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"exit {done.returncode}\n{done.stdout}\n{done.stderr}")
        return done

    return run


# One worker process per case keeps CLI tests fast; test_spread.py and test_calibration.py
# cover a case spread over several.
TINY_RNN = ["--threads", "1", "--seq-length", "5", "--input-size", "16", "--hidden-size", "16",
            "--mini-batch", "2", "--max-time", "0.2", "--min-repeats", "3", "--max-repeats", "20",
            "--processes", "1"]


@pytest.fixture(scope="module")
def browser():
    """Chromium driven by Playwright, launched once per test module that asks for it (such a
    module skips itself when Playwright or Chromium is missing)."""
    from playwright.sync_api import sync_playwright

    from support.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
