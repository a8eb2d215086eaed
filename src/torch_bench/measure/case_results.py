"""The results a case's process reports besides its own: one per promised output when the case
failed, and the process's memory figures."""

from __future__ import annotations

import os

from torch_bench.measure import memory
from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.gpus import uuid_of_torch_device
from torch_bench.results.schema import Result, failed, measured
from torch_bench.results.validate import storable_name


def failed_results(case: CaseSpec, status: str, message: str) -> list[Result]:
    """One result per promised output, all carrying the case's failure, under names a run
    document can hold (a case named with a newline keeps it as `\\n`)."""
    params = {storable_name(key): value for key, value in case.params.items()}
    return [
        failed(case.suite, storable_name(case.name), out.metric, status, message,
               params=params, group=None if out.group is None else storable_name(out.group))
        for out in case.outputs
    ]


def memory_results(case: CaseSpec, ctx: CaseContext, rss_before_mb: float) -> list[Result]:
    """The case process's memory figures as results (peak RSS; allocator and NVML on GPU)."""
    figures = {"peak_rss": memory.peak_rss_mb()}
    if ctx.device.startswith("cuda"):
        import torch

        device = torch.device(ctx.device)
        figures.update(memory.cuda_allocator_peaks_mb(device))
        figures.update(memory.nvml_memory_mb(device.index or 0, os.getpid(),
                                             uuid_of_torch_device(device)))
    extra = {"rss_before_case_mb": round(rss_before_mb, 1)}
    return [
        measured(case.suite, case.name, metric, [value], params=case.params, extra=extra)
        for metric, value in figures.items()
    ]
