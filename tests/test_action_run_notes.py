"""Run notes from the Action's push path: a pushed planted slowdown is profiled against the
previous measured commit and its operator diff stored with the run on the data branch; a
bisection's first bad commit is stored as a note of the run, and both reach the dashboard."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace

import pytest

from run_notes_data import HOSTILE_SUBJECT
from support.runs import make_run, ok
from test_explain_cli import checkouts, git, verdicts_file
from test_run_notes import step_finder
from torch_bench.action import bisect_stage, stages
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import read_inputs
from torch_bench.analyze.bisect import Bisection, Ending
from torch_bench.analyze.bisect_runs import CommitInfo
from torch_bench.cli import main
from torch_bench.render.build import build_site_from_data
from torch_bench.report.bisect_report import document
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path
from torch_bench.store.notes import read_notes
from torch_bench.store.remote import Target, store_runs


def push_context(repo):
    return RunContext(event="push", repository="octo/bench", ref="refs/heads/main",
                      default_branch="main", pr_number=None, pr_base_branch=None,
                      pr_head_sha=None, from_fork=False, server_url="https://example.com",
                      workspace=str(repo))


def inputs(explain="auto"):
    return read_inputs({"TB_SUITES": "explainwork.suite", "TB_DEVICE": "cpu",
                        "TB_RUN_ARGS": "--filter mlp", "TB_EXPLAIN": explain})


def remote(tmp_path) -> Target:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return Target(str(bare), "gh-pages", "benchmarks")


def checkout(target: Target, where):
    """The data folder of the branch's tip, as a fresh clone has it."""
    subprocess.run(["git", "clone", "-q", "-b", target.branch, target.remote, str(where)],
                   check=True)
    return where / target.folder


def history_of(tmp_path, run):
    folder = tmp_path / "history"
    save_run(run, folder / run_path(run))
    return folder


@pytest.mark.slow
def test_a_pushed_slowdown_stores_its_operator_diff_with_the_run(tmp_path):
    base, repo = checkouts(tmp_path, {}, {"width": 1024})
    base_sha, head_sha = git(repo, "rev-parse", "main"), git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "remove", "--force", str(base))
    previous = make_run([ok("mlp", 1.0, suite="planted")], sha=base_sha,
                        created_at="2026-01-01T00:00:00Z")
    history = history_of(tmp_path, previous)
    paths = stages.Paths(tmp_path / "out")
    paths.root.mkdir()
    head = make_run([ok("mlp", 1.4, suite="planted")], sha=head_sha,
                    created_at="2026-01-02T00:00:00Z")
    save_run(head, paths.results)
    paths.verdicts.write_text(verdicts_file(tmp_path, {"mlp": "regression"}).read_text())
    outcome = stages.Outcome("regression", 1, 0, None)

    notes = stages.explain(inputs(), push_context(repo), paths.results, paths, outcome,
                           history)
    target = remote(tmp_path)
    stages.store(paths.results, target, None, notes)

    stored, problems = read_notes(checkout(target, tmp_path / "clone"))
    assert problems == []
    [case] = stored[head.run_id]["op-diff"]["cases"]
    assert (case["suite"], case["name"], case["verdict"]) == ("planted", "mlp", "regression")
    assert case["rows"][0]["name"] == "aten::addmm" and case["rows"][0]["kind"] == "grew"
    assert not list((tmp_path / "clone").rglob("*trace*"))  # the traces stay in the job
    assert not (paths.root / "explain-base").exists()


def test_explain_never_or_a_first_run_stores_no_note(tmp_path, capsys):
    base, repo = checkouts(tmp_path, {}, {})
    paths = stages.Paths(tmp_path / "out")
    paths.root.mkdir()
    save_run(make_run([ok("mlp", 1.4, suite="planted")], sha=git(repo, "rev-parse", "HEAD")),
             paths.results)
    paths.verdicts.write_text(verdicts_file(tmp_path, {"mlp": "regression"}).read_text())
    outcome = stages.Outcome("regression", 1, 0, None)
    empty = tmp_path / "empty-history"
    empty.mkdir()
    assert stages.explain(inputs("never"), push_context(repo), paths.results, paths,
                          outcome, empty) == []
    assert stages.explain(inputs(), push_context(repo), paths.results, paths, outcome,
                          empty) == []
    assert "no earlier measured commit" in capsys.readouterr().err


def test_a_bisections_first_bad_commit_is_stored_and_shown_at_the_change_point(tmp_path):
    target = remote(tmp_path)
    runs = [make_run([ok("lstm.fwd", 1.0 if i < 4 else 1.5), ok("gru", 1.0)],
                     sha=f"{i:040x}", created_at=f"2026-01-{i + 1:02d}T00:00:00Z")
            for i in range(6)]
    runs = [replace(r, git={**r.git, "url": f"https://github.com/octo/bench/commit/{r.git['sha']}"})
            for r in runs]
    store_runs(runs, target)
    out = tmp_path / "out"
    out.mkdir()
    head = out / "results.json"
    save_run(runs[4], head)
    bad = "c0ffee" * 6 + "abcd"
    result = Bisection(Ending.FOUND, good=runs[3].git["sha"], bad=bad, steps=(), commits=3,
                       between=0)
    (out / "bisect.json").write_text(json.dumps(document(
        result, {bad: CommitInfo(bad, HOSTILE_SUBJECT, "Mallory <m@example.com>")})))
    verdicts = out / "verdicts.json"
    verdicts.write_text(json.dumps({"verdicts": [
        {"suite": "demo", "name": "lstm.fwd", "verdict": "regression"},
        {"suite": "demo", "name": "gru", "verdict": "unchanged"}]}))

    stages.store_notes(head, target, None, bisect_stage.found_note(head, verdicts, out))

    data = checkout(target, tmp_path / "clone")
    site = build_site_from_data(data, tmp_path / "site", finder=step_finder)
    pages = {p.name: p.read_text(encoding="utf-8") for p in (site / "bench").glob("*.html")}
    lstm = next(text for name, text in pages.items() if "lstm" in name)
    link = f'href="https://github.com/octo/bench/commit/{bad}" rel="noopener"><code>{bad[:7]}'
    assert link in lstm
    assert "&lt;/script&gt;&lt;script&gt;window.__xss=1" in lstm
    assert "Mallory &lt;m@example.com&gt;" in lstm
    assert not any("first bad commit" in text for name, text in pages.items() if "gru" in name)


@pytest.mark.slow
def test_explain_attach_to_keeps_the_diff_as_a_note_of_a_stored_run(tmp_path):
    base, head = checkouts(tmp_path, {}, {"width": 1024})
    data = tmp_path / "data"
    run = make_run([ok("mlp", 1.4, suite="planted")], sha=git(head, "rev-parse", "HEAD"))
    save_run(run, data / run_path(run))
    assert main(["explain", "--base", str(base), "--head", str(head), "--steps", "3",
                 "--warmup", "1", "--attach-to", str(data), "--run", run.run_id, "--",
                 "--suite", "explainwork.suite", "--filter", "mlp"]) == 0
    notes, problems = read_notes(data)
    assert problems == []
    [case] = notes[run.run_id]["op-diff"]["cases"]
    assert case["rows"][0]["name"] == "aten::addmm"
