"""Hugging Face's --no_speed, --no_memory and --no_multi_process for the transformers suite,
with real tiny models."""

import json

import pytest

from torch_bench.cli import main
from torch_bench.errors import UserError
from torch_bench.execute.worker import run_request
from torch_bench.formats.hf_csv_files import hf_csv_files
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import Result, new_run
from torch_bench.suites import get_suite

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=3, max_time_s=0.1)
SUITE = get_suite("transformers")


def plan(**overrides):
    options = {o.name: o.default for o in SUITE.options} | {
        "models": ("tiny-bert",), "batch_size": (2,), "seq_lengths": (8,),
        "mode": ("inference",)} | overrides
    return SUITE.plan(options, "cpu")


def run_in_worker(**overrides):
    """The case as the worker process runs it (memory figures added by the worker)."""
    (case,) = plan(**overrides)
    return run_request({"case": case.to_dict(), "device": "cpu", "threads": None,
                        "policy": FAST.__dict__})


def test_no_speed_records_memory_without_timing():
    results = run_in_worker(no_speed=True)
    assert [r.metric for r in results] == ["peak_rss"]
    assert results[0].ok and results[0].summary.max > 0
    assert results[0].extra["model_class"] == "BertModel"


def test_no_speed_keeps_the_memory_trace_on_the_memory_result():
    (peak,) = run_in_worker(no_speed=True, trace_memory=True, trace_top=3)
    trace = peak.extra["memory_trace"]
    assert trace["sequential"] and trace["cumulative_top"]
    files = hf_csv_files(new_run([peak]))
    assert "inference_time.csv" not in files and "inference_memory.csv" in files
    assert "Line by line memory consumption:" in files["memory_trace.txt"]
    assert "Total memory increase: " in files["memory_trace.txt"]


def test_no_memory_times_without_memory_figures():
    results = run_in_worker(no_memory=True)
    assert {r.metric for r in results} == {"latency", "throughput", "token_throughput"}
    assert "inference_memory.csv" not in hf_csv_files(new_run(results))


@pytest.mark.parametrize("overrides, words", [
    ({"no_speed": True, "no_memory": True}, "nothing is left to measure"),
    ({"no_memory": True, "trace_memory": True}, "--trace-memory with --no-memory"),
])
def test_switches_that_leave_nothing_coherent_are_refused(overrides, words):
    with pytest.raises(UserError, match=words):
        plan(**overrides)


@pytest.mark.slow
def test_no_multi_process_runs_the_case_in_the_calling_process(tmp_path, monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        # --threads is applied by whichever process runs the case: here, this one
        status = main(["run", "--suite", "transformers", "--models", "tiny-bert",
                       "--batch-size", "1", "--seq-lengths", "8", "--mode", "inference",
                       "--no-multi-process", "--no-speed", "--threads", "1",
                       "--no-preflight", "--out", "r.json"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    assert status == 0
    document = json.loads((tmp_path / "r.json").read_text())
    results = [Result.from_dict(r) for r in document["results"]]
    peak = next(r for r in results if r.metric == "peak_rss")
    assert peak.ok and peak.extra["multi_process"] is False
