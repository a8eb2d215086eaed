"""`--preset`: every default a seed tool's own, printed at the start, under `--config` and
flags; and Hugging Face's outputs straight from `torch-bench run` (its CSV files with its
environment keys, its environment block, a log file)."""

from __future__ import annotations

import csv

import pytest

from torch_bench.cli import build_parser
from torch_bench.cli.run import config_from_args
from torch_bench.presets import PRESETS


def config(*argv: str):
    return config_from_args(build_parser(["run"]).parse_args(["run", *argv])).describe()


def options(described: dict, suite: str) -> dict:
    return described["options"][suite]


def test_each_preset_sets_its_seeds_defaults():
    hf = config("--preset", "hf")
    assert hf["suites"] == ["transformers"]
    assert options(hf, "transformers")["seq_lengths"] == [8, 32, 128, 512]
    assert options(hf, "transformers")["mode"] == ["inference"]
    assert options(hf, "transformers")["statistic"] == "min"
    fastrnns = config("--preset", "fastrnns")
    assert fastrnns["suites"] == ["rnns", "cnns"] and fastrnns["device"] == "cuda"
    assert (fastrnns["timing"]["warmup"], fastrnns["timing"]["nloops"]) == (10, 100)
    assert fastrnns["processes"] == 1  # fastrnns times in one process
    dynamo = config("--preset", "dynamo")
    assert dynamo["suites"] == ["compile"] and dynamo["timing"]["max_repeats"] == 30
    assert dynamo["isolation"]["timeout_s"] == pytest.approx(2000)
    training = options(config("--preset", "training"), "training")
    assert (training["epochs"], training["samples"], training["batch_size"]) == (10, 1000, [8])
    assert training["lr"] == pytest.approx(5e-5) and training["loss_rule"] == "seed"


def test_without_a_preset_our_defaults_hold():
    ours = options(config("--suite", "transformers"), "transformers")
    assert ours["seq_lengths"] == [8, 32, 128] and ours["mode"] == ["inference", "train"]
    training = options(config("--suite", "training"), "training")
    assert (training["epochs"], training["samples"], training["batch_size"]) == (3, 512, [32])
    assert config("--suite", "rnns")["timing"]["warmup"] == 3


def test_flags_and_the_config_file_win_over_the_preset(tmp_path):
    (tmp_path / "c.yaml").write_text("timing: {warmup: 4}\noptions:\n  rnns: {sep: '|'}\n")
    mixed = config("--preset", "fastrnns", "--config", str(tmp_path / "c.yaml"),
                   "--device", "cpu", "--nloops", "7")
    assert mixed["device"] == "cpu" and mixed["timing"]["warmup"] == 4
    assert mixed["timing"]["nloops"] == 7 and options(mixed, "rnns")["sep"] == "|"
    assert options(config("--preset", "training", "--epochs", "2"), "training")["epochs"] == 2
    assert config("--preset", "hf", "--suite", "rnns")["suites"] == ["rnns"]


def test_an_unknown_preset_names_the_known_ones(cli):
    done = cli("run", "--preset", "torchbench")
    assert done.returncode == 2
    assert all(name in done.stderr for name in PRESETS)


def test_a_preset_is_printed_first_and_its_gpu_default_says_what_to_pass(cli):
    done = cli("run", "--preset", "fastrnns", "--dry-run")
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first.startswith("preset fastrnns") and "nloops 100" in first
    assert "--device cpu" in done.stderr.splitlines()[-1]  # no GPU here: the way out


def test_hf_outputs_straight_from_run(cli, tmp_path):
    done = cli("run", "--preset", "hf", "--models", "tiny-bert", "--batch_sizes", "1",
               "--sequence_lengths", "8", "--threads", "1", "--processes", "1",
               "--max-time", "0.2", "--min-repeats", "3", "--max-repeats", "10",
               "--no-preflight", "--hf-csv", "hf", "--env_print", "--log-file", "run.log",
               check=True)
    assert done.stderr.startswith("preset hf")
    rows = list(csv.DictReader((tmp_path / "hf" / "inference_time.csv").open()))
    assert [(r["model"], r["sequence_length"]) for r in rows] == [("tiny-bert", "8")]
    env = dict(csv.reader((tmp_path / "hf" / "env.csv").open()))
    for key in ("python_version", "date", "time", "fp16", "use_torchscript", "cpu_ram_mb",
                "framework_version", "use_gpu"):
        assert key in env, key
    assert env["fp16"] == "False" and env["architecture"] == "N/A"
    assert "ENVIRONMENT INFORMATION" in done.stdout and "- python_version: " in done.stdout
    log = (tmp_path / "run.log").read_text()
    assert "ENVIRONMENT INFORMATION" in log and "tiny-bert" in log
    refused = cli("run", "--suite", "rnns", "--hf-csv", "hf2", "--dry-run")
    assert refused.returncode == 2 and "--suite transformers" in refused.stderr
