import json

from conftest import TINY_RNN
from torch_bench.results.document import load_run

FAST = ["--max-time", "0.1", "--min-repeats", "3", "--max-repeats", "3", "--warmup", "1",
        "--processes", "1"]  # one worker process per case: one peak RSS figure per case
# A BERT whose embedding alone wants 16 GB: it cannot be built under the memory limit.
HUGE_CONFIG = {"model_type": "bert", "vocab_size": 2**25, "hidden_size": 128,
               "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 128}


def test_transformers_run_reports_oom_and_goes_on_with_the_grid(cli, tmp_path):
    (tmp_path / "huge.json").write_text(json.dumps(HUGE_CONFIG))
    done = cli("run", "--suite", "transformers", "--models", "./huge.json,tiny-t5",
               "--batch-sizes", "2", "--seq-lengths", "8", "--mode", "train",
               "--memory-limit-mb", "4000", *FAST, "--out", "r.json", "--oss", "oss.json",
               "--aipep", "a.txt", "--csv", "r.csv", check=True)
    run = load_run(tmp_path / "r.json")
    status = {(r.name, r.metric): r.status for r in run.results}
    assert status[("./huge.json", "latency")] == "oom"
    assert status[("tiny-t5", "latency")] == "ok" and status[("tiny-t5", "peak_rss")] == "ok"
    assert " TRAIN - LATENCY - RESULT " in done.stdout
    assert "./huge.json" in done.stdout and "N/A (oom)" in done.stdout
    oss = json.loads((tmp_path / "oss.json").read_text())
    assert set(oss) == {"transformers-latency"}  # time only: consumers read values as ms
    assert len((tmp_path / "a.txt").read_text().splitlines()) == 3  # the latency samples
    assert "tiny-t5,2,8," in (tmp_path / "r.csv").read_text()


def test_rnns_and_cnns_in_one_run_export_fastrnns_groups(cli, tmp_path):
    cli("run", "--suite", "rnns,cnns", "--variants", "jit_premul,vl_py", "--cnns", "resnet18_jit",
        "--image-size", "32", *TINY_RNN, "--out", "r.json", "--oss", "oss.json", check=True)
    oss = json.loads((tmp_path / "oss.json").read_text())
    assert {g: sorted(names) for g, names in oss.items()} == {
        "lstm": ["jit_premul"], "lstm-backward": ["jit_premul"],
        "vl_lstm": ["vl_py"], "vl_lstm-backward": ["vl_py"],
        "resnet": ["resnet18_jit"], "resnet-backward": ["resnet18_jit"]}
    assert {r.status for r in load_run(tmp_path / "r.json").results} == {"ok"}


def test_a_missing_model_configuration_is_a_usage_error(cli):
    done = cli("run", "--suite", "transformers", "--models", "./nope/config.json")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "torch-bench: error: config: options.transformers.models: ./nope/config.json: "
        "no such configuration file or folder"]
