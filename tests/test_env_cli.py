"""`torch-bench env` shows machine-reported text as it is."""

from __future__ import annotations

import argparse

from torch_bench.cli import env as env_cli


def test_values_that_look_like_rich_markup_are_shown_literally(monkeypatch, capsys):
    machine = {"cpu": "Vendor [/] CPU [bold]X[/bold]", "hostname": "[/some/file]"}
    monkeypatch.setattr(env_cli, "collect_environment", lambda: machine)

    assert env_cli.handle(argparse.Namespace(json=False)) == 0

    shown = capsys.readouterr().out
    assert "[/some/file]" in shown
    assert "Vendor [/] CPU [bold]X[/bold]" in shown
