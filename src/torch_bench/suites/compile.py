"""The compile suite: each zoo model eager and under `torch.compile`, side by side.

Per model and mode (inference, training): accuracy first (eager run twice to catch
non-determinism, then compiled against eager within the model's tolerance), then eager and
compiled steps timed in interleaved rounds. Results, all carrying the model's status
(`pass`, `fail_accuracy`, ...): `speedup` (median eager / median compiled), `latency` of each
(param `runtime`), `compile_time` (first compiled call minus the median eager call),
`peak_memory` of each and `memory_ratio` (compiled / eager), and dynamo's `graph_count` and
`graph_breaks`. After all cases, `summarize` adds per (mode, backend, device) a `summary`:
geometric-mean `speedup` and mean `compile_time` and `memory_ratio` over passing models, and
`pass_rate` over the models that ran (skipped ones excluded).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from torch_bench.models.dtypes import dtype_list_parser
from torch_bench.results.schema import Result, Status, failed, measured
from torch_bench.suites.base import (
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    batch_size_option,
    parse_bool,
    parse_choices,
)
from torch_bench.zoo import BUILTIN_MODELS, format_ref, parse_ref, parse_refs
from torch_bench.zoo.config import DTYPES, CompileConfig, Tolerance
from torch_bench.zoo.config_files import load_compile_config

SUITE_NAME = "compile"
MODES = ("inference", "training")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
OUTPUTS = (Output("speedup"), Output("latency"), Output("compile_time"), Output("memory_ratio"))
SUMMARY_PARAMS = ("mode", "backend", "device")
CHECKS = ("both", "accuracy", "performance")


def one_of(known: Sequence[str]):
    def parse(text: str) -> str:
        if str(text) not in known:
            raise ValueError(f"expected one of {', '.join(known)}, got {text!r}")
        return str(text)

    return parse


def _parse_models(text: str) -> tuple[str, ...]:
    return tuple(format_ref(ref) for ref in parse_refs(text))


def parse_backend(text: str) -> str:
    """A torch.compile backend this torch registers (checked before anything runs)."""
    from torch_bench.zoo.choices import check_backend

    name = str(text).strip()
    if not name.replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"{text!r} is not a backend name (inductor, aot_eager, eager, ...)")
    return check_backend(name)


def _parse_config_path(text: str) -> str:
    path = os.path.abspath(str(text))
    load_compile_config(path)  # validated in the parent, where errors reach the user
    return path


OPTIONS = (
    Option("models", _parse_models, tuple(BUILTIN_MODELS),
           "zoo models: built-in names or [name=]package.module:function"),
    Option("modes", parse_choices(MODES, "mode"), MODES, "inference and/or training"),
    Option("backend", parse_backend, "inductor", "torch.compile backend (inductor, aot_eager, "
                                                  "eager, ...)"),
    Option("compile_mode", one_of(COMPILE_MODES), "default", "torch.compile mode"),
    Option("dtype", dtype_list_parser(DTYPES, short=False), ("float32",),
           "weights and inputs dtype: fp32, fp16 (float16, half), bf16 (bfloat16), fp64; "
           "a list runs each"),
    Option("amp", parse_bool, False, "autocast to --dtype, weights kept float32 (with "
                                     "float32: to float16 on a GPU, bfloat16 on CPU, as "
                                     "dynamo's runner does)"),
    batch_size_option(None, "batch sizes for every model, a list runs each (None: each "
                            "model's own)"),
    Option("compile_config", _parse_config_path, None,
           "YAML: skip lists, batch sizes, tolerances, slow and non-deterministic models"),
    Option("include_slow", parse_bool, False, "also run the models listed as slow"),
    Option("include_very_slow", parse_bool, False, "also run the models listed as very_slow"),
    Option("freezing", parse_bool, False,
           "inference with inductor's freezing (weights as constants); skips skip.freezing"),
    Option("check", one_of(CHECKS), "both",
           "both: accuracy and speed; accuracy: compare compiled with eager only, no timing "
           "(dynamo's --accuracy); performance: time only, no accuracy check (dynamo's "
           "--performance)"),
    Option("cosine", parse_bool, False,
           "judge every model's outputs by cosine similarity (dynamo's --cosine)"),
)


def _dtypes(value: str | Sequence[str]) -> tuple[str, ...]:
    """The dtype option: a list, or one name (configurations written before lists)."""
    return (value,) if isinstance(value, str) else tuple(value)


def _sizes(value: int | Sequence[int] | None) -> tuple[int | None, ...]:
    """The batch-size option: a list, one size (older configurations), or None."""
    if value is None:
        return (None,)
    return (value,) if isinstance(value, int) else tuple(value)


def amp_dtype(dtype: str, device: str) -> str:
    """What `--amp` autocasts to: the dtype asked for, or with float32 (autocasting to it
    would change nothing) the one dynamo's runner picks, float16 on a GPU, bfloat16 on CPU."""
    if dtype != "float32":
        return dtype
    return "float16" if device.startswith("cuda") else "bfloat16"


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    config = load_compile_config(options["compile_config"]) if options["compile_config"] \
        else CompileConfig()
    cases = []
    grid = [(ref, dtype, batch, mode) for ref in map(parse_ref, options["models"])
            for dtype in _dtypes(options["dtype"]) for batch in _sizes(options["batch_size"])
            for mode in options["modes"]]
    check = options.get("check", "both")
    for ref, dtype, batch, mode in grid:
        dtype = amp_dtype(dtype, device) if options["amp"] else dtype
        freezing = options["freezing"] and mode == "inference"
        tolerance = config.tolerance_for(ref.name, dtype, mode=mode, device=device,
                                         amp=options["amp"], freezing=freezing,
                                         cosine=options.get("cosine", False))
        batch_size = batch or config.batch_size_for(ref.name, mode)
        params = {"mode": mode, "backend": options["backend"],
                  "compile_mode": options["compile_mode"], "device": device,
                  "dtype": dtype, "amp": options["amp"],
                  "batch_size": batch_size}
        # absent otherwise: earlier series keep their key
        params.update({"freezing": True} if freezing else {})
        params.update({"check": check} if check != "both" else {})
        cases.append(CaseSpec(
            suite=SUITE_NAME, name=ref.name, params=params, outputs=_outputs(check),
            options={"target": ref.target, "batch_size": batch_size,
                     "tolerance": asdict(tolerance), "check": check,
                     "check_eager_determinism": ref.name not in config.non_deterministic
                     and check != "performance",
                     "skip": config.skip_reason(ref.name, device, mode,
                                                options["include_slow"],
                                                options["include_very_slow"], freezing)},
        ))
    return cases


def _outputs(check: str) -> tuple[Output, ...]:
    return (Output("compile_time"),) if check == "accuracy" else OUTPUTS


def leading_batch(example) -> int | None:
    """The batch size a model was built with: the first dimension of its first tensor input
    (what `batch_size: null`, the model's own default, came to)."""
    for value in (*example.args, *example.kwargs.values()):
        shape = getattr(value, "shape", None)
        if shape is not None and len(shape) > 0:
            return int(shape[0])
    return None


class CaseFailure(Exception):
    """The case stops here with `status`."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def _status_of(exc: BaseException, otherwise: str) -> str:
    from torch_bench.measure.memory import is_out_of_memory

    return Status.OOM.value if is_out_of_memory(exc) else otherwise


def _all_failed(case: CaseSpec, status: str, message: str) -> list[Result]:
    return [failed(case.suite, case.name, out.metric, status, message, params=case.params)
            for out in case.outputs]


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    if case.options.get("skip"):
        return _all_failed(case, Status.SKIPPED.value, case.options["skip"])
    try:
        return _run(case, ctx)
    except CaseFailure as exc:
        return _all_failed(case, exc.status, str(exc))


def _guarded(what: str, status: str, fn):
    try:
        return fn()
    except CaseFailure:
        raise
    except Exception as exc:
        raise CaseFailure(_status_of(exc, status), f"{what}: {type(exc).__name__}: {exc}") \
            from exc


def _run(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch

    from torch_bench.zoo import ZooRef, build
    from torch_bench.zoo.accuracy import Verdict, compare
    from torch_bench.zoo.choices import apply_tf32
    from torch_bench.zoo.runtime import (
        Runtime,
        StepSpec,
        compiler,
        dynamo_counts,
        interleaved,
        match_eager_randomness,
        peak_memory,
        place,
        prepare,
        reset_dynamo,
        timed_call,
    )

    p = case.params
    precision = apply_tf32(torch, ctx.device)
    spec = StepSpec(mode=p["mode"], device=ctx.device, dtype=p["dtype"], amp=bool(p["amp"]))
    tolerance = Tolerance(**case.options["tolerance"])
    ref = ZooRef(case.name, case.options["target"])
    torch.manual_seed(0)
    example = _guarded("loading the model", Status.MODEL_FAIL_TO_LOAD.value,
                       lambda: prepare(build(ref, case.options["batch_size"]), spec))

    def first_step(runtime_factory):
        torch.manual_seed(0)
        runtime = runtime_factory()
        return runtime, runtime.step()

    eager, eager_out = _guarded("eager", Status.FAIL_TO_RUN.value,
                                lambda: first_step(lambda: Runtime(example, spec)))
    if case.options["check_eager_determinism"]:
        _, again = _guarded("eager, second run", Status.FAIL_TO_RUN.value,
                            lambda: first_step(lambda: Runtime(example, spec)))
        verdict = compare(eager_out, again, tolerance)
        if not verdict.same:
            raise CaseFailure(Status.EAGER_TWO_RUNS_DIFFER.value,
                              f"two eager runs differ: {verdict.reason}")

    reset_dynamo()
    if p.get("freezing"):
        import torch._inductor.config as inductor_config

        inductor_config.freezing = True
    # Training steps of models with dropout only compare if inductor's random numbers are
    # eager's; this holds for the timed steps too (recorded in the speedup's extra).
    fallback_random = p["mode"] == "training" and match_eager_randomness()
    compile_fn = compiler(p["backend"], p["compile_mode"])
    clock = ctx.clock()
    (compiled, compiled_out), first_call_ms = _guarded(
        "compiled", Status.FAIL_TO_RUN.value,
        lambda: timed_call(lambda: first_step(lambda: Runtime(example, spec, compile_fn)),
                           clock))
    counts = dynamo_counts()
    check = case.options.get("check", "both")
    built = {"batch_size_used": leading_batch(example), "check": check}
    if check == "performance":
        verdict = Verdict(True, "not checked (performance only)")
    else:
        verdict = compare(eager_out, compiled_out, tolerance)
    if not verdict.same and tolerance.fp64_reference and not tolerance.cosine:
        fp64 = _guarded("float64 reference", Status.FAIL_TO_RUN.value, lambda: first_step(
            lambda: Runtime(place(example, ctx.device, torch.float64),
                            replace(spec, dtype="float64", amp=False)))[1])
        verdict = compare(eager_out, compiled_out, tolerance, fp64)
    status = Status.PASS.value if verdict.same else Status.FAIL_ACCURACY.value
    if check == "performance":
        status = Status.OK.value
    if check == "accuracy":
        made = measured(case.suite, case.name, "compile_time", [first_call_ms], params=p,
                        status=status, extra={**built, "rule": "first compiled call, ms "
                                              "(accuracy only: nothing else is timed)"})
        return [made if verdict.same else replace(made, error=verdict.reason)] + [
            measured(case.suite, case.name, metric, [value], params=p, status=status)
            for metric, value in counts.items()]

    eager_mem, method = _guarded("eager memory", Status.FAIL_TO_RUN.value,
                                 lambda: peak_memory(eager.step, ctx.device))
    compiled_mem, _ = _guarded("compiled memory", Status.FAIL_TO_RUN.value,
                               lambda: peak_memory(compiled.step, ctx.device))
    samples = _guarded("timing", Status.FAIL_TO_RUN.value, lambda: interleaved(
        {"eager": eager.step, "compiled": compiled.step}, ctx.policy, clock))
    eager_ms = _median(samples["eager"])
    compiled_ms = _median(samples["compiled"])

    def result(metric, values, runtime=None, extra=None):
        params = dict(p) if runtime is None else {**p, "runtime": runtime}
        made = measured(case.suite, case.name, metric, values, params=params, status=status,
                        extra=extra)
        return made if verdict.same else replace(made, error=verdict.reason)

    memory_extra = {"method": method}
    results = [
        result("speedup", [eager_ms / compiled_ms],
               extra={"rule": "median eager latency / median compiled latency",
                      "rounds": len(samples["eager"]), "fallback_random": fallback_random,
                      **precision, **built}),
        result("latency", samples["eager"], "eager"),
        result("latency", samples["compiled"], "compiled"),
        result("compile_time", [max(first_call_ms - eager_ms, 0.0)],
               extra={"first_compiled_call_ms": first_call_ms, "eager_call_ms": eager_ms}),
        result("peak_memory", [eager_mem], "eager", memory_extra),
        result("peak_memory", [compiled_mem], "compiled", memory_extra),
        *([result("memory_ratio", [compiled_mem / eager_mem], extra=memory_extra)]
          if eager_mem > 0 else []),
    ]
    results += [result(metric, [value]) for metric, value in counts.items()]
    return results


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _key(result: Result) -> tuple:
    return result.name, tuple(sorted((k, str(v)) for k, v in result.params.items()))


def summarize(results: Sequence[Result]) -> list[Result]:
    """The suite summary per (mode, backend, device), from every case's results."""
    by_case: dict[tuple, dict[str, Result]] = {}
    for r in results:
        if r.suite == SUITE_NAME and r.name != "summary" and "runtime" not in r.params:
            by_case.setdefault(_key(r), {})[r.metric] = r
    groups: dict[tuple, list[dict[str, Result]]] = {}
    for metrics in by_case.values():
        speedup = metrics.get("speedup")
        if speedup is not None:
            group = tuple(speedup.params.get(k) for k in SUMMARY_PARAMS)
            groups.setdefault(group, []).append(metrics)
    summary = []
    for group, cases in groups.items():
        summary += _group_summary(dict(zip(SUMMARY_PARAMS, group, strict=True)), cases)
    return summary


def _group_summary(params: dict[str, Any], cases: list[dict[str, Result]]) -> list[Result]:
    ran = [c for c in cases if c["speedup"].status != Status.SKIPPED.value]
    passed = [c for c in ran if c["speedup"].status in (Status.PASS.value, Status.OK.value)
              and c["speedup"].summary is not None]
    statuses: dict[str, int] = {}
    for c in cases:
        statuses[c["speedup"].status] = statuses.get(c["speedup"].status, 0) + 1
    extra = {"models": len(ran), "passed": len(passed), "statuses": statuses,
             "passed_models": sorted(c["speedup"].name for c in passed)}

    def over_passed(metric: str) -> list[float]:
        return [c[metric].summary.median for c in passed
                if metric in c and c[metric].summary is not None]

    speedups = over_passed("speedup")
    compile_times = over_passed("compile_time")
    ratios = over_passed("memory_ratio")
    checked = [c for c in ran if c["speedup"].params.get("check") != "performance"]
    figures = (
        ("speedup", math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None,
         "geometric mean over passing models"),
        ("pass_rate", len(passed) / len(checked) if checked else None,
         "passing models / models run (skipped excluded)"),
        ("compile_time", sum(compile_times) / len(compile_times) if compile_times else None,
         "mean over passing models"),
        ("memory_ratio", sum(ratios) / len(ratios) if ratios else None,
         "mean over passing models"),
    )
    return [
        measured(SUITE_NAME, "summary", metric, [value], params=params,
                 extra={**extra, "rule": rule}) if value is not None else
        failed(SUITE_NAME, "summary", metric, Status.SKIPPED.value,
               _why_none(metric, ran, checked), params=params, extra=extra)
        for metric, value, rule in figures
    ]


def _why_none(metric: str, ran: list, checked: list) -> str:
    if not ran:
        return "no model ran"
    if metric == "pass_rate" and not checked:
        return "not measured: --check performance checks no accuracy"
    return "no model passed"


def report(results: Sequence[Result], options: Mapping[str, Any]) -> list[str]:
    """What a dynamo `torchbench.yaml` holds that has no effect here, said once per run."""
    path = options.get("compile_config")
    config = load_compile_config(path) if path else None
    if config is None or not config.unused:
        return []
    return [f"{path}: read as dynamo's torchbench.yaml; no effect here: "
            f"{', '.join(config.unused)}"]


SUITE = Suite(
    name=SUITE_NAME,
    description="zoo models eager vs torch.compile: speedup, compile time, memory, accuracy",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
    spread_over_processes=False,  # one long measurement per case
    summarize=summarize,
    report=report,
)

