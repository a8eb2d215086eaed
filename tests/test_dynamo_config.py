"""PyTorch dynamo users bring their own `torchbench.yaml` as it is: its layout is read (the
file below copies the structure of benchmarks/dynamo/torchbench.yaml: per-mode batch sizes,
tolerance lists, anchors, nested lists and keys this project has no use for), its tolerance
table is dynamo's, and the compile suite offers dynamo's accuracy-only, performance-only and
`--cosine` modes and its per-model CSV."""

import csv
import io

import pytest

from torch_bench.errors import UserError
from torch_bench.formats import exporter
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import measured, new_run
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext
from torch_bench.zoo.config_files import load_compile_config

DYNAMO_STYLE_YAML = """\
# per-mode batch sizes
batch_size:
  training:
    big_model: 4
    mlp: 2
  inference:
    big_model: 32

dont_change_batch_size:
  - demucs_like

tolerance:
  higher:
    - wide_net
  even_higher:
    - noisy_net
    - flaky_net
  higher_fp16:
    - half_net
  higher_bf16:
    - brain_net
  higher_bf16_xpu:
    - xpu_net
  freezing:
    even_higher:
      - frozen_net
  cosine: []
  use_iou_for_bool_masks:
    - mask_net
  iou_thresholds:
    mask_net: 0.95
  accuracy_check_runs:
    mask_net: 5

require_larger_multiplier_for_smaller_tensor:
  - tiny_net

very_slow: &VERY_SLOW_MODELS

slow:
  - *VERY_SLOW_MODELS
  - slow_net

non_deterministic:
  - random_net

dtype:
  force_amp_for_fp16_bf16_models:
    - amp_net

group_models: &GROUP
  - group_a
  - group_b

only_training:
  - *GROUP
  - train_only_net

skip:
  all:
    - broken_net
  device:
    cpu:
      - cuda_only_net
    cpu_aarch64: []
    cuda: []
    xpu:
      - *GROUP
  test:
    training:
      - *GROUP
      - inference_only_net
  control_flow:
    - branchy_net
  export_not_supported:
    - export_net
  multiprocess:
    - multi_net
  freezing:
    cuda:
      - conv_bn_net
    cpu: []

accuracy:
  skip:
    large_models:
      - huge_net
  max_batch_size:
    unet_like: 2
"""


@pytest.fixture
def dynamo_yaml(tmp_path):
    path = tmp_path / "torchbench.yaml"
    path.write_text(DYNAMO_STYLE_YAML)
    return str(path)


def test_dynamos_own_file_is_accepted_as_it_is(dynamo_yaml):
    config = load_compile_config(dynamo_yaml)
    assert config.skip_all == ("broken_net",)
    assert config.skip_device["cpu"] == ("cuda_only_net",)
    assert config.skip_device["xpu"] == ("group_a", "group_b")  # an anchor's list, flattened
    assert config.skip_training == ("group_a", "group_b", "inference_only_net")
    assert config.only_training == ("group_a", "group_b", "train_only_net")
    assert config.slow == ("slow_net",)  # the empty very_slow anchor is null: dropped
    assert config.batch_size_for("big_model", "training") == 4
    assert config.batch_size_for("big_model", "inference") == 32
    assert config.batch_size_for("other", "inference") is None
    assert "dont_change_batch_size" in config.unused and "accuracy" in config.unused
    assert "skip.multiprocess" in config.unused
    assert "tolerance.use_iou_for_bool_masks" in config.unused


def test_skips_follow_dynamo(dynamo_yaml):
    config = load_compile_config(dynamo_yaml)
    assert "training mode only" in config.skip_reason("train_only_net", "cpu", "inference",
                                                      False)
    assert config.skip_reason("train_only_net", "cpu", "training", False) is None
    assert "skip.freezing.cuda" in config.skip_reason("conv_bn_net", "cuda:0", "inference",
                                                      False, freezing=True)
    assert config.skip_reason("conv_bn_net", "cpu", "inference", False, freezing=True) is None


@pytest.mark.parametrize("model, dtype, mode, device, amp, freezing, expected", [
    ("any_net", "float32", "inference", "cpu", False, False, (1e-4, False)),
    ("any_net", "float32", "training", "cpu", False, False, (1e-4, False)),
    ("any_net", "float32", "training", "cuda", False, False, (1e-3, False)),
    ("wide_net", "float32", "training", "cuda", False, False, (1e-3, False)),
    ("noisy_net", "float32", "training", "cuda", False, False, (8e-2, False)),
    ("noisy_net", "float32", "inference", "cuda", False, False, (1e-4, False)),
    ("any_net", "float16", "inference", "cuda", False, False, (1e-3, False)),
    ("any_net", "float32", "inference", "cuda", True, False, (1e-3, False)),  # amp
    ("half_net", "float16", "inference", "cuda", False, False, (1e-2, False)),
    ("noisy_net", "float16", "training", "cuda", False, False, (8e-2, False)),
    ("frozen_net", "float16", "inference", "cuda", False, True, (8e-2, False)),
    ("frozen_net", "float16", "inference", "cuda", False, False, (1e-3, False)),
    ("brain_net", "bfloat16", "inference", "cpu", False, False, (1e-2, False)),
    ("any_net", "bfloat16", "inference", "cpu", False, False, (1e-4, False)),
])
def test_the_tolerance_table_is_dynamos(dynamo_yaml, model, dtype, mode, device, amp,
                                        freezing, expected):
    tolerance = load_compile_config(dynamo_yaml).tolerance_for(
        model, dtype, mode=mode, device=device, amp=amp, freezing=freezing)
    assert (tolerance.value, tolerance.cosine) == pytest.approx(expected)


def test_cosine_list_and_flag(tmp_path, dynamo_yaml):
    path = tmp_path / "cos.yaml"
    path.write_text("tolerance:\n  higher: []\n  cosine:\n    - cos_net\n")
    config = load_compile_config(str(path))
    assert config.tolerance_for("cos_net", "float32", mode="training", device="cuda").cosine
    assert not config.tolerance_for("cos_net", "float32", mode="training", device="cpu").cosine
    every = load_compile_config(dynamo_yaml)
    assert every.tolerance_for("any_net", "float32", cosine=True).cosine  # --cosine
    assert every.tolerance_for("random_net", "float32").cosine  # non_deterministic


@pytest.mark.parametrize("text, where", [
    ("tolerance:\n  higher: 3\n  even_higher: []\n", "tolerance.higher"),
    ("tolerance:\n  higher: []\nskip:\n  all: {a: 1}\n", "skip.all"),
    ("batch_size:\n  training:\n    m: -2\n", "batch_size.training.m"),
    ("tolerance:\n  higher: [[ok], 7]\n", "tolerance.higher[1]"),
])
def test_a_wrong_value_in_dynamos_layout_names_its_key(tmp_path, text, where):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserError, match=rf"bad.yaml: {where.replace('[', '.').replace(']', '.')}"):
        load_compile_config(str(path))


SUITE = get_suite("compile")
FAST = CaseContext("cpu", TimingPolicy(warmup=1, min_repeats=3, max_repeats=5, max_time_s=0.2))


def plan(**options):
    defaults = {o.name: o.default for o in SUITE.options} | {"backend": "aot_eager"}
    return SUITE.plan(defaults | options, "cpu")


def test_plan_uses_per_mode_batch_sizes_only_training_and_cosine(dynamo_yaml):
    cases = {(c.name, c.params["mode"]): c for c in plan(
        models=("mlp",), compile_config=dynamo_yaml, cosine=True)}
    assert cases["mlp", "training"].params["batch_size"] == 2
    assert cases["mlp", "inference"].params["batch_size"] is None
    assert all(c.options["tolerance"]["cosine"] for c in cases.values())


def test_accuracy_only_compares_and_times_nothing_else():
    (case,) = plan(models=("mlp",), modes=("inference",), check="accuracy")
    results = SUITE.run_case(case, FAST)
    metrics = {r.metric for r in results}
    assert "speedup" not in metrics and "latency" not in metrics
    (compile_time,) = [r for r in results if r.metric == "compile_time"]
    assert compile_time.status == "pass" and compile_time.params["check"] == "accuracy"
    assert compile_time.extra["batch_size_used"] > 0  # the model's own default, recorded


def test_performance_only_times_without_judging_accuracy():
    (case,) = plan(models=("mlp",), modes=("inference",), check="performance")
    results = {(r.metric, r.params.get("runtime")): r for r in SUITE.run_case(case, FAST)}
    speedup = results["speedup", None]
    assert speedup.status == "ok" and speedup.extra["check"] == "performance"
    assert speedup.extra["batch_size_used"] > 0


def compile_result(metric, value, status="pass", runtime=None, **extra):
    params = {"mode": "inference", "backend": "inductor", "device": "cuda:0",
              "dtype": "float32", "batch_size": None}
    if runtime:
        params["runtime"] = runtime
    return measured("compile", "mlp", metric, [value], params=params, status=status,
                    extra=extra)


def test_dynamo_csv_has_dynamos_columns_and_units():
    run = new_run([
        compile_result("speedup", 1.5, batch_size_used=16),
        compile_result("latency", 3.0, runtime="eager"),
        compile_result("latency", 2.0, runtime="compiled"),
        compile_result("compile_time", 2500.0),
        compile_result("memory_ratio", 0.8),
    ])
    rows = list(csv.reader(io.StringIO(exporter("dynamo-csv")(run))))
    assert rows[0] == ["dev", "name", "batch_size", "speedup", "abs_latency",
                       "compilation_latency", "compression_ratio"]
    dev, name, batch, speedup, latency, compile_s, ratio = rows[1]
    assert (dev, name, batch) == ("cuda", "mlp", "16")
    assert float(speedup) == pytest.approx(1.5) and float(latency) == pytest.approx(2.0)
    assert float(compile_s) == pytest.approx(2.5)  # seconds, as dynamo writes it
    assert float(ratio) == pytest.approx(1.25)  # eager memory / compiled memory


def test_dynamo_csv_of_an_accuracy_only_run_lists_statuses():
    run = new_run([compile_result("compile_time", 900.0, status="fail_accuracy",
                                  batch_size_used=8)])
    rows = list(csv.reader(io.StringIO(exporter("dynamo-csv")(run))))
    assert rows == [["dev", "name", "batch_size", "accuracy"],
                    ["cuda", "mlp", "8", "fail_accuracy"]]


def test_a_run_says_which_keys_of_dynamos_file_have_no_effect(dynamo_yaml):
    lines = SUITE.report_lines([], {"compile_config": dynamo_yaml})
    assert len(lines) == 1 and "no effect here" in lines[0]
    assert "dont_change_batch_size" in lines[0] and "skip.multiprocess" in lines[0]
    assert SUITE.report_lines([], {"compile_config": None}) == []
