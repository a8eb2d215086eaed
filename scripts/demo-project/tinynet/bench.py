"""tinynet's benchmark suite for torch-bench: `torch-bench run --suite tinynet.bench`.

A suite module exposes SUITE: `plan` lists the cases (cheap, no torch work), `run_case`
measures one case in its own process.
"""

from torch_bench.measure.timer import measure
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

NAMES = ("attention", "cnn", "lstm", "mlp")
PARAMS = {"batch_size": 32, "dtype": "float32", "mode": "inference"}


def plan(options, device):
    return [CaseSpec(suite="tinynet", name=name, params=PARAMS, outputs=(Output("latency"),))
            for name in NAMES]


def run_case(case, ctx):
    import torch

    from tinynet.models import build

    model, batch = build(case.name, PARAMS["batch_size"])

    def forward():
        with torch.no_grad():
            model(batch)

    timing = measure(forward, ctx.policy, ctx.clock(), metric="latency")
    return [measured(case.suite, case.name, "latency", timing.samples_ms, params=PARAMS,
                     extra=timing.extra())]


SUITE = Suite(name="tinynet", description="four tiny models, forward pass", options=(),
              plan=plan, run_case=run_case, record_memory=False)
