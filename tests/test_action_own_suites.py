"""The Action benchmarking the repository's own code (input `suite-path`), end to end as a
runner runs it: a model library under `src/` and its suite under `benchmarks/`, measured on
two pushes and two PRs (one judged against the history, one side by side with the
merge-base), while every process that imports the suite writes down its environment: the
token is never in it, and the Action's own process never imports the suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fake_github import FakeGitHub
from test_action_e2e import TOKEN, World, git, run_action
from torch_bench.action.inputs import read_inputs
from torch_bench.errors import UserError
from torch_bench.suite_path import parse_suite_path

LIBRARY = '''
FACTOR = {factor}


def forward_cost():
    """The library's 'model': what its benchmark measures."""
    return FACTOR
'''

SUITE = '''
import json
import os
import sys
from pathlib import Path

import numpy as np

import tinylib
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite


def record(where):
    """This process's environment, for the test to search for the token."""
    folder = Path(os.environ["OWNBENCH_ENV_DIR"])
    (folder / f"{os.getpid()}-{where}.json").write_text(json.dumps(
        {"argv": sys.argv, "file": __file__, "environ": dict(os.environ)}))


record("import")


def plan(options, device):
    return [CaseSpec(suite="ownbench", name="forward", params={"device": device},
                     outputs=(Output("latency"),))]


def run_case(case, ctx):
    record("case")
    rng = np.random.default_rng(os.getpid())
    values = tinylib.forward_cost() * np.exp(rng.normal(0.0, 0.01, 20))
    return [measured(case.suite, case.name, "latency", values.tolist(), params=case.params)]


SUITE = Suite(name="ownbench", description="a library's own model", options=(), plan=plan,
              run_case=run_case, record_memory=False)
'''

RUN_ARGS = "--threads 1 --no-preflight --processes 1 --max-time 0.2"
INPUTS = {"suites": "ownbench.suite", "suite-path": "src, benchmarks", "run-args": RUN_ARGS}


def commit_library(world: World) -> None:
    """main holds the library and its suite; feature changes the library."""
    project = world.project
    git(project, "checkout", "-q", "main")
    (project / "src" / "tinylib").mkdir(parents=True)
    (project / "src" / "tinylib" / "__init__.py").write_text(LIBRARY.format(factor=1.0))
    (project / "benchmarks" / "ownbench").mkdir(parents=True)
    (project / "benchmarks" / "ownbench" / "__init__.py").write_text("")
    (project / "benchmarks" / "ownbench" / "suite.py").write_text(SUITE)
    git(project, "add", "-A")
    git(project, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "library")
    world.base_sha = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-B", "feature")
    (project / "src" / "tinylib" / "__init__.py").write_text(LIBRARY.format(factor=1.5))
    git(project, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-am",
        "a slower model")
    world.head_sha = git(project, "rev-parse", "HEAD")
    world.api.pulls[7] = {"number": 7, "head": {"sha": world.head_sha}}


def recorded(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


@pytest.mark.slow
def test_own_suite_on_push_and_pr_never_sees_the_token(tmp_path, monkeypatch):
    environs = tmp_path / "environs"
    environs.mkdir()
    monkeypatch.setenv("OWNBENCH_ENV_DIR", str(environs))
    with FakeGitHub() as api:
        world = World(tmp_path / "world", api)
        commit_library(world)
        git(world.project, "checkout", "-q", "main")
        verdicts = []
        for _ in range(2):
            done, outputs, _ = run_action(world, world.event("push"), **INPUTS)
            assert done.returncode == 0, done.stdout + done.stderr
            verdicts.append(outputs["verdict"])
        git(world.project, "checkout", "-q", "feature")
        for side_by_side in ("never", "always"):
            done, outputs, out = run_action(world, world.event("pull_request"), **INPUTS,
                                            ab=side_by_side, **{"confirm-budget": "0"})
            assert done.returncode == 0, done.stdout + done.stderr
            verdicts.append(outputs["verdict"])
            assert outputs["verdict"] != "no-baseline"
            assert "**PR budget**: " in done.stderr  # what the extra stages took of it
    assert len(world.runs()) == 2  # the pushes' runs, stored
    assert verdicts[0] == "no-baseline" and verdicts[1] != "no-baseline"
    assert "ownbench/forward" in (out / "report.md").read_text()
    found = recorded(environs)
    assert {Path(f["file"]).parent.parent.name for f in found} == {"benchmarks"}
    # the suite ran in the measuring processes of both checkouts (the A/B's merge-base too)
    assert any("merge-base-" in f["file"] for f in found)
    assert any(Path(f["file"]).is_relative_to(world.project) for f in found)
    for process in found:
        assert "GITHUB_TOKEN" not in process["environ"]
        assert TOKEN not in json.dumps(process["environ"])
        # the Action's own process (the console script) never imported the suite
        assert not process["argv"][0].endswith("torch-bench-action")


@pytest.mark.parametrize("given", ["src,../elsewhere", "/etc", "C:/x", "a/../../b"])
def test_a_suite_path_outside_the_repository_is_refused_by_name(given):
    with pytest.raises(UserError, match="Invalid value for 'suite-path' input"):
        read_inputs({"TB_SUITE_PATH": given, "TB_DEVICE": "cpu"})


def test_suite_path_folders_are_normalised():
    assert read_inputs({"TB_SUITE_PATH": " src, ./benchmarks/,src,. ", "TB_DEVICE": "cpu"}
                       )["suite-path"] == ("src", "benchmarks", ".")


@given(st.text(alphabet="ab./\\:, ", max_size=30))
def test_any_suite_path_stays_inside_the_checkout(text):
    try:
        folders = parse_suite_path(text)
    except ValueError as exc:
        assert "relative to its root" in str(exc)
        return
    root = Path("/checkout")
    for folder in folders:
        assert (root / folder).resolve().is_relative_to(root)


def test_measuring_children_get_the_suite_path_and_no_token(tmp_path):
    from torch_bench.action.measuring import child_environment
    from torch_bench.analyze.ab import side_environment

    for checkout in (tmp_path / "head", tmp_path / "base"):
        (checkout / "benchmarks").mkdir(parents=True)
    environ = {"GITHUB_TOKEN": TOKEN, "INPUT_GITHUB-TOKEN": TOKEN, "PATH": "/bin"}
    child = child_environment(tmp_path / "head", ("benchmarks",), environ)
    assert TOKEN not in json.dumps(child)
    assert child["PYTHONPATH"].split(":")[0] == str(tmp_path / "head" / "benchmarks")
    # the child's own children (an A/B side) find the folder in their checkout
    side = side_environment(tmp_path / "base", child)
    assert side["PYTHONPATH"].split(":")[0] == str(tmp_path / "base" / "benchmarks")
    assert TOKEN not in json.dumps(side_environment(tmp_path / "base", environ))
