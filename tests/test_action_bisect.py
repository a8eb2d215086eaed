"""The Action's `bisect` input: when a push is bisected, between which commits, over which
benchmarks, and a bisection that cannot run leaves the job's verdict alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.runs import history, make_run, ok
from test_action_ab import git
from torch_bench.action import bisect_stage, stages
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import read_inputs
from torch_bench.cli import build_parser
from torch_bench.errors import UserError
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path

HEAD = "f" * 40


def context(event="push", ref="refs/heads/main", pr=None, workspace="."):
    return RunContext(event=event, repository="octo/bench", ref=ref, default_branch="main",
                      pr_number=pr, pr_base_branch="main" if pr else None, pr_head_sha=None,
                      from_fork=False, server_url="https://github.com", workspace=workspace)


def inputs(bisect="true", **more):
    return read_inputs({"TB_SUITES": "rnns", "TB_DEVICE": "cpu", "TB_BISECT": bisect,
                        "TB_RUN_ARGS": "--max-time 2", **more})


VERDICTS = {"verdicts": [
    {"suite": "demo", "name": "lstm.fwd", "verdict": "regression"},
    {"suite": "demo", "name": "gru", "verdict": "unchanged"},
    {"suite": "demo", "name": "lstm.fwd", "verdict": "regression"}]}


@pytest.fixture
def stored(tmp_path):
    """A data folder of five main runs; the head run, a later commit."""
    folder = tmp_path / "history"
    runs = history(5, {"lstm.fwd": 1.0, "gru": 1.0})
    for run in runs:
        save_run(run, folder / run_path(run))
    head = make_run([ok("lstm.fwd", 1.5), ok("gru", 1.0)], sha=HEAD,
                    created_at="2026-01-02T00:00:00Z")
    return folder, runs, head


def test_a_regressed_push_is_bisected_from_the_previous_stored_commit(stored):
    folder, runs, head = stored
    found = bisect_stage.plan(inputs(), context(), "regression", head, folder, VERDICTS)
    assert (found.good, found.bad) == (runs[-1].git["sha"], HEAD)
    assert found.benchmarks == ("demo/lstm.fwd",)
    assert re.search(found.filter, "demo/lstm.fwd") and not re.search(found.filter,
                                                                       "demo/lstmXfwd")


@pytest.mark.parametrize(("choice", "ctx", "verdict", "said"), [
    ("false", context(), "regression", "bisect: off"),
    ("true", context(event="pull_request", pr=7), "regression", "only on pushes"),
    ("true", context(ref="refs/heads/feature"), "regression", "only on pushes"),
    ("true", context(), "unchanged", "no regression"),
])
def test_nothing_is_bisected_unless_a_push_to_the_default_branch_regressed(
        stored, choice, ctx, verdict, said):
    folder, _, head = stored
    assert said in bisect_stage.plan(inputs(choice), ctx, verdict, head, folder, VERDICTS)


def test_a_first_run_has_nothing_to_bisect_against(stored, tmp_path):
    _, _, head = stored
    empty = tmp_path / "empty"
    empty.mkdir()
    said = bisect_stage.plan(inputs(), context(), "regression", head, empty, VERDICTS)
    assert said.startswith("bisect: no earlier run")


def test_the_bisect_command_gets_the_jobs_run_arguments_and_rule(stored, tmp_path):
    folder, runs, head = stored
    found = bisect_stage.plan(inputs(), context(), "regression", head, folder, VERDICTS)
    argv = bisect_stage.arguments(found, inputs(TB_MIN_EFFECT="0.05",
                                                TB_BISECT_MAX_STEPS="4"),
                                  context(workspace="/w"), tmp_path)
    args = build_parser(argv).parse_args(argv)
    assert (args.good, args.bad, args.repo, args.max_steps) == (runs[-1].git["sha"], HEAD,
                                                                "/w", 4)
    assert args.min_effect == pytest.approx(0.05)
    run_args = args.run_args[1:]
    assert run_args[:4] == ["--suite", "rnns", "--device", "cpu"]
    assert run_args[-4:] == ["--max-time", "1", "--filter", found.filter]  # 2 s over 2 rounds


def test_the_input_is_read_and_checked():
    assert (inputs("true")["bisect"], inputs("false")["bisect-max-steps"]) == (True, 6)
    with pytest.raises(UserError, match="Invalid value for 'bisect' input"):
        inputs("sometimes")


def test_a_bisection_that_cannot_run_is_a_warning_and_the_verdict_stands(
        stored, tmp_path, capsys):
    folder, _, head = stored
    repo = tmp_path / "repo"  # a clone that does not hold the stored commits
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "a")
    head_path, verdicts = tmp_path / "results.json", tmp_path / "verdicts.json"
    save_run(head, head_path)
    verdicts.write_text(json.dumps(VERDICTS))
    report = bisect_stage.run_stage(inputs(), context(workspace=str(repo)), "regression",
                                    head_path, folder, verdicts, tmp_path / "out", stages.cli)
    assert report is None
    err = capsys.readouterr().err
    assert "::warning title=torch-bench::bisect: " in err and "is not in the checkout" in err
    assert "fetch-depth: 0" in err


# -- the bisect sub-action, for commits given by hand (examples/bisect.yml) -----------------

def test_the_sub_action_passes_every_input_through_env():
    import yaml

    from torch_bench.action.inputs import BISECT_INPUTS

    meta = yaml.safe_load((Path(__file__).parents[1] / "bisect" / "action.yml").read_text())
    assert set(meta["inputs"]) == {spec.name for spec in BISECT_INPUTS}
    step = meta["runs"]["steps"][-1]
    assert step["run"] == '"$TB_COMMAND" bisect'
    for spec in BISECT_INPUTS:
        assert step["env"][spec.variable] == f"${{{{ inputs.{spec.name} }}}}"
        if not meta["inputs"][spec.name].get("required"):
            assert meta["inputs"][spec.name]["default"] == spec.default, spec.name


def dispatched(**values):
    from torch_bench.action.inputs import BISECT_INPUTS

    environ = {f"TB_{k.upper()}": v for k, v in values.items()}
    found = read_inputs(environ, BISECT_INPUTS)
    argv = bisect_stage.dispatch_arguments(found, context(event="workflow_dispatch",
                                                          workspace="/w"), Path("/out"))
    return build_parser(argv).parse_args(argv)


def test_the_sub_action_bisects_the_commits_given_with_the_suites_given():
    args = dispatched(good="v1.0", bad="main", run_args="--filter 'lstm fwd' --max-time 3",
                      max_steps="4")
    assert (args.good, args.bad, args.repo, args.max_steps) == ("v1.0", "main", "/w", 4)
    assert args.run_args[1:] == ["--suite", "rnns", "--device", "cuda", "--filter",
                                 "lstm fwd", "--max-time", "3", "--max-time", "1.5"]
    assert args.json == "/out/bisect.json"
    with_config = dispatched(good="a", bad="b", config="bench.yml", device="cpu")
    assert with_config.run_args[1:5] == ["--device", "cpu", "--config", "bench.yml"]
    with pytest.raises(UserError, match="needs both inputs 'good' and 'bad'"):
        dispatched(good="a")
