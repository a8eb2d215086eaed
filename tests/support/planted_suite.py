"""A tiny model whose head version can carry a planted slowdown, for `torch-bench explain`:
the source below is committed as `explainwork/suite.py` with its knobs set per side."""

SOURCE = '''
import torch

from torch_bench.measure.timer import measure
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

WIDTH = {width}  # the hidden layer: larger means a larger matmul
EXTRA_OP = {extra_op}  # sort the output: an operator the base does not run
GRAPH_BREAK = {graph_break}  # break the compiled graph in the middle
COMPILE = {compile}
FAIL = {fail}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(128, WIDTH)
        self.outer = torch.nn.Linear(WIDTH, 128)

    def forward(self, x):
        y = self.inner(x).relu()
        if GRAPH_BREAK:
            torch._dynamo.graph_break()
        y = self.outer(y)
        if EXTRA_OP:
            y = torch.sort(y, dim=-1).values
        return y


def plan(options, device):
    return [CaseSpec("planted", name, {{"device": device}}, (Output("latency"),))
            for name in ("mlp", "other")]


def run_case(case, ctx):
    if FAIL:
        raise RuntimeError("this side cannot build the model")
    torch.manual_seed(0)
    model = Net().eval()
    call = torch.compile(model, backend="eager") if COMPILE else model
    x = torch.randn(64, 128)

    def step():
        with torch.no_grad():
            return call(x)

    timing = measure(step, ctx.policy, ctx.clock(), metric="latency")
    return [measured(case.suite, case.name, "latency", timing.samples_ms, params=case.params,
                     extra=timing.extra())]


SUITE = Suite(name="planted", description="a tiny MLP with a planted change", options=(),
              plan=plan, run_case=run_case)
'''


def source(width=128, extra_op=False, graph_break=False, compile=False, fail=False) -> str:
    return SOURCE.format(width=width, extra_op=extra_op, graph_break=graph_break,
                         compile=compile, fail=fail)


ZOO_MODEL = '''
import torch

GRAPH_BREAK = {graph_break}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(32, 64)
        self.outer = torch.nn.Linear(64, 8)

    def forward(self, x):
        y = self.inner(x).relu()
        if GRAPH_BREAK:
            torch._dynamo.graph_break()
        return self.outer(y)


def mlp(batch_size=None):
    torch.manual_seed(0)
    return Net(), (torch.randn(batch_size or 4, 32),)
'''


def zoo_model(graph_break=False) -> str:
    """A model for the compile suite (`--models planted=explainwork.suite:mlp`)."""
    return ZOO_MODEL.format(graph_break=graph_break)
