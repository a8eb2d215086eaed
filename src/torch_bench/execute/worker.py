"""The child side of isolation: `python -m torch_bench.execute.worker REQUEST OUTPUT`.

Reads the case from REQUEST, runs it, and writes its results to OUTPUT. An exception in the
case becomes results with status `error` or `oom`; anything worse (a signal, a hard exit)
leaves OUTPUT absent and the parent diagnoses it.
"""

from __future__ import annotations

import json
import sys
import traceback

from torch_bench.fileio import write_json_atomic
from torch_bench.measure import memory
from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.case_results import failed_results, memory_results
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import Result, Status
from torch_bench.suites import get_suite


def run_request(request: dict) -> list[Result]:
    case = CaseSpec.from_dict(request["case"])
    ctx = CaseContext(device=request["device"], policy=TimingPolicy(**request["policy"]),
                      threads=request.get("threads"))
    if ctx.threads:
        import torch

        torch.set_num_threads(ctx.threads)
    suite = get_suite(request.get("suite_ref") or case.suite)
    if ctx.device.startswith("cuda"):
        memory.reset_cuda_peaks(ctx.device)
    rss_before = memory.current_rss_mb()
    try:
        results = list(suite.run_case(case, ctx))
    except SystemExit as exc:  # not a crash, nor a result: say what the case did
        return failed_results(case, Status.ERROR.value,
                              f"the case called sys.exit({exc.code!r}) instead of returning "
                              f"its results")
    except Exception as exc:  # the whole point: any failure becomes a status
        status = Status.OOM.value if memory.is_out_of_memory(exc) else Status.ERROR.value
        traceback.print_exc(file=sys.stderr)
        return failed_results(case, status, f"{type(exc).__name__}: {exc}")
    # a case may record its memory itself (transformers' --no-speed) or not at all
    if suite.record_memory and case.options.get("record_memory", True) \
            and any(r.ok for r in results):
        results.extend(memory_results(case, ctx, rss_before))
    return results


def main(argv: list[str]) -> int:
    request_path, output_path = argv
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    if request.get("memory_limit_mb"):
        # The cap is for what the case adds: load torch and the suite first, so that a small
        # cap fails the case's allocations (oom), not torch's own import.
        import torch  # noqa: F401

        get_suite(request.get("suite_ref") or request["case"]["suite"])
        memory.limit_address_space(request["memory_limit_mb"])
    results = run_request(request)
    write_json_atomic(output_path, [r.to_dict() for r in results])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
