"""The child side of `torch-bench explain`: `python -m torch_bench.execute.profile_worker
REQUEST OUTPUT`.

Runs one case with a short fixed plan (a few warm-up calls, then a few timed calls, one call
per sample) under a profiling session, and writes the operator profile of the timed calls to
OUTPUT (`results.op_profile`), or `{"error": ...}` when the case raised or profiled nothing
(it failed before timing, or times itself without the timer). The case's own results are
not kept: under the profiler they mean nothing.
"""

from __future__ import annotations

import json
import sys
import traceback

from torch_bench.fileio import write_json_atomic
from torch_bench.measure import op_window
from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.op_profile import ProfileSession
from torch_bench.measure.tied_child import die_with_starter
from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite


def profiling_policy(case: CaseSpec, warmup: int, steps: int) -> TimingPolicy:
    """`warmup` untimed calls, then exactly `steps` samples of one call each."""
    return TimingPolicy(warmup=warmup, min_repeats=steps, max_repeats=steps,
                        max_time_s=24 * 3600.0, min_block_ms=1e-6,
                        loops={out.metric: 1 for out in case.outputs})


def failure_of(results) -> str | None:
    """The error of a case whose every result failed, else None."""
    failed = [r for r in results if not r.ok]
    if results and len(failed) == len(results):
        return f"{failed[0].status}: {failed[0].error or 'no message'}"
    return None


def profile_request(request: dict) -> dict:
    case = CaseSpec.from_dict(request["case"])
    ctx = CaseContext(device=request["device"], threads=request.get("threads"),
                      policy=profiling_policy(case, request["warmup"], request["steps"]))
    if ctx.threads:
        import torch

        torch.set_num_threads(ctx.threads)
    suite = get_suite(request.get("suite_ref") or case.suite)
    session = ProfileSession(ctx.device, request.get("metric"), request.get("runtime"))
    op_window.install(session)
    try:
        results = list(suite.run_case(case, ctx))
    except Exception as exc:  # the case's failure is this side's answer, not a crash
        traceback.print_exc(file=sys.stderr)
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        op_window.install(None)
    # A case that profiled its timed calls and then failed a check (a compiled model's
    # accuracy, say) still shows where its time went.
    profile = session.result(case.label, request.get("trace"))
    if profile is not None:
        return profile.to_dict()
    return {"error": failure_of(results) or "the case timed nothing through torch-bench's "
                                            "timer, so there was nothing to profile"}


def main(argv: list[str]) -> int:
    request_path, output_path = argv
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    write_json_atomic(output_path, profile_request(request))
    return 0


if __name__ == "__main__":
    die_with_starter()
    sys.exit(main(sys.argv[1:]))
