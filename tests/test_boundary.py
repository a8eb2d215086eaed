"""Typed, bounded command-line values: nonsense is one usage line and exit status 2."""

from __future__ import annotations

import argparse

import pytest

from torch_bench.boundary import http_url, number, plain_text
from torch_bench.cli import main


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e23", "-1", "abc", "", "9" * 5000])
def test_a_percentage_refuses_nonsense(text):
    with pytest.raises(argparse.ArgumentTypeError):
        number(0, 100)(text)


def test_numbers_in_range_are_read():
    assert number(0, 100)(" 12.5 ") == pytest.approx(12.5)
    assert number(1, 10, integer=True)("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match="not a whole number"):
        number(1, 10, integer=True)("3.5")


@pytest.mark.parametrize("text", ["", "  ", "a\x1bb", "a\nb", "a\u202eb", "x" * 300])
def test_plain_text_refuses_empty_control_and_overlong(text):
    with pytest.raises(argparse.ArgumentTypeError):
        plain_text()(text)


@pytest.mark.parametrize("argv, flag", [
    (["preflight", "--cpu-busy-limit", "nan"], "--cpu-busy-limit"),
    (["preflight", "--cpu-busy-limit", "-5"], "--cpu-busy-limit"),
    (["store", "x.json", "--retry-for", "1e300"], "--retry-for"),
    (["store", "x.json", "--attempts", "1e23"], "--attempts"),
    (["site", "--data", "d", "--out", "o", "--change-point-window", "99999999999"],
     "--change-point-window"),
])
def test_commands_refuse_nonsense_numbers_before_any_work(argv, flag, capsys):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    err = capsys.readouterr().err
    assert caught.value.code == 2 and f"argument {flag}:" in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["javascript:alert(1)", "data:text/html,x", "http://",
                                  "//evil.test/x", "https://a.test/\nx", "http://h:port/"])
def test_a_link_must_be_an_http_url(text):
    with pytest.raises(argparse.ArgumentTypeError):
        http_url(text)


def test_compare_refuses_a_javascript_dashboard_link(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["compare", "a.json", "b.json", "--dashboard-link", "javascript:alert(1)"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "--dashboard-link" in err and len(err.splitlines()) == 1
