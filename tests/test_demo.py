"""The demo's pieces, without its minutes of measurement: the tiny project's suite, the PR
edit `scripts/demo` applies to it, and the story it prints from the verdicts."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.runs import history, make_run, ok
from torch_bench.analyze.headline import comparison_document
from torch_bench.analyze.verdicts import compare_runs

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "scripts" / "demo-project"


def load_story():
    spec = importlib.util.spec_from_file_location("demo_story", ROOT / "scripts" / "demo-story.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_project_suite_lists_its_four_models(cli):
    done = cli("run", "--suite", "tinynet.bench", "--dry-run",
               env={"PYTHONPATH": os.pathsep.join(
                   p for p in (str(PROJECT), os.environ.get("PYTHONPATH")) if p)})
    assert done.returncode == 0, done.stderr
    for name in ("attention", "cnn", "lstm", "mlp"):
        assert f"tinynet/{name}" in done.stdout


def test_the_pr_edit_doubles_the_mlp_and_narrows_the_lstm(tmp_path):
    script = (ROOT / "scripts" / "demo").read_text()
    [edit] = re.findall(r"sed -i '([^']+)'", script)
    shutil.copytree(PROJECT, tmp_path / "project")
    models = tmp_path / "project" / "tinynet" / "models.py"
    subprocess.run(["sed", "-i", edit, str(models)], check=True)
    probe = ("import torch, tinynet.models as m;"
             "linear = [x for x in m.mlp() if isinstance(x, torch.nn.Linear)];"
             "print(len(linear), m.Recurrent().lstm.hidden_size)")
    counts = {}
    for side, folder in (("main", PROJECT), ("pr", tmp_path / "project")):
        done = subprocess.run([sys.executable, "-c", probe], cwd=folder, capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONPATH": str(folder)})
        counts[side] = done.stdout.split()
    assert counts == {"main": ["3", "64"], "pr": ["5", "32"]}  # 2 -> 4 hidden layers


def test_the_story_says_what_was_caught_and_where_everything_is(tmp_path):
    past = history(12, {"steady": 10, "slower": 10, "faster": 10})
    head = make_run([ok("steady", 10, seed=1), ok("slower", 20, seed=2), ok("faster", 5, seed=3)],
                    sha="b" * 40, branch="deeper-mlp", run_id="head-1")
    comparison = compare_runs(past[-1:], [head], past)
    (tmp_path / "report.json").write_text(json.dumps(comparison_document(comparison)))
    lines = load_story().story(tmp_path, 95)
    text = "\n".join(lines)
    assert "The story, in 95 s:" in text
    assert re.search(r"caught +demo/slower latency \+\d+% slower: a regression", text)
    assert re.search(r"improved +demo/faster latency -\d+%", text)
    assert re.search(r"unchanged +demo/steady \(no change beyond ±\d+%\)", text)
    assert str(tmp_path / "report.md") in text and str(tmp_path / "site") in text


def test_the_story_says_so_when_nothing_was_caught(tmp_path):
    past = history(12, {"steady": 10})
    head = make_run([ok("steady", 10, seed=1)], sha="b" * 40, run_id="head-1")
    (tmp_path / "report.json").write_text(json.dumps(
        comparison_document(compare_runs(past[-1:], [head], past))))
    assert "caught     nothing" in "\n".join(load_story().story(tmp_path, 60))
