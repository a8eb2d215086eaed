"""Run one case in this process, as Hugging Face's benchmark does with `--no_multi_process`.

For debugging and for machines where starting a process per case costs too much. What is
given up: the memory figures are this process's (its peak RSS since it started, which
includes everything run before the case), so they are not the case's own, as Hugging Face
warns; there is no timeout and no memory cap; a crash in the case ends the run. Every result
says so in `extra.multi_process` (false).
"""

from __future__ import annotations

from dataclasses import asdict, replace

from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.sanity import with_invalid_values_as_errors
from torch_bench.results.schema import Result


def run_in_process(case: CaseSpec, ctx: CaseContext, suite_ref: str | None = None) -> list[Result]:
    from torch_bench.execute.worker import run_request

    results = run_request({"suite_ref": suite_ref or case.suite, "case": case.to_dict(),
                           "device": ctx.device, "threads": ctx.threads,
                           "policy": asdict(ctx.policy)})
    return [replace(r, extra={**r.extra, "multi_process": False})
            for r in with_invalid_values_as_errors(results)]
