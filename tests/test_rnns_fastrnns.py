"""`--nloops` measures as PyTorch's fastrnns `bench.py` does: 10 warm-up training steps in one
process, each step forward then backward timed after a garbage collection, gradients zeroed;
mean and std as fastrnns reports them; `--fuser`/`--executor`; the `--sep` table; the
variable-length LSTMs only on request."""

import gc

import pytest
import torch

from torch_bench.config import build_run_config
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import measured
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext
from torch_bench.suites.fastrnns_table import fastrnns_table
from torch_bench.suites.fwd_bwd import fastrnns_steps
from torch_bench.suites.jit_settings import apply_jit_settings

SIZES = {"seq_length": 3, "input_size": 4, "hidden_size": 4, "batch_size": (2,)}


def config(**timing):
    return build_run_config(suites=["rnns"], timing=timing)


def test_nloops_alone_warms_up_ten_times_in_one_process_as_fastrnns():
    fastrnns = config(nloops=100)
    assert (fastrnns.policy.warmup, fastrnns.processes, fastrnns.policy.nloops) == (10, 1, 100)
    adaptive = config()
    assert (adaptive.policy.warmup, adaptive.processes) == (3, 3)
    asked = build_run_config(suites=["rnns"], timing={"nloops": 100, "warmup": 3}, processes=3)
    assert (asked.policy.warmup, asked.processes) == (3, 3)  # what the user asked wins


class LoggingClock:
    """A clock whose every reading is 1 ms, logging when it is read."""

    def __init__(self, log):
        self.log = log

    def start(self):
        self.log.append("start")

    def stop(self):
        self.log.append("stop")
        return 1.0


def test_each_step_is_forward_then_backward_each_timed_after_a_collection(monkeypatch):
    log = []
    monkeypatch.setattr(gc, "collect", lambda *a: log.append("gc") or 0)
    weight = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3)

    def forward():
        log.append("forward")
        out = x @ weight
        out.register_hook(lambda grad: log.append("backward"))
        return out, out.sum()

    fwd, bwd = fastrnns_steps(forward, [weight], LoggingClock(log), warmup=2, nloops=3)
    assert fwd == [1.0] * 3 and bwd == [1.0] * 3  # warm-up steps are not samples
    step = ["gc", "start", "forward", "stop", "gc", "start", "backward", "stop"]
    assert log == step * 5
    assert torch.count_nonzero(weight.grad) == 0  # zeroed after every step, as fastrnns


def test_nloops_case_records_fastrnns_procedure_and_its_mean_and_std():
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES | {"variants": ("jit",)}
    (case,) = suite.plan(options, "cpu")
    fwd, bwd = suite.run_case(case, CaseContext("cpu", TimingPolicy(warmup=2, nloops=4)))
    assert (fwd.group, bwd.group) == ("lstm", "lstm-backward")
    assert len(fwd.samples) == 4 and fwd.extra["procedure"] == "fastrnns"
    assert fwd.extra["warmup"] == 2 and fwd.extra["fuser"] == "te"
    assert fwd.summary.mean == pytest.approx(torch.tensor(fwd.samples).mean().item(), rel=1e-6)
    assert fwd.summary.std == pytest.approx(torch.tensor(fwd.samples).std().item(), rel=1e-6)


def test_variable_length_lstms_only_on_request_and_first_as_fastrnns():
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES
    names = [c.name for c in suite.plan(options, "cpu")]
    assert names == ["cudnn", "aten", "jit", "jit_premul", "jit_premul_bias", "jit_simple",
                     "jit_multilayer", "py"]
    with_vl = [c.name for c in suite.plan(options | {"variable_lstms": True}, "cpu")]
    assert with_vl[:3] == ["vl_cudnn", "vl_jit", "vl_py"] and len(with_vl) == 11


def test_a_fuser_other_than_fastrnns_default_is_part_of_the_benchmark():
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES | {"variants": ("jit",)}
    (default,) = suite.plan(options, "cpu")
    (other,) = suite.plan(options | {"fuser": "none", "executor": "legacy"}, "cpu")
    assert "fuser" not in default.params  # series stored before keep their name
    assert (other.params["fuser"], other.params["executor"]) == ("none", "legacy")


@pytest.fixture
def restore_jit():
    saved = (torch._C._jit_texpr_fuser_enabled(), torch._C._jit_set_profiling_executor(True))
    torch._C._jit_set_profiling_executor(saved[1])
    yield
    torch._C._jit_set_texpr_fuser_enabled(saved[0])
    torch._C._jit_set_profiling_executor(saved[1])


def test_fuser_choices_switch_torchscript_as_fastrnns_does(restore_jit):
    apply_jit_settings("none", "default")
    assert not torch._C._jit_texpr_fuser_enabled()
    assert torch._C._jit_set_profiling_executor(True) is False  # returns the previous value
    apply_jit_settings("te", "legacy")  # the executor overrides the fuser's
    assert torch._C._jit_texpr_fuser_enabled()
    assert torch._C._jit_set_profiling_executor(True) is False


def result(name, group, samples):
    return measured("rnns", name, "forward_time", samples, group=group)


def test_the_sep_table_is_fastrnns_layout():
    results = [result("jit", "lstm", [1.0, 2.0, 3.0]), result("jit", "lstm-backward", [4.0, 6.0]),
               result("a_very_long_variant_name", "lstm", [0.5, 0.5]),
               result("a_very_long_variant_name", "lstm-backward", [2.0, 2.0])]
    lines = fastrnns_table(results, sep="|")
    assert lines[0] == "Benchmarking LSTMs..."
    assert lines[1] == "|".join(f.rjust(16) for f in (
        "name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd", "std_bwd", "info_bwd"))
    assert lines[2].split("|") == [c.rjust(16) for c in ("jit", "2", "1", "None", "5",
                                                         "1.414", "None")]
    assert lines[3].startswith("a_very_long_vari|")  # cut at 16, as fastrnns' fit_str
    assert lines[-1] == "(avg and std in ms, over every sample)"


def test_run_with_fastrnns_flags_prints_its_table(cli):
    done = cli("run", "--suite", "rnns", "--variants", "jit_simple", "--seqLength", "3",
               "--inputSize", "4", "--hiddenSize", "4", "--miniBatch", "2", "--nloops", "3",
               "--warmup", "1", "--threads", "1", "--fuser", "te", "--sep", "|",
               "--no-preflight", "--out", "r.json", check=True)
    table = done.stdout[done.stdout.index("Benchmarking LSTMs..."):].splitlines()
    assert table[1].split("|")[0].strip() == "name"
    assert table[2].split("|")[0].strip() == "jit_simple"
    bad = cli("run", "--suite", "rnns", "--fuser", "nvfuser", "--dry-run")
    assert bad.returncode == 2 and "fuser" in bad.stderr and "Traceback" not in bad.stderr


FAULTS_PER_BACKWARD = """
import resource, statistics, torch
from torch_bench.suites.fwd_bwd import fastrnns_steps
from torch_bench.suites.jit_settings import apply_jit_settings
from torch_bench.suites.rnns import VARIANTS

class FaultCounter:  # a clock whose readings are the page faults a phase took
    def start(self):
        self.began = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    def stop(self):
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - self.began)

apply_jit_settings(fuser="te", executor="default")
torch.manual_seed(0)
sizes = {"seq_length": 20, "num_layers": 1, "input_size": 128, "hidden_size": 128,
         "mini_batch": 16}
bench = VARIANTS["jit"].build(sizes, torch.device("cpu"), torch.float32)
forward, backward = fastrnns_steps(bench.forward, bench.parameters, FaultCounter(), 10, 10)
print(statistics.median(backward))
"""


@pytest.mark.slow
def test_a_fresh_case_process_times_backward_without_refaulting_its_heap():
    """In a fresh process, glibc hands the memory a scripted LSTM's backward frees back to the
    kernel and the next backward faults it in again (hundreds of page faults a step, 13-21%
    of the step), which fastrnns' own process, having run other variants first, does not."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FAULTS_PER_BACKWARD], capture_output=True,
                          text=True, timeout=600, check=True)
    assert float(done.stdout.split()[-1]) < 100


def test_aten_measures_with_cudnn_off_switched_once_around_the_variant(monkeypatch):
    """fastrnns' runner turns cuDNN off around the aten variant as a whole; every call
    inside sees it off, and the setting is restored after."""
    import torch_bench.suites.rnns as rnns

    seen, switches = [], []
    flags = torch.backends.cudnn.flags
    monkeypatch.setattr(torch.backends.cudnn, "flags",
                        lambda *a, **k: switches.append(k) or flags(*a, **k))
    real_build = rnns.VARIANTS["aten"].build

    def build(*args):
        bench = real_build(*args)
        return rnns.LstmBench(lambda: seen.append(torch.backends.cudnn.enabled) or bench.forward(),
                              bench.parameters, bench.num_layers, bench.use_cudnn)

    monkeypatch.setitem(rnns.VARIANTS, "aten", rnns.Variant(build, "lstm", True))
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES | {"variants": ("aten",)}
    (case,) = suite.plan(options, "cpu")
    before = torch.backends.cudnn.enabled
    suite.run_case(case, CaseContext("cpu", TimingPolicy(warmup=2, nloops=3)))
    assert seen == [False] * 5 and switches == []
    assert torch.backends.cudnn.enabled == before
