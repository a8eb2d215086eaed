"""The confirmation evaluation drives `confirm` on simulated rounds and reports what it did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "confirm_eval.py"


def test_a_clear_slowdown_is_confirmed_and_the_table_says_so():
    done = subprocess.run([sys.executable, str(SCRIPT), "--prs", "2", "--noise", "0.02",
                           "--truths", "1.3"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("2%"))
    # 2 PRs x 4 flagged benchmarks, all really 30% slower with 2% noise a round
    assert row.split()[:3] == ["2%", "1.30", "100.0%"]


def test_a_head_run_that_was_a_burst_is_cleared_in_the_whole_run_table():
    done = subprocess.run([sys.executable, str(SCRIPT), "--whole-run", "--prs", "2",
                           "--noise", "0.02", "--truths", "1.0"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("2%"))
    # 2 PRs whose head run read 20% slower as a whole, the code unchanged
    assert row.split()[:4] == ["2%", "1.00", "0.0%", "100.0%"]
