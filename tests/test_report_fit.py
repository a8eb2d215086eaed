"""Fitting reports into GitHub's size limits, and sanitising a fork's report: pure text."""

from __future__ import annotations

import random
import re

import pytest

from torch_bench.report.fit import fit_report, utf8_length, utf16_length
from torch_bench.report.sanitise import ZERO_WIDTH_JOINER, sanitise_markdown


def report(rows: int, rest: int) -> str:
    lines = ["### torch-bench: 3 regressions", "", "| Verdict | Count |", "| --- | ---: |",
             f"| Regression | {rows} |", "", f"#### Regressions ({rows})", "",
             "| Benchmark | Change |", "| --- | ---: |"]
    lines += [f"| demo/worst-{i:04d} | +{50 - i * 0.01:.2f}% |" for i in range(rows)]
    lines += ["", "<details>", f"<summary>Other results ({rest})</summary>", "",
              "| Benchmark | Verdict |", "| --- | --- |"]
    lines += [f"| demo/other-{i:04d} | unchanged |" for i in range(rest)]
    lines += ["", "</details>", "", "<sub>rule footer</sub>", ""]
    return "\n".join(lines)


def test_a_report_that_fits_is_unchanged():
    text = report(3, 3)
    assert fit_report(text, 65_536) == text


@pytest.mark.parametrize("limit", [900, 2_000, 5_000, 12_000])
def test_rows_are_dropped_whole_from_the_end_keeping_the_worst(limit):
    text = report(200, 300)
    assert len(text) > limit
    fitted = fit_report(text, limit, full_report="[the job summary](<https://x.test/run>)")
    assert len(fitted) <= limit
    original = set(text.split("\n"))
    for line in fitted.split("\n"):
        if line.startswith("|"):
            assert line in original  # never a row cut in the middle
    assert fitted.startswith("### torch-bench: 3 regressions")
    assert fitted.count("<details>") == fitted.count("</details>") == 1
    assert fitted.rstrip().endswith("<sub>rule footer</sub>")
    kept = re.findall(r"worst-(\d{4})", fitted)
    assert kept == [f"{i:04d}" for i in range(len(kept))]  # the worst first, none skipped
    shown = len(re.findall(r"^\| demo/", fitted, re.M))
    assert f"**{500 - shown} of 501 table rows are not shown here" in fitted
    assert "[the job summary](<https://x.test/run>)" in fitted
    assert "demo/other-" not in fitted or "demo/worst-0199" in fitted


def test_a_table_left_empty_loses_its_header_and_says_how_many_rows_it_had():
    fitted = fit_report(report(40, 3000), 1_500)
    assert "| Benchmark | Verdict |" not in fitted and "3000 rows not shown" in fitted
    assert "worst-0000" in fitted and "worst-0039" not in fitted


def test_untrusted_text_without_tables_is_cut_at_a_line_with_its_blocks_closed():
    text = "intro\n<details>\n```\n" + "\n".join("x" * 80 for _ in range(3000))
    fitted = fit_report(text, 10_000)
    assert len(fitted) <= 10_000
    body = fitted.split("\n")
    assert all(line in ("intro", "<details>", "```", "x" * 80, "</details>", "") or
               "not shown" in line for line in body)
    assert fitted.count("```") == 2 and "</details>" in fitted


def test_one_enormous_line_and_tiny_limits_still_fit():
    assert len(fit_report("y" * 200_000, 1_000)) <= 1_000
    for limit in (0, 5, 50):
        assert len(fit_report(report(50, 50), limit)) <= limit


def test_any_text_fits_whatever_its_shape():
    rng = random.Random(7)
    pieces = ["| a | b |", "| --- | --- |", "<details>", "</details>", "```", "", "text é😀",
              "| row | " + "z" * 300 + " |", "#### heading"]
    for _ in range(40):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 2000)))
        limit = rng.randint(100, 20_000)
        assert utf16_length(fit_report(text, limit, measure=utf16_length)) <= limit
        assert utf8_length(fit_report(text, limit, measure=utf8_length)) <= limit


HOSTS = {"github.com", "octo.github.io"}


def test_the_fork_sanitiser_stops_every_kind_of_mention():
    text = sanitise_markdown("ping @team, &#64;org/team, &#x40;admin, &commat;all", HOSTS)
    assert not re.search(r"@(?!\u200d)", text) and "&#" not in text and "&commat" not in text
    assert text.count("@" + ZERO_WIDTH_JOINER) == 4


def test_the_fork_sanitiser_removes_hidden_markers_images_and_foreign_links():
    text = sanitise_markdown(
        "<!-- torch-bench-report config=other -->\n"
        "![pixel](https://evil.test/t.png) <img src=https://evil.test/x.png>\n"
        "[click](https://evil.test/phish) [dash](https://octo.github.io/bench/#/x) "
        "<a href='https://evil.test'>a</a> see https://evil.test/x and <https://evil.test/y>\n"
        "[ref]: https://evil.test/z\n<details>\n<summary>more</summary>\n</details>", HOSTS)
    assert "<!--" not in text and "<img" not in text and "<a " not in text
    assert "![" not in text and "](https://evil" not in text
    assert "[dash](https://octo.github.io/bench/#/x)" in text
    assert "`https://evil.test/x`" in text  # shown, not linked
    assert "\\[ref]:" in text
    assert "<details>" in text and "<summary>more</summary>" in text


def test_the_fork_sanitiser_turns_cross_references_into_code():
    text = sanitise_markdown("fixes octo/other#12 and mallory/x@0123456789abcdef #3", HOSTS)
    assert "`octo/other#12`" in text and "`mallory/x@0123456789abcdef`" in text
