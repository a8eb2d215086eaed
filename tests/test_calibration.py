"""Calls per sample are calibrated once and reused from history, so every run of a benchmark
times the same loop."""

import json
from dataclasses import replace

from conftest import TINY_RNN
from support.runs import make_run, ok, untrusted
from torch_bench.action.inputs import read_inputs
from torch_bench.action.stages import Paths, produce_results
from torch_bench.execute.calibration import recorded_loops
from torch_bench.results.document import load_run


def with_loops(name, loops):
    return replace(ok(name, 1.0), extra={"loops": loops})


def test_the_latest_trusted_run_on_this_environment_gives_the_count():
    older = make_run([with_loops("a", 4), with_loops("b", 6)], created_at="2026-01-01T00:00:00Z")
    newer = make_run([with_loops("a", 8)], created_at="2026-01-02T00:00:00Z")
    distrusted = untrusted(make_run([with_loops("a", 99)], created_at="2026-01-03T00:00:00Z"))
    elsewhere = make_run([with_loops("b", 77)], created_at="2026-01-04T00:00:00Z",
                         env={"fingerprint": "another-machine"})
    counts = recorded_loops([newer, distrusted, older, elsewhere], "fp-test-0001")
    assert counts == {"demo/a[]:latency": 8, "demo/b[]:latency": 6}
    assert recorded_loops([older], None) == {}
    earlier_format = make_run([replace(ok("c", 1.0), extra={"calls_per_sample": 12})])
    assert recorded_loops([earlier_format], "fp-test-0001") == {"demo/c[]:latency": 12}


def test_the_action_run_reuses_the_count_recorded_in_its_history(cli, tmp_path):
    trusting = ["--cpu-busy-limit", "100000"]  # the outcome must not depend on the load
    cli("run", "--suite", "rnns", "--variants", "aten", *TINY_RNN, *trusting,
        "--out", "first.json", check=True)
    document = json.loads((tmp_path / "first.json").read_text())
    forward = next(r for r in document["results"] if r["metric"] == "forward_time")
    assert isinstance(forward["extra"]["loops"], int)
    forward["extra"]["loops"] = 500  # far above what calibration picks for 1 ms blocks
    (tmp_path / "first.json").write_text(json.dumps(document))
    cli("store", "first.json", "--to-folder", "data", check=True)

    # The Action's run stage, given the data folder it read before running.
    inputs = read_inputs({"TB_SUITES": "rnns", "TB_DEVICE": "cpu", "TB_RUN_ARGS": " ".join(
        ["--variants", "aten", *TINY_RNN, *trusting, "--processes", "2"])})
    produced = produce_results(inputs, Paths(tmp_path / "action"), tmp_path / "data")
    second = {r.metric: r for r in load_run(produced).results}
    assert second["forward_time"].extra["loops"] == 500
    assert len(second["forward_time"].extra["process_sizes"]) == 2
    assert second["backward_time"].extra["loops"] == 1  # one backward per forward, always


def test_a_missing_calibration_source_is_a_usage_error(cli):
    done = cli("run", "--suite", "rnns", "--variants", "aten", *TINY_RNN,
               "--calibration", "nowhere")
    assert done.returncode == 2
    assert "--calibration: nowhere: no such run document or data folder" in done.stderr
