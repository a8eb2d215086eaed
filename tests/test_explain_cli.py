"""`torch-bench explain` end to end: a real git repository whose head plants a slowdown in a
tiny model (an extra operator, a larger matmul, a forced graph break), both sides profiled
in their own processes, and the planted change named at the top of the diff."""

from __future__ import annotations

import json
import subprocess

import pytest

from support.planted_suite import source, zoo_model
from torch_bench.cli import main

SUITE = "explainwork.suite"


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit_suite(repo, text, message):
    package = repo / "explainwork"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "suite.py").write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty",
        "-m", message)


def checkouts(tmp_path, base_knobs, head_knobs, make=source):
    """The head (branch `feature`, checked out) and its base (`main`) in a second worktree."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_suite(repo, make(**base_knobs), "base")
    git(repo, "checkout", "-q", "-b", "feature")
    commit_suite(repo, make(**head_knobs), "planted change")
    base = tmp_path / "base"
    git(repo, "worktree", "add", "-q", "--detach", str(base), "main")
    return base, repo


def verdicts_file(tmp_path, kinds):
    """A `torch-bench compare --json` file with these verdicts for the planted cases."""
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"verdicts": [
        {"suite": "planted", "name": name, "params": {"device": "cpu"}, "metric": "latency",
         "verdict": kind, "ratio": 1.4} for name, kind in kinds.items()]}))
    return path


def explain(tmp_path, base, head, *extra, run_args=(), suite=SUITE):
    out = tmp_path / "out"
    code = main(["explain", "--base", str(base), "--head", str(head),
                 "--steps", "5", "--warmup", "2", "--json", str(out / "explain.json"),
                 "--markdown", str(out / "full.md"),
                 "--comment-markdown", str(out / "comment.md"), *extra, "--",
                 *(["--suite", suite] if suite else []), *run_args])
    assert code == 0
    return (json.loads((out / "explain.json").read_text()), (out / "full.md").read_text(),
            (out / "comment.md").read_text())


def top_change(item):
    return item["diff"]["changes"][0]


@pytest.mark.slow
def test_an_extra_operator_is_named_first_as_new(tmp_path):
    base, head = checkouts(tmp_path, {}, {"extra_op": True})
    found, full, comment = explain(tmp_path, base, head, run_args=["--filter", "mlp"])
    [item] = found["explained"]
    assert (top_change(item)["name"], top_change(item)["kind"]) == ("aten::sort", "new")
    assert item["diff"]["headline"].startswith("new aten::sort")
    assert "new aten&#58;&#58;sort" in comment and "<details>" in comment


@pytest.mark.slow
def test_a_larger_matmul_is_named_first_with_its_new_shapes(tmp_path):
    base, head = checkouts(tmp_path, {}, {"width": 1024})
    # only the regression of the verdicts file is profiled, not the unchanged case
    verdicts = verdicts_file(tmp_path, {"mlp": "regression", "other": "unchanged"})
    traces = tmp_path / "traces"
    found, full, _ = explain(tmp_path, base, head, "--verdicts", str(verdicts),
                             "--trace-dir", str(traces))
    [item] = found["explained"]
    assert (item["name"], item["verdict"]) == ("mlp", "regression")
    change = top_change(item)
    assert (change["name"], change["kind"]) == ("aten::addmm", "grew")
    assert change["relative"] > 1  # eight times the work: far more than twice the time
    shapes = {part["shapes"]: part["kind"] for part in change["by_shape"]}
    assert shapes["[[1024], [64, 128], [128, 1024], [], []]"] == "new"
    assert shapes["[[128], [64, 128], [128, 128], [], []]"] == "vanished"
    assert item["diff"]["headline"].startswith("aten::addmm +")
    for side in ("base", "head"):  # Chrome traces, loadable as Perfetto loads them
        trace = json.loads((traces / f"01-planted-mlp-{side}.json").read_text())
        assert any(e.get("name") == "aten::addmm" for e in trace["traceEvents"])
    assert "01-planted-mlp-head.json" in full


@pytest.mark.slow
def test_a_forced_graph_break_is_named_first(tmp_path):
    base, head = checkouts(tmp_path, {"compile": True}, {"compile": True, "graph_break": True})
    found, full, comment = explain(tmp_path, base, head, run_args=["--filter", "mlp"])
    [item] = found["explained"]
    assert item["diff"]["headline"].startswith("graph breaks 0 → 1")
    assert item["diff"]["head_compilation"]["graph_breaks"] >= 1
    assert item["diff"]["base_compilation"]["graph_breaks"] == 0
    assert "graph_break()" in item["diff"]["head_compilation"]["break_reasons"][0][0]
    assert "graph breaks on the head" in full
    assert comment.count("graph breaks 0 → 1") == 1


@pytest.mark.slow
def test_the_compile_suite_profiles_the_compiled_runtime_of_a_flagged_speedup(tmp_path):
    base, head = checkouts(tmp_path, {}, {"graph_break": True}, make=zoo_model)
    verdicts = tmp_path / "verdicts.json"
    params = {"mode": "inference", "backend": "eager", "compile_mode": "default",
              "device": "cpu", "dtype": "float32", "amp": False, "batch_size": None,
              "check": "performance"}
    verdicts.write_text(json.dumps({"verdicts": [
        {"suite": "compile", "name": "planted", "params": params, "metric": "speedup",
         "verdict": "regression", "ratio": 0.7}]}))
    found, full, _ = explain(tmp_path, base, head, "--verdicts", str(verdicts), suite=None,
                             run_args=["--suite", "compile",
                                       "--models", "planted=explainwork.suite:mlp",
                                       "--backend", "eager", "--check", "performance",
                                       "--modes", "inference"])
    [item] = found["explained"]
    assert item["diff"]["window"] == "latency (compiled)"
    assert item["diff"]["headline"].startswith("graph breaks 0 → 1")


@pytest.mark.slow
def test_a_case_failing_on_one_side_is_reported_not_explained(tmp_path):
    base, head = checkouts(tmp_path, {"fail": True}, {})
    found, full, comment = explain(tmp_path, base, head, run_args=["--filter", "mlp"])
    [item] = found["explained"]
    assert item["diff"] is None and list(item["errors"]) == ["base"]
    assert "RuntimeError: this side cannot build the model" in item["errors"]["base"]
    assert "not explained" in comment
    assert "base: no profile (RuntimeError&#58; this side cannot build the model)" in full


@pytest.mark.slow
def test_a_spent_budget_says_which_cases_it_skipped(tmp_path):
    base, head = checkouts(tmp_path, {}, {"width": 512})
    verdicts = verdicts_file(tmp_path, {"mlp": "regression", "other": "regression"})
    found, full, comment = explain(tmp_path, base, head, "--verdicts", str(verdicts),
                                   "--budget", "0.001")
    assert [i["name"] for i in found["explained"]] == ["mlp"]
    assert [s["name"] for s in found["skipped"]] == ["other"]
    assert "Not profiled, the explain budget (0.001 s) being spent: planted/other" in full
    assert "planted/other" in comment


def test_no_flagged_benchmark_profiles_nothing(tmp_path, capsys):
    base, head = checkouts(tmp_path, {}, {"width": 512})
    verdicts = verdicts_file(tmp_path, {"mlp": "unchanged", "other": "inconclusive"})
    found, full, comment = explain(tmp_path, base, head, "--verdicts", str(verdicts))
    assert found["explained"] == [] and found["skipped"] == []
    assert "No regression or improvement to explain." in full
    assert comment == ""
    assert "no regression or improvement to explain" in capsys.readouterr().err


def test_bad_input_is_one_line_and_status_2(tmp_path, capsys):
    base, head = checkouts(tmp_path, {}, {})
    bad = tmp_path / "bad.json"
    bad.write_text('{"verdicts": 3}')
    for argv in (["--verdicts", str(bad)], ["--steps", "0"], ["--budget", "-1"]):
        try:
            status = main(["explain", "--base", str(base), "--head", str(head), *argv, "--",
                           "--suite", SUITE])
        except SystemExit as refused:  # a bound the flag's own type checks: argparse's usage
            assert refused.code == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert err[-1].startswith("torch-bench explain: error: argument " + argv[0])
            continue
        assert status == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("torch-bench: error:")
    assert main(["explain", "--base", str(tmp_path / "nowhere"), "--head", str(head), "--",
                 "--suite", SUITE]) == 2
    assert main(["explain", "--base", str(base), "--head", str(head), "--", "--suite",
                 "nosuchsuite"]) == 2
