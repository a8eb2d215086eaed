import pytest
import torch

from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=3, max_time_s=0.1)
SUITE = get_suite("cnns")


def plan(*variants):
    options = {o.name: o.default for o in SUITE.options} | {
        "cnns": variants, "batch_size": (2,), "image_size": 32, "compile_backend": "eager"}
    return SUITE.plan(options, "cpu")


def test_default_variants_are_fastrnns_resnets():
    default = next(o for o in SUITE.options if o.name == "cnns").default
    assert default == ("resnet18", "resnet18_jit", "resnet50", "resnet50_jit")


@pytest.mark.parametrize("variant", ["resnet18", "resnet18_compiled"])
def test_resnet_variants_time_forward_and_backward(variant):
    (case,) = plan(variant)
    results = SUITE.run_case(case, CaseContext("cpu", FAST))
    assert [(r.group, r.name, r.metric, r.status) for r in results] == [
        ("resnet", variant, "forward_time", "ok"),
        ("resnet-backward", variant, "backward_time", "ok")]
    assert results[0].params["model"] == "resnet18"
    assert results[0].extra["implementation"] in ("torchvision", "torch_bench")


def test_scripted_resnet_is_skipped_where_scripting_is_gone(monkeypatch):
    monkeypatch.delattr(torch.jit, "script")
    (case,) = plan("resnet50_jit")
    results = SUITE.run_case(case, CaseContext("cpu", FAST))
    assert [r.status for r in results] == ["skipped", "skipped"]
    assert "torch.jit.script is not available" in results[0].error
