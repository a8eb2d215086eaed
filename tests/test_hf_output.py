"""Hugging Face benchmark users get HF's figures on request: the model class HF would build
(recorded), HF's statistic, and HF's CSV files in HF's units."""

import csv
import io
import json

import pytest

from torch_bench.formats.hf_csv_files import hf_csv_files
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import failed, measured, new_run
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=3, max_time_s=0.1)
SUITE = get_suite("transformers")


def run_one(**overrides):
    options = {o.name: o.default for o in SUITE.options} | {
        "batch_size": (2,), "seq_lengths": (8,)} | overrides
    (case,) = SUITE.plan(options, "cpu")
    return SUITE.run_case(case, CaseContext("cpu", FAST))


def test_inference_builds_the_bare_model_where_the_config_names_no_class_as_hf():
    latency = run_one(models=("tiny-bert",), mode=("inference",))[0]
    assert latency.params["head"] == "auto" and latency.extra["model_class"] == "BertModel"
    trained = run_one(models=("tiny-bert",), mode=("train",))[0]
    assert trained.params["head"] == "lm"  # HF trains the model with its LM head
    assert trained.extra["model_class"] != "BertModel"
    asked = run_one(models=("tiny-bert",), mode=("inference",), head="lm")[0]
    assert asked.extra["model_class"] != "BertModel"


def test_inference_builds_the_class_the_config_names(tmp_path):
    config = {"model_type": "bert", "architectures": ["BertForSequenceClassification"],
              "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 1,
              "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 32}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    latency = run_one(models=(str(path),), mode=("inference",))[0]
    assert latency.extra["model_class"] == "BertForSequenceClassification"


def test_the_statistic_asked_for_is_recorded_with_every_sample_kept():
    latency = run_one(models=("tiny-gpt2",), mode=("inference",), statistic="min")[0]
    assert latency.extra["statistic"] == "min" and len(latency.samples) == 3


def transformers_result(metric, samples, mode="inference", seq=8, status=None, **extra):
    params = {"model": "tiny-bert", "batch_size": 2, "sequence_length": seq, "mode": mode}
    if status:
        return failed("transformers", "tiny-bert", metric, status, "too long", params=params)
    return measured("transformers", "tiny-bert", metric, samples, params=params, extra=extra)


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_hf_csv_files_one_per_kind_in_hf_units_and_statistic():
    run = new_run([
        transformers_result("latency", [4.0, 2.0, 9.0], statistic="min"),
        transformers_result("latency", [], seq=512, status="skipped"),
        transformers_result("peak_rss", [300.4, 310.6]),
        transformers_result("latency", [10.0, 20.0, 30.0], mode="train", statistic="median"),
    ], env={"torch": "2.13.0", "python": "3.11.2", "gpus": [{"name": "x"}]})
    files = hf_csv_files(run)
    assert set(files) == {"inference_time.csv", "inference_memory.csv", "train_time.csv",
                          "env.csv"}
    assert rows(files["inference_time.csv"]) == [
        ["model", "batch_size", "sequence_length", "result"],
        ["tiny-bert", "2", "8", "0.002"],  # the fastest repeat, in seconds
        ["tiny-bert", "2", "512", "N/A"]]
    assert rows(files["train_time.csv"])[1][3] == "0.02"
    assert rows(files["inference_memory.csv"])[1] == ["tiny-bert", "2", "8", "311"]  # MB
    assert ["torch", "2.13.0"] in rows(files["env.csv"])
    overridden = hf_csv_files(run, statistic="mean")
    assert rows(overridden["inference_time.csv"])[1][3] == "0.005"


def test_export_writes_the_hf_csv_set(tmp_path, cli):
    document = tmp_path / "r.json"
    document.write_text(json.dumps(new_run(
        [transformers_result("latency", [4.0, 2.0], statistic="min")]).to_dict()))
    done = cli("export", str(document), "--hf-csv", "hf", "--statistic", "median", check=True)
    assert "inference_time.csv" in done.stderr
    assert rows((tmp_path / "hf" / "inference_time.csv").read_text())[1][3] == "0.003"
    assert (tmp_path / "hf" / "env.csv").exists()
    lonely = cli("export", str(document), "--statistic", "min")
    assert lonely.returncode == 2 and "--hf-csv" in lonely.stderr


@pytest.mark.parametrize("statistic", ["p90", ""])
def test_an_unknown_statistic_is_refused(statistic):
    from torch_bench.config import build_run_config
    from torch_bench.errors import UserError

    with pytest.raises(UserError, match="statistic"):
        build_run_config(suites=["transformers"], cli_options={"statistic": statistic})


def test_the_memory_trace_follows_the_modules_asked_for():
    latency = run_one(models=("tiny-bert",), mode=("train",), trace_memory=True, trace_top=5,
                      trace_modules=("torch.nn",))[0]
    trace = latency.extra["memory_trace"]
    assert trace["modules"] == ["torch.nn"] and trace["lines_traced"] > 0
    assert trace["top"] and all("/torch/nn/" in entry["file"] for entry in trace["top"])
    missing = run_one(models=("tiny-bert",), mode=("inference",), trace_memory=True,
                      trace_modules=("no_such_package",))[0]
    assert missing.status == "error" and "no_such_package" in missing.error
