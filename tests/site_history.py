"""A small synthetic history for the dashboard tests: two suites with facets, a compile-suite
summary, training loss curves, an environment change, a feature branch, a failed result, and
hostile strings where users and git put text."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from torch_bench.results.document import save_run
from torch_bench.results.schema import failed, measured, new_run
from torch_bench.store.layout import run_path

XSS_NAME = "<img src=x onerror=window.__xss=1>"
XSS_MESSAGE = "</script><script>window.__xss=1</script>"
XSS_BRANCH = "fix/<b>bold</b>"
MAIN_RUNS = 10
BRANCH_RUNS = 2
RUNS = MAIN_RUNS + BRANCH_RUNS
MODELS = ("bert", "gpt2")
DTYPES = ("float32", "float16")
BATCHES = (1, 8)
REPOSITORY = "octo/net"


def sha_of(index: int) -> str:
    return f"{index:02d}" + "c0ffee" * 6 + "ab"


def _samples(centre: float, index: int) -> list[float]:
    return [centre * (1 + 0.01 * math.sin(index + k)) for k in range(5)]


def _results(index: int):
    slower = 1.25 if index >= 6 else 1.0  # a step in the history: a real change point
    out = []
    for model, dtype, batch in itertools.product(MODELS, DTYPES, BATCHES):
        params = {"model": model, "dtype": dtype, "batch_size": batch, "seq_length": 128,
                  "device": "cuda", "mode": "inference"}
        base = (10 if model == "bert" else 20) * (0.6 if dtype == "float16" else 1) * batch
        out.append(measured("transformers", model, "latency", _samples(base * slower, index),
                            params=params))
    out.append(measured("transformers", XSS_NAME, "latency", _samples(5.0, index),
                        params={"model": XSS_NAME, "dtype": "float32"}))
    if index == RUNS - 1:
        out.append(failed("transformers", "t5", "latency", "oom", "CUDA out of memory",
                          params={"model": "t5", "dtype": "float32"}))
    else:
        out.append(measured("transformers", "t5", "latency", _samples(30.0, index),
                            params={"model": "t5", "dtype": "float32"}))
    out.append(measured("compile", "summary", "speedup", [1.3 + 0.01 * index],
                        params={"device": "cuda"}))
    out.append(measured("compile", "summary", "pass_rate", [0.9], params={"device": "cuda"}))
    # as the training suite records them: `runtime` native or compiled, `backend` eager or
    # the compile backend; the cnn's compiled curve is identical to its native one
    for model, runtime, backend, rate in (("mlp", "native", "eager", 0.80),
                                          ("mlp", "compiled", "inductor", 0.79),
                                          ("cnn", "native", "eager", 0.9),
                                          ("cnn", "compiled", "inductor", 0.9)):
        curve = [2.5 * rate ** step for step in range(20)]
        out.append(measured("training", model, "loss", [curve[-1]],
                            params={"runtime": runtime, "backend": backend,
                                    "optimizer": "adam"},
                            extra={"loss_curve": curve}))
    return out


def make_run(index: int):
    on_branch = index >= MAIN_RUNS
    branch = XSS_BRANCH if on_branch else "main"
    message = XSS_MESSAGE if index == 3 else f"Commit number {index} & more"
    sha = sha_of(index)
    return new_run(
        _results(index),
        created_at=f"2026-01-{index + 1:02d}T12:00:00Z",
        git={"repository": REPOSITORY, "sha": sha, "branch": branch, "message": message,
             "url": f"https://github.com/{REPOSITORY}/commit/{sha}",
             "pr_number": 7 if on_branch else None,
             "pr_title": XSS_MESSAGE if on_branch else None},
        ci={"provider": "local"},
        env={"torch": "2.5.0" if index < 5 else "2.6.0", "cuda": "12.4", "driver": "550.54",
             "gpu_name": "NVIDIA A100-SXM4-80GB", "python": "3.11.9", "fingerprint": "f00d"},
    )


def write_history(data: Path) -> list:
    runs = [make_run(i) for i in range(RUNS)]
    for run in runs:
        save_run(run, data / run_path(run))
    return runs
