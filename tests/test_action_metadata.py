"""action.yml, the workflows and the README agree with each other and pass the linters."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from torch_bench.action.inputs import INPUTS, read_inputs
from torch_bench.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
ACTION_FILES = sorted([ROOT / "action.yml", *ROOT.glob("*/action.yml")])
WORKFLOWS = sorted([*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "examples").glob(
    "*.yml")])
BIN = Path(sys.executable).parent


def action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def tool(name):
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, f"{name} is not installed (it is in the test extras)"
    return found


def test_actionlint_passes_on_every_workflow():
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([tool("actionlint"), "-config-file", ".github/actionlint.yaml",
                           *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("persona", ["regular", "pedantic"])
def test_zizmor_passes_on_the_action_and_every_workflow(persona):
    # What is ignored (inline) or allowed (.github/zizmor.yml) is justified in the README.
    done = subprocess.run([tool("zizmor"), "--offline", "--config", ".github/zizmor.yml",
                           "--persona", persona, *map(str, ACTION_FILES), *map(str, WORKFLOWS)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings" in done.stdout + done.stderr


def run_blocks(document):
    """Every `run:` script in an action or workflow file."""
    steps = list(document.get("runs", {}).get("steps", []))
    for job in (document.get("jobs") or {}).values():
        steps.extend(job.get("steps", []))
    return [step["run"] for step in steps if "run" in step]


@pytest.mark.parametrize("path", ACTION_FILES + WORKFLOWS, ids=lambda p: p.name)
def test_no_expression_is_interpolated_into_a_script(path):
    for script in run_blocks(yaml.safe_load(path.read_text())):
        assert "${{" not in script, f"{path.name}: use env: instead of ${{{{ }}}} in run:"


def test_every_input_reaches_the_script_through_its_variable():
    meta = action()
    declared = {name for name in meta["inputs"] if name != "github-token"}
    assert declared == {spec.name for spec in INPUTS}
    env = next(s["env"] for s in meta["runs"]["steps"] if s.get("id") == "bench")
    for spec in INPUTS:
        assert env[spec.variable] == f"${{{{ inputs.{spec.name} }}}}"
        assert meta["inputs"][spec.name]["default"] == spec.default, spec.name
    assert env["GITHUB_TOKEN"] == "${{ inputs.github-token }}"


def test_every_input_and_output_is_described():
    meta = action()
    for section in ("inputs", "outputs"):
        for name, spec in meta[section].items():
            assert len(spec.get("description", "")) > 15, f"{section}.{name}"
    assert meta["branding"]["icon"] and meta["runs"]["using"] == "composite"


def readme_table(header):
    text = (ROOT / "README.md").read_text()
    start = text.index(header)
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_readme_tables_agree_with_action_yml():
    meta = action()
    inputs = readme_table("| input | default | description |")
    assert [r[0].strip("`") for r in inputs] == list(meta["inputs"])
    for name, default, description in inputs:
        spec = meta["inputs"][name.strip("`")]
        assert default == (f"`{spec['default']}`" if spec["default"] else "(empty)"), name
        assert description == spec["description"], name
    outputs = readme_table("| output | description |")
    assert {r[0].strip("`"): r[1] for r in outputs} == {
        k: v["description"] for k, v in meta["outputs"].items()}


def test_bad_inputs_are_named_as_the_workflow_wrote_them():
    assert read_inputs({})["device"] == "cuda"
    for variable, value, message in [
        ("TB_COMMENT", "sometimes", "Invalid value for 'comment' input: 'sometimes'"),
        ("TB_DEVICE", "tpu", "Invalid value for 'device' input"),
        ("TB_MIN_EFFECT", "5", "Invalid value for 'min-effect' input"),
        ("TB_DATA_FOLDER", "../up", "Invalid value for 'data-folder' input"),
        ("TB_DATA_BRANCH", "a..b", "Invalid value for 'data-branch' input"),
        ("TB_PARTITION_ID", "4", "Invalid value for 'partition-id' input"),
    ]:
        with pytest.raises(UserError, match=re.escape(message)):
            read_inputs({variable: value})


@pytest.mark.parametrize("folder, table", [("dashboard", "SITE_INPUTS"),
                                           ("comment", "COMMENT_INPUTS")])
def test_sub_actions_pass_their_inputs_through_env(folder, table):
    MODES = {"dashboard": "site", "comment": "comment"}
    from torch_bench.action import inputs as module

    meta = yaml.safe_load((ROOT / folder / "action.yml").read_text())
    specs = getattr(module, table)
    assert {n for n in meta["inputs"] if n != "github-token"} == {s.name for s in specs}
    step = meta["runs"]["steps"][-1]
    assert step["run"] == f'"$TB_COMMAND" {MODES[folder]}'
    assert step["env"]["TB_COMMAND"] == "${{ steps.setup.outputs.command }}"
    for spec in specs:
        assert step["env"][spec.variable] == f"${{{{ inputs.{spec.name} }}}}"
        if not meta["inputs"][spec.name].get("required"):
            assert meta["inputs"][spec.name]["default"] == spec.default, spec.name


def uses_of(document):
    steps = list(document.get("runs", {}).get("steps", []))
    return [step["uses"] for step in steps if "uses" in step]


@pytest.mark.parametrize("path", ACTION_FILES, ids=lambda p: p.parent.name or p.name)
def test_the_composite_actions_pin_every_action_they_use_by_commit(path):
    # A workflow that pins this action by commit must not run a moving tag underneath.
    uses = uses_of(yaml.safe_load(path.read_text()))
    assert uses, path
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"{path}: {ref}"
    for line in path.read_text().splitlines():
        if "uses:" in line:
            assert re.search(r"@[0-9a-f]{40}\s+# v\d+\.\d+\.\d+$", line), line


def test_the_config_file_sets_suites_and_device_unless_the_workflow_sets_them(tmp_path):
    config = tmp_path / "bench.yml"
    config.write_text("suites: [cnns, training]\ndevice: cpu\n")
    from_file = read_inputs({"TB_CONFIG": str(config)})
    assert (from_file["suites"], from_file["device"]) == ("cnns,training", "cpu")
    given = read_inputs({"TB_CONFIG": str(config), "TB_SUITES": "rnns", "TB_DEVICE": "cuda:1"})
    assert (given["suites"], given["device"]) == ("rnns", "cuda:1")
    assert (read_inputs({})["suites"], read_inputs({})["device"]) == ("rnns", "cuda")
    config.write_text("device: tpu\n")
    with pytest.raises(UserError, match="device: 'tpu'"):
        read_inputs({"TB_CONFIG": str(config)})


def test_the_install_step_plans_the_torch_build_for_the_config_file_device(tmp_path):
    from torch_bench.action.install import planned_device, resolve_torch

    config = tmp_path / "bench.yml"
    config.write_text("suites: [rnns]\ndevice: 'cpu'  # a laptop-sized runner\n")
    assert planned_device({"TB_CONFIG": str(config), "TB_DEVICE": ""}) == "cpu"
    assert resolve_torch("auto", planned_device({"TB_CONFIG": str(config)}), None).label == "cpu"
    assert planned_device({"TB_CONFIG": str(config), "TB_DEVICE": "cuda"}) == "cuda"
    assert planned_device({}) == "cuda"


def test_the_cli_and_the_action_default_to_one_data_folder(tmp_path, monkeypatch, capsys):
    from torch_bench.cli import build_parser, main

    def parsed(*argv):
        return build_parser(list(argv)).parse_args(list(argv))

    monkeypatch.chdir(tmp_path)
    folder = action()["inputs"]["data-folder"]["default"]
    assert parsed("store", "results.json").folder == folder
    assert parsed("site", "--data", "d", "--out", "s", "--publish").folder == folder
    assert parsed("data", "list").data == folder
    # A history in the CLI's old default folder is pointed at, not silently ignored.
    (tmp_path / "data" / "runs").mkdir(parents=True)
    with pytest.raises(SystemExit) as exit_:
        main(["data", "list"])
    assert exit_.value.code == 2 and "pass --data data" in capsys.readouterr().err


def test_every_other_action_is_pinned_by_commit_in_the_readme_examples_and_workflows():
    # A user's zizmor, with its defaults, flags any tag; only this action's own `@v1` (no
    # release hash to give before a release) is left to the user to pin (docs/action.md).
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for path in [*ACTION_FILES, *WORKFLOWS, *pages]:
        for line in path.read_text().splitlines():
            found = re.search(r"^\s*-?\s*uses: (\S+)", line)
            if not found or found.group(1).startswith(("torch-bench/", "./", "<")):
                continue
            assert re.search(r"@[0-9a-f]{40}\s+# v\d+\.\d+\.\d+$", line), f"{path.name}: {line}"


def test_the_cache_runs_on_node_24():
    for path in ACTION_FILES:
        for ref in uses_of(yaml.safe_load(path.read_text())):
            if ref.startswith("actions/cache@"):
                assert "# v5." in next(line for line in path.read_text().splitlines()
                                       if ref in line), path
