"""The terminal report of `torch-bench compare`: parameters every row shares said once, no
HTML entities, verdicts in colour, untrusted names shown literally (no markup, no control
characters reaching the terminal)."""

from __future__ import annotations

import io
import re

from rich.console import Console

from support.runs import history, make_run, ok
from torch_bench.analyze.verdicts import compare_runs
from torch_bench.report.terminal import render_report, terminal_text

SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colour sequences rich itself writes


def shown(comparison, colour: bool = False, width: int = 160) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=colour,
                      color_system="standard" if colour else None, soft_wrap=True)
    console.print(render_report(comparison, "bench"))
    return out.getvalue()


def lstm_comparison():
    shared = {"seq_length": 20, "hidden_size": 64, "input_size": 64}
    names = {"steady": 10, "slower": 10, "faster": 10}

    def run(medians, run_id, seed, **git):
        return make_run([ok(name, m, params={**shared, "variant": name}, seed=seed + i)
                         for i, (name, m) in enumerate(medians.items())], run_id=run_id, **git)

    past = [run(names, f"hist-{i}", 100 + 7 * i, sha=f"{i:040x}",
                created_at=f"2025-12-{1 + i:02d}T00:00:00Z") for i in range(12)]
    head = run({"steady": 10, "slower": 13, "faster": 7}, "head-1", 1, sha="b" * 40,
               branch="feature")
    return compare_runs(past[-1:], [head], past)


def test_shared_parameters_are_said_once_and_no_html_entities():
    text = shown(lstm_comparison())
    assert text.count("seq_length=20") == 1
    assert "parameters of every benchmark: seq_length=20 hidden_size=64 input_size=64" in text
    for name in ("steady", "slower", "faster"):  # the one parameter that differs, per row
        assert f"variant={name}" in text
    assert "&#" not in text and "###" not in text and "| ---" not in text
    assert re.match(r"bench: 1 regression; 1 improvement; no change beyond ±\d+\.\d% in 1 "
                    r"benchmark\n", text)
    lines = text.splitlines()
    order = [next(i for i, line in enumerate(lines) if f"demo/{n} " in line)
             for n in ("slower", "faster", "steady")]
    assert order == sorted(order)  # regressions first, then improvements, then the rest
    assert re.search(r"demo/steady .* unchanged .* no change beyond ±\d", text)


def test_verdicts_are_coloured():
    text = shown(lstm_comparison(), colour=True)
    assert "\x1b[1;31mregression" in text
    assert "\x1b[32mimprovement" in text
    assert "\x1b[2munchanged" in text


def test_names_cannot_style_or_control_the_terminal():
    evil = "x[bold red]boom[/]\x1b[2J\x07\x9b31m\u202edlrow"
    params = {"mode": "[link=https://evil.example]click[/link]"}
    base = make_run([ok(evil, 10, seed=1, params=params), ok("plain", 5, seed=2)],
                    run_id="base-1", branch="main\x1b]0;title\x07")
    head = make_run([ok(evil, 10, seed=11, params=params), ok("plain", 5, seed=12)],
                    sha="b" * 40, branch="feature\r\nforged line", run_id="head-1",
                    pr=7, pr_title="[blink]t[/blink]\x1b[5m")
    comparison = compare_runs([base], [head], history(12, {evil: 10, "plain": 5}))
    plain = shown(comparison, width=300)
    assert "\x1b" not in plain and "\x07" not in plain and "\x9b" not in plain
    assert "\u202e" not in plain and "\r" not in plain
    assert "x[bold red]boom[/]\\x1b[2J\\x07\\x9b31m\\u202edlrow" in plain
    assert "mode=[link=https://evil.example]click[/link]" in plain
    assert "feature forged line" in plain  # one line, not two
    assert "PR #7: [blink]t[/blink]\\x1b[5m" in plain
    coloured = shown(comparison, colour=True, width=300)
    assert "\x1b" not in SGR.sub("", coloured)  # only rich's own colour sequences
    assert "\x1b]8;" not in coloured  # no hyperlink made of a name


def test_terminal_text_shows_every_control_character():
    assert terminal_text("a\x00b\x1bc\x7fd\x85e") == "a\\x00b\\x1bc\\x7fd\\x85e"
    assert terminal_text("tab\tand\nnewline") == "tab and newline"
    assert terminal_text("\u2066isolate\u2069") == "\\u2066isolate\\u2069"
    assert terminal_text("é ü 中文 [x]") == "é ü 中文 [x]"


def test_many_unchanged_benchmarks_are_counted_not_listed():
    names = {f"b{i:03d}": 10 for i in range(60)}
    past = history(12, names)
    head = make_run([ok(n, 10, seed=500 + i) for i, n in enumerate(names)], sha="b" * 40,
                    run_id="head-1")
    text = shown(compare_runs(past[-1:], [head], past))
    assert "60 unchanged benchmark(s) not listed" in text
    assert "demo/b000" not in text
