"""Commands that measure nothing never import torch, and those that judge nothing never import
scipy: they start in a fraction of the time, and the comment sub-action installs neither."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_github import FakeGitHub
from site_history import make_run, write_history
from torch_bench.cli import COMMANDS, build_parser
from torch_bench.results.document import save_run

HEAVY = ("torch", "scipy")
# Runs the CLI (or the Action's entry point) and lists, at exit, every module it imported.
PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
if sys.argv[1] == "--action":
    from torch_bench.action.__main__ import main
    sys.exit(main(sys.argv[2:]))
from torch_bench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def imported_by(tmp_path: Path, *args: str, env: dict | None = None) -> tuple[set, object]:
    record = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", PROBE, str(record), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    return set(json.loads(record.read_text())), done


def heavy(modules: set) -> set:
    return {name for name in HEAVY if name in modules}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["comment", "--help"],
                                  ["site", "--help"], ["store", "--help"], ["data", "--help"]])
def test_version_and_help_import_neither_torch_nor_scipy(tmp_path, args):
    modules, done = imported_by(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == set()


def test_store_and_data_import_neither(tmp_path):
    results = tmp_path / "results.json"
    save_run(make_run(0), results)
    modules, done = imported_by(tmp_path, "store", str(results), "--to-folder", "data")
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == set()
    modules, done = imported_by(tmp_path, "data", "list", "--data", "data")
    assert done.returncode == 0, done.stderr
    assert "1 runs" in done.stdout
    assert heavy(modules) == set()


def test_site_imports_no_torch(tmp_path):
    write_history(tmp_path / "data")
    modules, done = imported_by(tmp_path, "site", "--data", "data", "--out", "public")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "public" / "index.html").is_file()
    assert "torch" not in modules
    # scipy's special functions for the noise bands' t quantiles, and no more of it
    assert "scipy.stats" not in modules


def test_comment_and_its_sub_action_import_neither(tmp_path):
    report = tmp_path / "pr-report"
    report.mkdir()
    (report / "report.md").write_text("## torch-bench\n\nunchanged\n")
    (report / "pr-number.txt").write_text("7\n")
    with FakeGitHub() as api:
        api.pulls[7] = {"number": 7, "head": {"sha": "a" * 40}}
        env = {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "ghs_test", "GITHUB_REPOSITORY":
               "octo/bench", "GITHUB_OUTPUT": str(tmp_path / "output")}
        modules, done = imported_by(tmp_path, "comment", str(report / "report.md"), "--pr",
                                    "7", "--strict", env=env)
        assert done.returncode == 0, done.stderr
        assert heavy(modules) == set()
        modules, done = imported_by(tmp_path, "--action", "comment", env={
            **env, "TB_REPORT_DIR": str(report), "TB_HEAD_SHA": "a" * 40})
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(api.comments[7]) == 1  # the same comment, updated in place
    assert heavy(modules) == set()
    # the comment sub-action installs only the core: nothing from another extra is needed
    assert not modules & {"jinja2", "plotly", "ruptures", "transformers", "pandas", "pynvml"}
    # and posting a finished report judges nothing
    assert not [name for name in modules if name.startswith("torch_bench.analyze")]


def test_one_line_summaries_match_the_commands_own_help():
    parser = build_parser(None)
    choices = next(a for a in parser._actions if a.dest == "command")._choices_actions
    assert [(c.dest, c.help) for c in choices] == [(c.name, c.summary) for c in COMMANDS]


def test_the_chosen_command_is_parsed_in_full(tmp_path):
    args = build_parser(["data", "list", "--data", "x"]).parse_args(
        ["data", "list", "--data", "x"])
    assert args.data == "x" and callable(args.handler)


@pytest.mark.parametrize("suite", ["rnns", "cnns", "transformers", "compile", "training"])
def test_a_refused_run_flag_imports_no_torch(tmp_path, suite):
    modules, done = imported_by(tmp_path, "run", "--suite", suite, "--warmup", "-2")
    assert done.returncode == 2
    assert "--warmup: '-2' is out of range" in done.stderr
    assert "torch" not in modules
