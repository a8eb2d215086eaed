"""The Markdown report: golden files under tests/golden and the escaping of untrusted names.

Regenerate the golden files after an intended change with
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_markdown_report.py
and review the diff."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support.runs import BASE_ENV, bad, history, make_run, ok
from torch_bench.analyze.verdicts import compare_runs
from torch_bench.report.escape import markdown_text
from torch_bench.report.markdown import ReportContext, format_report
from torch_bench.results.schema import measured

GOLDEN = Path(__file__).parent / "golden"
HISTORY = history(20, {"steady": 10, "slower": 10, "faster": 10, "tput": 100})
XSS = "<img src=x onerror=alert(1)>"


def mixed_comparison():
    base = make_run([ok("steady", 10, seed=1), ok("slower", 10, seed=2), ok("faster", 10, seed=3),
                     ok("gone", 5, seed=4), ok("breaks", 5, seed=5), bad("heals", "error"),
                     ok("tput", 100, metric="throughput", seed=7), ok(XSS, 1, seed=8)],
                    run_id="base-1")
    head = make_run([ok("steady", 10, seed=11), ok("slower", 11.5, seed=12),
                     ok("faster", 8, seed=13), ok("fresh", 5, seed=14),
                     bad("breaks", "oom", error="CUDA out of memory | @everyone <b>x</b>"),
                     ok("heals", 3, seed=15), ok("tput", 80, metric="throughput", seed=17),
                     ok(XSS, 1.5, seed=18)],
                    sha="b" * 40, branch="@everyone", pr=12,
                    pr_title="Speed up `lstm` | drop <script>alert(1)</script> #1",
                    run_id="head-1")
    return compare_runs([base], [head], HISTORY, baseline_note="1 run(s) of main at the "
                                                                "merge-base, same environment")


def environment_comparison():
    base = make_run([ok("steady", 10, seed=1)], run_id="base-1")
    head = make_run([ok("steady", 12, seed=11)], sha="b" * 40, run_id="head-1",
                    env={**BASE_ENV, "torch": "2.14.0", "cuda": "12.8",
                         "fingerprint": "fp-test-0002"})
    return compare_runs([base], [head], HISTORY)


def compile_comparison():
    def summary(speedup, pass_rate, seed):
        return [measured("compile", "summary", "speedup", [speedup], params={"mode": "inference"}),
                measured("compile", "summary", "pass_rate", [pass_rate],
                         params={"mode": "inference"}),
                ok("resnet18", 1.5, metric="speedup", suite="compile", seed=seed)]

    base = make_run(summary(1.52, 0.95, 1), run_id="base-1")
    head = make_run(summary(1.48, 0.9333, 2), sha="b" * 40, run_id="head-1")
    return compare_runs([base], [head], ())


def quiet_comparison():
    base = make_run([ok("steady", 10, seed=1)], run_id="base-1")
    head = make_run([ok("steady", 10, seed=11)], sha="b" * 40, run_id="head-1")
    return compare_runs([base], [head], HISTORY)


CASES = {
    "mixed": (mixed_comparison, ReportContext(config="linux-cpu",
                                              dashboard_link="https://octo.github.io/bench/"
                                                             "#/benchmark/{id}")),
    "environment": (environment_comparison, ReportContext()),
    "compile": (compile_comparison, ReportContext(title="compile suite")),
    "quiet": (quiet_comparison, ReportContext()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_matches_golden_file(name):
    build, context = CASES[name]
    text = format_report(build(), context)
    path = GOLDEN / f"report_{name}.md"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_untrusted_text_cannot_inject_html_mention_or_break_a_table():
    text = format_report(mixed_comparison(), CASES["mixed"][1])
    assert "<img" not in text and "<script" not in text and "<b>" not in text
    assert "@everyone" not in text and "@\u200deveryone" in text
    assert "`lstm`" not in text
    for line in text.splitlines():
        if line.startswith("| ") and "Benchmark" not in line and "---" not in line:
            cells = line.count(" | ")
            header = next(h for h in text.splitlines() if h.startswith("| ")
                          and h.count(" | ") == cells)
            assert header  # every row has as many cells as some header


def test_markdown_text_escapes_every_special_character():
    assert markdown_text("a|b") == "a&#124;b"
    assert markdown_text("`x`") == "&#96;x&#96;"
    assert markdown_text("@octocat") == "@\u200doctocat"  # survives entity decoding
    assert markdown_text("[x](javascript:y)") == "&#91;x&#93;&#40;javascript&#58;y&#41;"
    assert markdown_text("line\nbreak") == "line break"
    assert markdown_text(XSS) == "&lt;img src=x onerror=alert&#40;1&#41;&gt;"
    assert len(markdown_text("x" * 500)) == 200
    assert not re.search(r"[<>|`\[\]]|@(?!\u200d)", markdown_text("<>|`@[]*_#!~\\&"))
