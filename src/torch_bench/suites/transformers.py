"""The transformers suite: models from the Hugging Face `transformers` library, built from
their configuration with random weights, timed over a grid of batch sizes and sequence
lengths in inference (no grad) and training (forward with labels, loss, backward) modes.

Each (model, mode, dtype, batch size, sequence length) is its own case, hence its own
process, so the peak memory the worker records belongs to that case alone. Results:
`latency` (ms per step), `throughput` (samples/s), `token_throughput` (tokens/s: batch size
x sequence length of the encoder input per step), and the worker's `peak_rss`. With
`trace_memory`, the latency result's `extra.memory_trace` holds the source lines that grew
memory most during one step. Hugging Face's switches: `no_speed` (no timing; the case
records its memory itself, on the step already run), `no_memory` (no memory figures) and
`no_multi_process` (the case runs in the calling process: see `measure.in_process`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from torch_bench.errors import UserError
from torch_bench.measure.timer import measure
from torch_bench.models.dtypes import dtype_list_parser
from torch_bench.results.schema import Result, Status, failed, measured
from torch_bench.suites.base import (
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    batch_size_option,
    parse_int_list,
    parse_name_list,
    parse_positive_int,
)
from torch_bench.suites.base import (
    parse_bool as parse_switch,
)

SUITE_NAME = "transformers"
MODES = ("inference", "train")
DTYPE_NAMES = ("fp32", "fp16", "bf16")
HEADS = ("auto", "lm", "base")
OUTPUTS = (Output("latency"), Output("throughput"), Output("token_throughput"))
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_bool(text: str) -> bool:
    word = str(text).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(f"expected one of {', '.join(TRUE_WORDS + FALSE_WORDS)}, got {text!r}")


def _choices(allowed: Sequence[str]):
    def parse(text: str) -> tuple[str, ...]:
        names = parse_name_list(text)
        unknown = [n for n in names if n not in allowed]
        if unknown:
            raise ValueError(f"unknown value(s) {', '.join(unknown)}; "
                             f"choose from {', '.join(allowed)}")
        return tuple(dict.fromkeys(names))

    return parse


def _parse_head(text: str) -> str:
    head = str(text).strip()
    if head not in HEADS:
        raise ValueError(f"expected one of {', '.join(HEADS)}, got {text!r}")
    return head


def _parse_models(text: str) -> tuple[str, ...]:
    from torch_bench.models.sources import reference_kind

    refs = parse_name_list(text)
    for ref in refs:
        if reference_kind(ref) == "file" and not os.path.exists(os.path.expanduser(ref)):
            raise ValueError(f"{ref}: no such configuration file or folder")
    return refs


STATISTICS = ("min", "median", "mean")
DEFAULT_TRACED = ("transformers", "torch_bench.suites")


def _one_statistic(text: str) -> str:
    value = str(text).strip()
    if value not in STATISTICS:
        raise ValueError(f"expected one of {', '.join(STATISTICS)}, got {text!r}")
    return value


def _parse_compile(text: str) -> str:
    backend = str(text).strip()
    if not backend:
        raise ValueError("expected a torch.compile backend name or 'none'")
    if backend.lower() in FALSE_WORDS + ("none",):
        return "none"
    from torch_bench.zoo.choices import check_backend

    return check_backend(backend)


OPTIONS = (
    Option("models", _parse_models, ("tiny-bert", "tiny-gpt2", "tiny-t5"),
           "models: built-in tiny-bert, tiny-gpt2, tiny-t5; a config.json path; or a Hub id "
           "(configuration only, fetched when online)"),
    batch_size_option((8,), "batch sizes of the grid"),
    Option("seq_lengths", parse_int_list, (8, 32, 128), "sequence lengths of the grid"),
    Option("mode", _choices(MODES), MODES, "inference (no grad) and/or train (loss, backward)"),
    Option("dtype", dtype_list_parser(("float32", "float16", "bfloat16"), short=True),
           ("fp32",), "fp32, fp16 (float16, half), bf16 (bfloat16); a list runs each; "
                      "unsupported ones report skipped"),
    Option("torchscript", parse_bool, False, "trace inference with TorchScript"),
    Option("compile", _parse_compile, "none",
           "torch.compile backend for the measured model (inductor, eager, ...) or none"),
    Option("head", _parse_head, "auto",
           "auto: as Hugging Face's benchmark, the class the configuration names, else the "
           "bare model for inference and the language-model head for train; lm: the class "
           "the configuration names, else the model with its language-model head; base: the "
           "bare model (HF's only_pretrain_model); the class built is in extra.model_class"),
    Option("trace_memory", parse_bool, False,
           "trace memory line by line during one step (extra.memory_trace, printed)"),
    Option("trace_top", parse_positive_int, 10, "lines kept by the memory trace"),
    Option("trace_modules", parse_name_list, DEFAULT_TRACED,
           "modules (packages) whose source lines the memory trace follows, as Hugging "
           "Face's modules_to_trace: transformers, torch.nn, your own package, ..."),
    Option("no_speed", parse_switch, False,
           "as Hugging Face's --no_speed: no timing; each case runs one step and records its "
           "memory (peak_rss), with the trace when asked for"),
    Option("no_memory", parse_switch, False,
           "as Hugging Face's --no_memory: no memory figures (peak_rss) and no memory trace"),
    Option("no_multi_process", parse_switch, False,
           "as Hugging Face's --no_multi_process: each case runs in the torch-bench process "
           "itself, not in its own; its memory figures are then that process's (everything "
           "run before included, so not the case's own, as Hugging Face warns), with no "
           "timeout and no memory cap; for debugging. Results say extra.multi_process false"),
    Option("statistic", _one_statistic, "median",
           "the latency statistic reported in the HF CSV files (min: Hugging Face's, the "
           "fastest repeat); recorded in extra.statistic, every sample kept"),
)


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    if options["torchscript"] and options["compile"] != "none":
        raise UserError("--torchscript and --compile: choose one of them")
    if "fp16" in options["dtype"] and not device.startswith("cuda"):
        # The Hugging Face benchmark refuses this too ("Mixed precision is possible only
        # for GPU"): CPU kernels for float16 are slow or missing, so the figures mislead.
        raise UserError(f"--dtype fp16: half precision is measured on a GPU only (device "
                        f"{device}); on CPU use bf16 or fp32")
    speed, memory = not options.get("no_speed"), not options.get("no_memory")
    if not (speed or memory):
        raise UserError("--no-speed and --no-memory: nothing is left to measure")
    if options["trace_memory"] and not memory:
        raise UserError("--trace-memory with --no-memory: the trace is part of the memory "
                        "measurement (as in Hugging Face's benchmark); drop one of them")
    settings = {"trace_memory": options["trace_memory"], "trace_top": options["trace_top"],
                "trace_modules": list(options.get("trace_modules", DEFAULT_TRACED)),
                "statistic": options.get("statistic", "median"),
                # the worker adds the memory figures; without timing the case adds them
                "speed": speed, "record_memory": memory and speed,
                "in_process": bool(options.get("no_multi_process"))}
    return [
        CaseSpec(
            suite=SUITE_NAME,
            name=model,
            params={"model": model, "batch_size": batch, "sequence_length": seq, "mode": mode,
                    "dtype": dtype, "head": _head(options["head"], mode), "device": device,
                    "torchscript": options["torchscript"] and mode == "inference",
                    "compile": options["compile"]},
            outputs=OUTPUTS if speed else (Output("peak_rss"),),
            options=settings,
        )
        for model in options["models"]
        for mode in options["mode"]
        for dtype in options["dtype"]
        for batch in options["batch_size"]
        for seq in options["seq_lengths"]
    ]


def _head(head: str, mode: str) -> str:
    """`auto` trains the model with its head, as `lm` does (and is recorded so)."""
    return "lm" if head == "auto" and mode == "train" else head


def _with_head(config, head: str) -> bool:
    """Whether to build the head model: `auto` in inference does only where the
    configuration names its class (`architectures`), as Hugging Face's benchmark."""
    from torch_bench.models.transformer import named_architecture

    return head == "lm" or (head == "auto" and named_architecture(config) is not None)


def _all_failed(case: CaseSpec, status: Status, message: str) -> list[Result]:
    return [failed(case.suite, case.name, out.metric, status.value, message,
                   params=case.params, group=out.group) for out in case.outputs]


def _build(case: CaseSpec, device: str):
    """The model and its inputs for the case, or raise ModelLoadError / Unsupported."""
    import torch

    from torch_bench.models import build_transformer, load_config, transformer_inputs
    from torch_bench.models.transformer import max_positions
    from torch_bench.suites.transformer_steps import Unsupported, torch_dtype

    p = case.params
    config = load_config(p["model"])
    limit = max_positions(config)
    if limit is not None and p["sequence_length"] > limit:
        raise Unsupported(f"sequence length {p['sequence_length']} exceeds the model's "
                          f"{limit} positions")
    model = build_transformer(config, head=_with_head(config, p["head"]))
    model = model.to(device=torch.device(device), dtype=torch_dtype(p["dtype"]))
    inputs = transformer_inputs(config, p["batch_size"], p["sequence_length"], device,
                                labels=p["mode"] == "train" and p["head"] == "lm")
    return model, inputs


def _step(case: CaseSpec, model, inputs):
    from torch_bench.suites.transformer_steps import inference_step, training_step

    p = case.params
    backend = None if p["compile"] == "none" else p["compile"]
    if p["mode"] == "inference":
        return inference_step(model, inputs, p["torchscript"], backend)
    return training_step(model, inputs, p["head"] == "lm", backend)


def traced_paths(modules: Sequence[str]) -> list[str]:
    """The source paths of `modules`: a package's folder, or a module's file."""
    import importlib

    paths = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise Unavailable(f"trace_modules: cannot import {name!r} ({exc})") from exc
        source = getattr(module, "__file__", None)
        if source is None:
            raise Unavailable(f"trace_modules: {name!r} has no source file to trace")
        paths.append(os.path.dirname(source) if hasattr(module, "__path__") else source)
    return paths


class Unavailable(Exception):
    """The memory trace cannot follow what was asked."""


def _trace(step, case: CaseSpec, device: str) -> dict[str, Any]:
    from torch_bench.measure.memtrace import trace_memory

    modules = case.options.get("trace_modules") or list(DEFAULT_TRACED)
    trace = trace_memory(step.run, traced_paths(modules), top=case.options.get("trace_top", 10),
                         cuda_device=device if device.startswith("cuda") else None)
    return {**trace.to_dict(), "modules": list(modules)}


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch
    import transformers

    from torch_bench.measure.memory import current_rss_mb
    from torch_bench.models import ModelLoadError
    from torch_bench.suites.transformer_steps import Unsupported, first_call

    rss_before = current_rss_mb()
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    p = case.params
    try:
        model, inputs = _build(case, ctx.device)
        step = _step(case, model, inputs)
        first_ms = first_call(step, p["dtype"], ctx.device)
    except ModelLoadError as exc:
        return _all_failed(case, Status.MODEL_FAIL_TO_LOAD, str(exc))
    except Unsupported as exc:
        return _all_failed(case, Status.SKIPPED, str(exc))
    about = {"first_call_ms": round(first_ms, 3), "transformers": transformers.__version__,
             "model_class": type(model).__name__}
    if not case.options.get("speed", True):
        return _memory_only(case, ctx, step, rss_before, about)
    timing = measure(step.run, ctx.policy, ctx.clock(), metric="latency")
    extra = {**timing.extra(), **step.extra, **about,
             "statistic": case.options.get("statistic", "median")}
    if case.options.get("trace_memory"):
        try:
            extra["memory_trace"] = _trace(step, case, ctx.device)
        except Unavailable as exc:
            return _all_failed(case, Status.ERROR, str(exc))
    batch, tokens = p["batch_size"], p["batch_size"] * p["sequence_length"]
    samples = timing.samples_ms
    return [
        measured(case.suite, case.name, "latency", samples, params=p, extra=extra),
        measured(case.suite, case.name, "throughput", [batch * 1e3 / s for s in samples],
                 params=p),
        measured(case.suite, case.name, "token_throughput",
                 [tokens * 1e3 / s for s in samples], params=p),
    ]


def _memory_only(case: CaseSpec, ctx: CaseContext, step, rss_before_mb: float,
                 about: Mapping[str, Any]) -> list[Result]:
    """`--no-speed`: the memory figures of the step already run (the first call), and the
    trace when asked for, on the peak_rss result. The worker is told not to add its own."""
    from dataclasses import replace

    from torch_bench.measure.case_results import memory_results

    extra = dict(about)
    if case.options.get("trace_memory"):
        try:
            extra["memory_trace"] = _trace(step, case, ctx.device)
        except Unavailable as exc:
            return _all_failed(case, Status.ERROR, str(exc))
    return [replace(r, extra={**r.extra, **extra}) if r.metric == "peak_rss" else r
            for r in memory_results(case, ctx, rss_before_mb)]


def render(results: Sequence[Result]) -> list[str]:
    """The per-metric grid tables, then each memory trace."""
    from torch_bench.measure.memtrace import format_memory_trace
    from torch_bench.suites.transformers_table import format_grid_tables

    lines = format_grid_tables(results)
    for result in results:
        trace = result.extra.get("memory_trace")
        if trace:
            shown = ", ".join(f"{k}={result.params[k]}"
                              for k in ("mode", "batch_size", "sequence_length", "dtype"))
            lines += ["", *format_memory_trace(trace, f"{result.name} ({shown})")]
    return lines


SUITE = Suite(
    name=SUITE_NAME,
    description="Hugging Face transformers from their configuration: inference and training "
                "speed and memory over batch sizes x sequence lengths",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
    render=render,
)
