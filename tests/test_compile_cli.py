"""The compile and training suites end to end: `torch-bench run` in a subprocess."""

import pytest

from torch_bench.results.document import load_run

CONFIG = """
skip:
  all: [resnet18]
  device: {cpu: [lstm], cuda: []}
  training: [mlp]
  control_flow: [branchy]
batch_size: {mlp: 4}
tolerance:
  default: 1.0e-4
  higher: 1.0e-3
  even_higher: 1.0e-2
  dtype: {bfloat16: 2.0e-2}
  cosine_threshold: 0.99
  fp64_reference: true
  classes: {higher: [mlp], even_higher: [], cosine: []}
slow: [tiny_bert]
non_deterministic: [noisy]
"""
SUPPORT = "support.zoo_models"
FAST = ["--max-time", "0.2", "--min-repeats", "3", "--max-repeats", "10", "--warmup", "1"]


def test_compile_suite_reports_every_status(cli, tmp_path, child_can_import_support):
    (tmp_path / "compile.yaml").write_text(CONFIG)
    models = ["mlp", "lstm", "tiny_bert", "resnet18", f"{SUPPORT}:perturbed",
              f"{SUPPORT}:broken", f"{SUPPORT}:crashing", f"{SUPPORT}:restless",
              f"branchy={SUPPORT}:crashing", f"{SUPPORT}:hungry"]
    cli("run", "--suite", "compile", "--compile-config", "compile.yaml", "--backend",
        "aot_eager", "--modes", "inference", "--models", ",".join(models), *FAST,
        "--out", "r.json", check=True)
    run = load_run(tmp_path / "r.json")  # validated against the schema
    speedup = {r.name: r for r in run.results if r.metric == "speedup"}
    assert {name: r.status for name, r in speedup.items()} == {
        "mlp": "pass", "lstm": "skipped", "tiny_bert": "skipped",
        "resnet18": "skipped", "perturbed": "fail_accuracy", "broken": "model_fail_to_load",
        "crashing": "fail_to_run", "restless": "eager_two_runs_differ", "branchy": "skipped",
        "hungry": "oom", "summary": "ok"}
    assert speedup["mlp"].params["batch_size"] == 4
    summary = {r.metric: r for r in run.results if r.name == "summary"}
    assert set(summary) == {"speedup", "pass_rate", "compile_time", "memory_ratio"}
    assert summary["pass_rate"].summary.median == pytest.approx(1 / 6)  # mlp passed, of six
    assert summary["speedup"].summary.median == pytest.approx(speedup["mlp"].summary.median)
    assert summary["speedup"].params == {"mode": "inference", "backend": "aot_eager",
                                         "device": "cpu"}
    assert run.config["options"]["compile"]["compile_config"].endswith("compile.yaml")


def test_sharded_run_records_its_shard(cli, tmp_path):
    models = ["mlp", "lstm", "tiny_bert", "tiny_gpt2", "tiny_t5", "resnet18"]
    (tmp_path / "skip.yaml").write_text(f"skip: {{all: [{', '.join(models)}]}}\n")
    shards = []
    for part in (0, 1):
        args = ["run", "--suite", "compile", "--compile-config", "skip.yaml", "--modes",
                "inference", "--total-partitions", "2", "--partition-id", str(part)]
        shards.append(cli(*args, "--dry-run", check=True).stdout.splitlines())
        if part == 1:
            cli(*args, "--out", "r.json", check=True)
    assert sorted(line.split()[0] for shard in shards for line in shard) == \
        sorted(f"compile/{m}" for m in models)
    assert all(len(shard) == 3 for shard in shards)
    run = load_run(tmp_path / "r.json")
    assert run.ci["shard"] == "1/2"
    assert {r.name for r in run.results if r.name != "summary"} == \
        {line.split()[0].split("/")[1] for line in shards[1]}
    assert {r.status for r in run.results if r.name != "summary"} == {"skipped"}


def test_bad_compile_configuration_is_one_line(cli, tmp_path):
    (tmp_path / "c.yaml").write_text("tolerance: {classes: {higher: [mlp, 7]}}\n")
    done = cli("run", "--suite", "compile", "--compile-config", "c.yaml", "--dry-run")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("c.yaml: tolerance.classes.higher[1]: expected a model "
                                        "name, got 7")


def test_training_suite_writes_loss_curves_and_a_verdict(cli, tmp_path):
    cli("run", "--suite", "training", "--backend", "eager", "--epochs", "2", "--samples", "32",
        "--batch-size", "16", "--optimizer", "sgd", "--lr", "0.05", "--out", "r.json",
        check=True)
    run = load_run(tmp_path / "r.json")
    losses = {r.params["runtime"]: r for r in run.results if r.metric == "loss"}
    assert set(losses) == {"native", "compiled"}
    assert all(len(r.extra["loss_curve"]) == 4 for r in losses.values())
    (verdict,) = [r for r in run.results if r.metric == "loss_ratio"]
    assert verdict.status == "pass" and verdict.unit == "ratio"
