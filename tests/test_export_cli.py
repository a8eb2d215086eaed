"""Exports on the command line: standard output as fastrnns' --print-json, units, formats."""

import json

import pytest

from conftest import TINY_RNN


def test_run_prints_the_oss_export_alone_on_stdout(cli, tmp_path):
    done = cli("run", "--suite", "rnns", "--variants", "aten", *TINY_RNN, "--out", "r.json",
               "--oss", "-", check=True)
    assert list(json.loads(done.stdout)) == ["lstm", "lstm-backward"]  # nothing else, no peak_rss
    assert "rnns/aten" in done.stderr or "lstm" in done.stderr  # the table moved to stderr
    seconds = cli("export", "r.json", "--oss", "-", "--aipep", "a.txt", "--unit", "s",
                  check=True)
    in_s, in_ms = json.loads(seconds.stdout), json.loads(done.stdout)
    assert in_s["lstm"]["aten"] * 1e3 == pytest.approx(in_ms["lstm"]["aten"])
    assert '"unit": "s"' in (tmp_path / "a.txt").read_text()
    everything = cli("export", "r.json", "--format", "oss", "--export-all-metrics", check=True)
    assert "rnns-peak_rss" in json.loads(everything.stdout)


def test_export_needs_a_format_and_one_way_to_say_it(cli, tmp_path):
    cli("run", "--suite", "rnns", "--variants", "aten", *TINY_RNN, "--out", "r.json",
        check=True)
    neither = cli("export", "r.json")
    assert neither.returncode == 2 and "--format" in neither.stderr
    both = cli("export", "r.json", "--format", "oss", "--aipep", "-")
    assert both.returncode == 2 and "either" in both.stderr
