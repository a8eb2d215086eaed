import pytest
import torch

from torch_bench.errors import UserError
from torch_bench.zoo import BUILTIN_MODELS, build, format_ref, parse_ref, parse_refs
from torch_bench.zoo.accuracy import leaves
from torch_bench.zoo.config import CompileConfig, parse_compile_config
from torch_bench.zoo.config_files import load_compile_config

FULL = """
skip:
  all: [gone]
  device: {cpu: [gpu_only], cuda: [cpu_only]}
  training: [frozen]
  control_flow: [branchy]
batch_size: {mlp: 4}
tolerance:
  default: 1.0e-5
  higher: 1.0e-3
  even_higher: 5.0e-2
  dtype: {bfloat16: 2.0e-2}
  cosine_threshold: 0.995
  fp64_reference: false
  classes: {higher: [resnet], even_higher: [lstm], cosine: [transformer]}
slow: [big]
non_deterministic: [noisy]
"""


def test_every_section_is_read(tmp_path):
    path = tmp_path / "compile.yaml"
    path.write_text(FULL)
    config = load_compile_config(str(path))
    assert config.batch_size == {"mlp": 4}
    assert config.skip_reason("gone", "cpu", "inference", False) == "listed in skip.all"
    assert config.skip_reason("gpu_only", "cpu", "inference", False) == "listed in skip.device.cpu"
    assert config.skip_reason("gpu_only", "cuda:1", "inference", False) is None
    assert config.skip_reason("cpu_only", "cuda:1", "inference", False) is not None
    assert config.skip_reason("frozen", "cpu", "inference", False) is None
    assert config.skip_reason("frozen", "cpu", "training", False) == "listed in skip.training"
    assert "control flow" in config.skip_reason("branchy", "cpu", "inference", False)
    assert config.skip_reason("big", "cpu", "inference", False).startswith("slow")
    assert config.skip_reason("big", "cpu", "inference", True) is None
    assert config.tolerance_for("mlp", "float32").value == 1e-5
    assert config.tolerance_for("resnet", "float32").value == 1e-3
    assert config.tolerance_for("lstm", "float32").value == 5e-2
    assert config.tolerance_for("mlp", "bfloat16").value == 2e-2  # the dtype's floor
    assert config.tolerance_for("mlp", "float16").value == 1e-3  # default dtype floor kept
    cosine = config.tolerance_for("transformer", "float32")
    assert cosine.cosine and cosine.cosine_threshold == 0.995 and not cosine.fp64_reference
    assert config.tolerance_for("noisy", "float32").cosine


def test_empty_file_means_defaults():
    assert parse_compile_config(None, "c.yaml") == CompileConfig()


@pytest.mark.parametrize("text, message", [
    ("skip: {al: [x]}", "c.yaml: skip.al: unknown key; known keys: all, device"),
    ("skip: {device: {tpu: [x]}}", "c.yaml: skip.device.tpu: unknown key"),
    ("skip: {training: mlp}", "c.yaml: skip.training: expected a list of model names"),
    ("slow: [mlp, 3]", "c.yaml: slow[1]: expected a model name, got 3"),
    ("batch_size: {mlp: 0}", "c.yaml: batch_size.mlp: expected a positive number, got 0"),
    ("batch_size: {mlp: 2.5}", "c.yaml: batch_size.mlp: expected a positive integer"),
    ("tolerance: {higher: big}", "c.yaml: tolerance.higher: expected a positive number"),
    ("tolerance: {dtype: {int8: 1}}", "c.yaml: tolerance.dtype.int8: unknown key"),
    ("tolerance: {classes: {loose: [x]}}", "c.yaml: tolerance.classes.loose: unknown key"),
    ("tolerance: {cosine_threshold: 2}", "c.yaml: tolerance.cosine_threshold: expected"),
    ("tolerance: {fp64_reference: maybe}", "c.yaml: tolerance.fp64_reference: expected true"),
    ("skips: {}", "c.yaml: skips: unknown key"),
    ("[1, 2]", "c.yaml: expected a mapping, got list"),
])
def test_bad_values_name_the_key_path(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_compile_config(str(path))
    assert str(caught.value).startswith(str(tmp_path / message.split(":")[0]))
    assert message.split(": ", 1)[1] in str(caught.value)


def test_model_references():
    assert parse_ref("mlp").target == BUILTIN_MODELS["mlp"]
    custom = parse_ref("mine=pkg.models:build")
    assert (custom.name, custom.target) == ("mine", "pkg.models:build")
    assert parse_ref("pkg.models:build").name == "build"
    assert format_ref(custom) == "mine=pkg.models:build" and format_ref(parse_ref("mlp")) == "mlp"
    with pytest.raises(ValueError, match="neither a built-in model"):
        parse_ref("resnet9000")
    with pytest.raises(ValueError, match="given twice"):
        parse_refs("mlp,mlp=torch_bench.zoo.builtin:mlp")


@pytest.mark.parametrize("name", sorted(BUILTIN_MODELS))
def test_builtin_models_build_and_run(name):
    example = build(parse_ref(name), batch_size=3)
    out = example.model(*example.args, **example.kwargs)
    first = next(t for _, t in leaves(out) if isinstance(t, torch.Tensor))
    assert first.shape[0 if name != "lstm" else 1] == 3


def test_torchbenchmark_models_are_referenced_by_name():
    ref = parse_ref("torchbenchmark/resnet18")
    assert (ref.name, format_ref(ref)) == ("resnet18", "torchbenchmark/resnet18")
    try:
        import torchbenchmark  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="torchbenchmark package is not importable"):
            build(ref)


def test_very_slow_and_freezing_lists_are_read_like_slow():
    config = parse_compile_config(
        {"very_slow": ["huge"], "skip": {"freezing": ["unfreezable"]}}, "c.yaml")
    assert "very_slow" in config.skip_reason("huge", "cpu", "inference", True)
    assert config.skip_reason("huge", "cpu", "inference", True, include_very_slow=True) is None
    assert config.skip_reason("unfreezable", "cpu", "inference", False) is None
    assert config.skip_reason("unfreezable", "cpu", "inference", False, freezing=True) == \
        "listed in skip.freezing"
