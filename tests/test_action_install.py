"""The Action's own environment (src/torch_bench/action/install.py and the set-up steps of
every action.yml): pinned dependencies, a cache key that changes with what was installed, a
preinstalled torch that nothing moves, and sub-actions without torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

from torch_bench.action.install import (
    LOCKED_TORCH,
    TorchRequest,
    constraints_for,
    make_plan,
    parse_torch,
    resolve_torch,
)

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "src" / "torch_bench" / "action" / "install.py"
EXTRAS = {"action.yml": "measure,site", "dashboard/action.yml": "site",
          "comment/action.yml": "comment"}
LOCKED = (ROOT / "constraints.txt").read_text()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(text: str) -> dict[str, str]:
    return {canonical(m.group(1)): m.group(2)
            for m in re.finditer(r"^([A-Za-z0-9._-]+)==([^;\s]+)", text, re.M)}


@pytest.mark.parametrize("path", EXTRAS)
def test_every_action_sets_up_its_own_cached_environment(path):
    steps = yaml.safe_load((ROOT / path).read_text())["runs"]["steps"]
    plan, cache, create = steps[:3]
    assert plan["id"] == "setup" and plan["run"].endswith("install.py\" plan")
    assert create["run"].endswith("install.py\" create")
    assert plan["run"].startswith("python -I ")  # the runner's Python, isolated
    assert cache["uses"].startswith("actions/cache@")
    assert cache["with"] == {"path": "${{ steps.setup.outputs.venv }}",
                             "key": "${{ steps.setup.outputs.key }}"}
    for step in (plan, create):
        assert step["env"]["TB_EXTRAS"] == EXTRAS[path]
        assert ("TB_TORCH" in step["env"]) == (path == "action.yml")
    assert "python -m" not in steps[-1]["run"] and "$TB_COMMAND" in steps[-1]["run"]


def test_constraints_pin_every_dependency_except_torch():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *(r for extra in ("measure", "site", "comment")
                                          for r in project["optional-dependencies"][extra])]
    names = {canonical(re.match(r"[A-Za-z0-9._-]+", r).group()) for r in wanted}
    locked = pinned(LOCKED)
    assert names - {"torch"} <= set(locked)
    assert "torch" not in locked


def test_the_sub_actions_extras_hold_no_torch_and_the_test_extra_holds_everything():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert not any(r.startswith(("torch", "transformers"))
                   for e in ("site", "comment") for r in extras[e])
    assert extras["comment"] == []  # posting a report needs the core alone
    assert "torch-bench-action[measure,site,comment,analysis,database]" in extras["test"]


def test_scripts_setup_pins_the_torch_the_constraints_were_resolved_with():
    assert f'torch=={LOCKED_TORCH}' in (ROOT / "scripts" / "setup").read_text()


@pytest.mark.parametrize("text, expected", [
    ("", "auto"), ("preinstalled", "preinstalled"), ("cpu", "cpu"), ("cu128", "cu128"),
    ("torch==2.5.1", "torch==2.5.1"), ("torch>=2.4, <2.6", "torch>=2.4,<2.6")])
def test_torch_input_accepts(text, expected):
    assert parse_torch(text) == expected


@pytest.mark.parametrize("text", ["numpy==2", "torch --index-url http://evil", "torch==2; rm",
                                  "cuda", "torch==2.5.1 -e ."])
def test_torch_input_refuses_anything_but_a_torch_spec(text):
    with pytest.raises(ValueError, match="expected auto, preinstalled"):
        parse_torch(text)


def test_auto_reuses_an_installed_torch_else_installs_the_build_the_device_needs():
    assert resolve_torch("auto", "cuda", "2.5.1") == TorchRequest(
        "preinstalled-2.5.1", reuse_installed=True)
    cpu = resolve_torch("auto", "cpu", None)
    assert cpu.label == "cpu" and "https://download.pytorch.org/whl/cpu" in cpu.pip_args
    assert f"torch=={LOCKED_TORCH}" in cpu.pip_args
    assert resolve_torch("auto", "cuda", None).pip_args == (f"torch=={LOCKED_TORCH}",)
    assert resolve_torch("cu126", "cuda", "2.5.1").pip_args[2].endswith("/whl/cu126")
    with pytest.raises(ValueError, match="no torch"):
        resolve_torch("preinstalled", "cuda", None)


def test_a_preinstalled_torch_pins_torch_and_numpy_to_what_the_runner_has():
    request = resolve_torch("preinstalled", "cuda", "2.4.0")
    text = constraints_for(LOCKED, request, {"torch": "2.4.0", "numpy": "1.26.4"})
    pins = pinned(text)
    assert pins["torch"] == "2.4.0" and pins["numpy"] == "1.26.4"
    assert len(re.findall(r"^numpy==", text, re.M)) == 1
    assert pins["scipy"] == pinned(LOCKED)["scipy"]
    assert constraints_for(LOCKED, resolve_torch("cpu", "cpu", None), {}) == LOCKED


def test_the_cache_key_follows_the_torch_choice_and_the_installed_torch(tmp_path):
    def key(**env):
        return make_plan(ROOT, {"RUNNER_TOOL_CACHE": str(tmp_path), **env},
                         {"torch": env.pop("installed", "2.4.0"), "numpy": "1.26.4"}).key

    reused, cpu = key(TB_TORCH="auto"), key(TB_TORCH="cpu")
    assert reused != cpu and "preinstalled-2.4.0" in reused and "-cpu-" in cpu
    assert key(TB_TORCH="auto", installed="2.5.0") != reused
    assert key(TB_TORCH="auto") == reused
    assert f"py{sys.version_info.major}.{sys.version_info.minor}" in reused
    site = make_plan(ROOT, {"TB_EXTRAS": "site", "TB_TORCH": "bogus"}, {})
    assert "no-torch" in site.key  # the sub-actions never look at torch


def test_a_bad_torch_input_is_one_error_line_naming_the_input(tmp_path):
    done = subprocess.run([sys.executable, "-I", str(INSTALL), "plan"], capture_output=True,
                          text=True, env={**os.environ, "TB_TORCH": "torch; curl x|sh",
                                          "RUNNER_TOOL_CACHE": str(tmp_path)})
    assert done.returncode == 2
    assert done.stdout.startswith("::error title=torch-bench::Invalid value for 'torch' input")
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")
def test_the_comment_sub_action_installs_nothing_and_posts_with_the_standard_library(tmp_path):
    from fake_github import FakeGitHub

    # a Python with nothing but the standard library, as a runner's may be
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    env = {"PATH": os.environ["PATH"], "TB_EXTRAS": "comment",
           "RUNNER_TOOL_CACHE": str(tmp_path / "cache"), "GITHUB_OUTPUT": str(tmp_path / "out")}
    for step in ("plan", "create"):
        subprocess.run([python, "-I", str(INSTALL), step], env=env, check=True,
                       capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    command = Path(outputs["command"])
    assert command.is_file() and not (command.parent / "pip").exists()  # nothing installed
    report = tmp_path / "pr-report"
    report.mkdir()
    (report / "report.md").write_text("## torch-bench\n\nunchanged\n")
    (report / "pr-number.txt").write_text("7\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "json.py").write_text("raise SystemExit('the workspace was imported')\n")
    with FakeGitHub() as api:
        api.pulls[7] = {"number": 7, "head": {"sha": "a" * 40}}
        done = subprocess.run(
            [str(command), "comment"], cwd=workspace, capture_output=True, text=True,
            timeout=120, env={**env, "GITHUB_API_URL": api.url, "GITHUB_TOKEN": "ghs_test",
                              "GITHUB_REPOSITORY": "octo/bench", "TB_REPORT_DIR": str(report),
                              "TB_HEAD_SHA": "a" * 40, "PYTHONPATH": str(workspace)})
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(api.comments[7]) == 1
    assert "comment-url=" in (tmp_path / "out").read_text()
