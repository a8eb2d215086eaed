"""The training suite: training-loss parity between native (eager) and compiled training.

Each model is trained twice from identical initial weights and optimizer state (deep copies
of one state dict each; the second run never reuses the first run's trained model), on the
same batches in the same order: natively, and under `torch.compile` with the chosen backend.
The default model is a tiny transformer text classifier (`text_classification`); `--models`
also takes zoo models as the compile suite does, fitted to fixed random targets
(`zoo.fitting`).

Results (params include `backend`: `eager` for the native run, else the compile backend, and
`runtime`: native or compiled):
- `loss`: the losses of the final epoch's steps, the whole history in `extra["loss_curve"]`;
- `epoch_time`: time per epoch (the first epoch, which includes compilation, is left out of
  the samples when there are several epochs; all epochs are in `extra`);
- `accuracy` on a held-out set, when evaluation is asked;
- `epoch_time` with param `epoch: first`: the first (compiling) epoch alone;
- `loss_ratio`, the parity verdict: compiled final loss / native final loss, where a final
  loss is the mean loss of the final epoch. Status `pass` when
  compiled_final <= native_final * (1 + loss_tolerance), else `fail_accuracy`. With
  `loss_rule: seed`, dynamo's training_loss.py rule instead (`seed_check`), recorded as param
  `loss_rule: seed`, the figures it compared in `extra`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from torch_bench.results.schema import Result, Status, failed, measured
from torch_bench.suites.base import (
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    batch_size_option,
    parse_positive_int,
)
from torch_bench.suites.compile import COMPILE_MODES, one_of, parse_backend, parse_bool
from torch_bench.zoo.choices import optimizer_classes, parse_optimizer
from torch_bench.zoo.textdata import parse_dataset

SUITE_NAME = "training"
CASE_NAME = "text_classification"
SEED = 0


def parse_positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def parse_models(text: str) -> tuple[str, ...]:
    """`text_classification` and/or zoo models, as the compile suite takes them."""
    from torch_bench.zoo import format_ref, parse_ref

    names = [part.strip() for part in str(text).split(",") if part.strip()]
    if not names:
        raise ValueError("expected at least one model")
    parsed = tuple(n if n == CASE_NAME else format_ref(_training_ref(n, parse_ref))
                   for n in names)
    if len(set(parsed)) != len(parsed):
        raise ValueError(f"a model is given twice in {text!r}")
    return parsed


def _training_ref(name: str, parse_ref):
    """A zoo model, or an error listing the training suite's own models (not the compile
    suite's alone: the built-in text classifier comes first)."""
    try:
        return parse_ref(name)
    except ValueError:
        from torch_bench.zoo import BUILTIN_MODELS

        raise ValueError(f"{name!r} is not a model of the training suite; its models: "
                         f"{CASE_NAME} (the built-in text classifier, in place of dynamo's "
                         f"training_loss.py bert-base-cased, which needs a download), the "
                         f"zoo's {', '.join(BUILTIN_MODELS)}, or package.module:function") \
            from None


LOSS_RULES = ("relative", "seed")
SEED_LOSS_EVERY, SEED_LAST_POINTS, SEED_MARGIN = 100, 10, 0.1


def _parse_rule(text: str) -> str:
    if str(text) not in LOSS_RULES:
        raise ValueError(f"expected one of {', '.join(LOSS_RULES)}, got {text!r}")
    return str(text)


def seed_loss_points(losses: Sequence[float], steps_per_epoch: int,
                     every: int = SEED_LOSS_EVERY) -> list[float]:
    """The loss history dynamo's training_loss.py keeps: in each epoch, the mean of every
    `every` consecutive steps (a remainder shorter than `every` is dropped)."""
    points = []
    for start in range(0, len(losses), steps_per_epoch):
        epoch = losses[start:start + steps_per_epoch]
        points += [sum(epoch[i:i + every]) / every
                   for i in range(0, len(epoch) - every + 1, every)]
    return points


def seed_check(native: Sequence[float], compiled: Sequence[float]) -> tuple[bool, float, float]:
    """training_loss.py's `check_loss`: the last min(n, 10) points of each history, summed
    and divided by 10 (even when fewer), compiled within native + 0.1. Returns (passed,
    native figure, compiled figure); no point at all passes, as there."""
    last = min(len(native), SEED_LAST_POINTS)
    ref = sum(native[-last:]) / SEED_LAST_POINTS if last else 0.0
    res = sum(compiled[-last:]) / SEED_LAST_POINTS if last else 0.0
    return res <= ref + SEED_MARGIN, ref, res


OPTIONS = (
    Option("models", parse_models, (CASE_NAME,),
           f"{CASE_NAME} (the built-in text classifier) and/or zoo models as in the compile "
           "suite (fitted to fixed random targets)"),
    Option("backend", parse_backend, "inductor", "torch.compile backend of the compiled run"),
    Option("compile_mode", one_of(COMPILE_MODES), "default", "torch.compile mode"),
    Option("optimizer", parse_optimizer, "adam",
           "any torch.optim optimizer by class name: adam, adamw, sgd, rmsprop, ... "
           "(capturable where supported)"),
    Option("lr", parse_positive_float, 1e-3, "learning rate"),
    Option("epochs", parse_positive_int, 3, "training epochs"),
    Option("samples", parse_positive_int, 512, "training samples"),
    batch_size_option((32,)),
    Option("evaluate", parse_bool, False, "report accuracy on a held-out set"),
    Option("dataset", parse_dataset, "synthetic", "synthetic, or hf:NAME[:SPLIT] (needs the "
                                                  "datasets package and network)"),
    Option("loss_tolerance", parse_positive_float, 0.05,
           "relative margin by which the compiled final loss may exceed the native one"),
    Option("loss_rule", _parse_rule, "relative",
           "relative: compiled final-epoch mean loss <= native one * (1 + loss_tolerance); "
           "seed: dynamo's training_loss.py check (the last 10 of its running-mean loss "
           "points, summed / 10, within an absolute 0.1 of native's)"),
    Option("loss_every", parse_positive_int, SEED_LOSS_EVERY,
           "with --loss-rule seed: steps per running-mean loss point (the seed's 100)"),
)


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    params = {k: options[k] for k in ("backend", "compile_mode", "optimizer", "lr", "epochs",
                                      "samples", "dataset")}
    from torch_bench.zoo import parse_ref

    outputs = (Output("loss"), Output("epoch_time"), Output("loss_ratio"))
    cases = []
    for model in options["models"]:
        ref = None if model == CASE_NAME else parse_ref(model)
        for batch in options["batch_size"]:
            cases.append(CaseSpec(
                SUITE_NAME, ref.name if ref else CASE_NAME,
                {**params, "batch_size": batch, "device": device}, outputs,
                options={"evaluate": options["evaluate"] and ref is None,
                         "loss_tolerance": options["loss_tolerance"],
                         "loss_rule": options.get("loss_rule", "relative"),
                         "loss_every": options.get("loss_every", SEED_LOSS_EVERY),
                         "target": ref.target if ref else None}))
    return cases


@dataclass(frozen=True)
class TrainingRun:
    losses: tuple[float, ...]  # one per step
    epoch_losses: tuple[float, ...]  # mean per epoch
    epoch_times_ms: tuple[float, ...]
    accuracy: float | None


def make_optimizer(name: str, parameters, lr: float, device: str):
    """The optimizer, with `capturable=True` where it accepts it and the device supports it
    (CUDA); returns it and whether capturable was set."""
    import inspect

    cls = optimizer_classes()[name]
    capturable = device.startswith("cuda") and \
        "capturable" in inspect.signature(cls.__init__).parameters
    kwargs = {"capturable": True} if capturable else {}
    return cls(parameters, lr=lr, **kwargs), capturable


def train(model, optimizer, data, eval_data, p: Mapping[str, Any], device: str,
          compile_fn=None) -> TrainingRun:
    import torch

    from torch_bench.zoo.fitting import timed_epochs

    torch.manual_seed(SEED)  # the same random stream (dropout, if any) for both runs
    call = compile_fn(model) if compile_fn else model
    tokens, labels = data.tokens.to(device), data.labels.to(device)
    order_gen = torch.Generator().manual_seed(SEED)

    def one_epoch() -> list:
        order = torch.randperm(len(labels), generator=order_gen).to(device)
        steps = []
        for first in range(0, len(labels), p["batch_size"]):
            batch = order[first:first + p["batch_size"]]
            optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(call(tokens[batch]), labels[batch])
            loss.backward()
            optimizer.step()
            steps.append(loss.detach())
        return steps

    losses, epoch_losses, epoch_times = timed_epochs(model, p["epochs"], device, one_epoch)
    accuracy = None
    if eval_data is not None:
        model.eval()
        with torch.no_grad():
            predicted = call(eval_data.tokens.to(device)).argmax(dim=1).cpu()
        accuracy = float((predicted == eval_data.labels).float().mean())
    return TrainingRun(tuple(losses), tuple(epoch_losses), tuple(epoch_times), accuracy)


@dataclass(frozen=True)
class Subject:
    """What is trained: a fresh model (same architecture every call) and how to train it."""

    make_model: Callable[[], Any]
    train: Callable[[Any, Any, Any], TrainingRun]  # (model, optimizer, compile_fn)


def text_subject(case: CaseSpec, device: str) -> Subject:
    from torch_bench.zoo import textdata
    from torch_bench.zoo.builtin import TinyTextClassifier

    p = case.params
    data = textdata.load(p["dataset"], p["samples"], seed=SEED)
    eval_data = textdata.load(p["dataset"], max(64, p["samples"] // 4), seed=SEED + 1,
                              offset=p["samples"]) if case.options["evaluate"] else None
    return Subject(
        lambda: TinyTextClassifier(vocab=textdata.VOCAB, seq_length=textdata.SEQ_LENGTH)
        .to(device),
        lambda model, optimizer, compile_fn: train(model, optimizer, data, eval_data, p,
                                                   device, compile_fn))


def zoo_subject(case: CaseSpec, device: str) -> Subject:
    import torch

    from torch_bench.zoo import ZooRef, build
    from torch_bench.zoo.fitting import fit, random_targets
    from torch_bench.zoo.runtime import place

    p = case.params
    example = place(build(ZooRef(case.name, case.options["target"]), p["batch_size"]), device,
                    torch.float32)
    targets = random_targets(example, SEED)
    steps = max(1, p["samples"] // p["batch_size"])

    def run(model, optimizer, compile_fn) -> TrainingRun:
        losses, epoch_losses, times = fit(model, optimizer, replace(example, model=model),
                                          targets, p["epochs"], steps, device, compile_fn)
        return TrainingRun(tuple(losses), tuple(epoch_losses), tuple(times), None)

    return Subject(lambda: copy.deepcopy(example.model), run)


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch

    from torch_bench.zoo.runtime import compiler

    p = case.params
    torch.manual_seed(SEED)
    try:
        subject = zoo_subject(case, ctx.device) if case.options.get("target") \
            else text_subject(case, ctx.device)
    except Exception as exc:
        message = f"loading the model: {type(exc).__name__}: {exc}"
        return [failed(case.suite, case.name, out.metric, Status.MODEL_FAIL_TO_LOAD.value,
                       message, params=case.params) for out in case.outputs]
    torch.manual_seed(SEED)
    initial = subject.make_model()
    weights = copy.deepcopy(initial.state_dict())
    first_optimizer, capturable = make_optimizer(p["optimizer"], initial.parameters(), p["lr"],
                                                 ctx.device)
    optimizer_state = copy.deepcopy(first_optimizer.state_dict())

    def fresh():
        model = subject.make_model()
        model.load_state_dict(copy.deepcopy(weights))
        optimizer, _ = make_optimizer(p["optimizer"], model.parameters(), p["lr"], ctx.device)
        optimizer.load_state_dict(copy.deepcopy(optimizer_state))
        return model, optimizer

    results: list[Result] = []
    runs = {}
    for runtime, backend, compile_fn in (
            ("native", "eager", None),
            ("compiled", p["backend"], compiler(p["backend"], p["compile_mode"]))):
        try:
            runs[runtime] = subject.train(*fresh(), compile_fn)
        except Exception as exc:
            from torch_bench.measure.memory import is_out_of_memory

            status = Status.OOM.value if is_out_of_memory(exc) else Status.FAIL_TO_RUN.value
            message = f"{runtime} training: {type(exc).__name__}: {exc}"
            params = {**p, "runtime": runtime, "backend": backend}
            return results + [
                failed(case.suite, case.name, m, status, message, params=params)
                for m in ("loss", "epoch_time")] + [
                failed(case.suite, case.name, "loss_ratio", status, message, params=p)]
        results += _run_results(case, runs[runtime], runtime, backend, capturable)
    if case.options.get("loss_rule") == "seed":
        verdict = seed_parity(case, runs["native"], runs["compiled"],
                              case.options.get("loss_every", SEED_LOSS_EVERY))
    else:
        verdict = parity(case, runs["native"], runs["compiled"], case.options["loss_tolerance"])
    return with_verdict_losses(results, verdict) + [verdict]


def with_verdict_losses(results: Sequence[Result], verdict: Result) -> list[Result]:
    """Each run's `loss` result with the figure the verdict compared for that run
    (`extra.verdict_loss`) and the rule that made it (`extra.verdict_rule`), so whoever shows
    a training run's loss (the dashboard) shows the verdict's number, not the last step."""
    seed = verdict.params.get("loss_rule") == "seed"
    rule = "seed" if seed else "last_epoch_mean"
    key = "{}_verdict_loss" if seed else "{}_final_loss"
    out = []
    for result in results:
        figure = verdict.extra.get(key.format(result.params.get("runtime")))
        if result.metric == "loss" and figure is not None:
            result = replace(result, extra={**result.extra, "verdict_loss": figure,
                                            "verdict_rule": rule})
        out.append(result)
    return out


def _run_results(case: CaseSpec, run: TrainingRun, runtime: str, backend: str,
                 capturable: bool) -> list[Result]:
    params = {**case.params, "runtime": runtime, "backend": backend}
    steps_per_epoch = len(run.losses) // len(run.epoch_losses)
    timed = run.epoch_times_ms[1:] if len(run.epoch_times_ms) > 1 else run.epoch_times_ms
    results = [
        measured(case.suite, case.name, "loss", run.losses[-steps_per_epoch:], params=params,
                 extra={"loss_curve": list(run.losses), "epoch_losses": list(run.epoch_losses),
                        "epoch_times_ms": list(run.epoch_times_ms), "capturable": capturable}),
        measured(case.suite, case.name, "epoch_time", timed, params=params,
                 extra={"epoch_times_ms": list(run.epoch_times_ms),
                        "first_epoch_excluded": len(run.epoch_times_ms) > 1}),
    ]
    if len(run.epoch_times_ms) > 1:  # the compiling epoch, as a series of its own
        results.append(measured(case.suite, case.name, "epoch_time", run.epoch_times_ms[:1],
                                params={**params, "epoch": "first"},
                                extra={"includes": "compilation (compiled run) and warm-up"}))
    if run.accuracy is not None:
        results.append(measured(case.suite, case.name, "accuracy", [run.accuracy],
                                params=params))
    return results


def seed_parity(case: CaseSpec, native: TrainingRun, compiled: TrainingRun,
                every: int) -> Result:
    """The verdict as dynamo's training_loss.py gives it (`seed_check`)."""
    steps = len(native.losses) // len(native.epoch_losses)
    ref_points = seed_loss_points(native.losses, steps, every)
    res_points = seed_loss_points(compiled.losses, steps, every)
    ok, ref, res = seed_check(ref_points, res_points)
    extra = {"native_verdict_loss": ref, "compiled_verdict_loss": res,
             "loss_points": len(ref_points), "loss_every": every,
             "rule": "dynamo training_loss.py: sum of the last min(n, 10) running-mean loss "
                     "points / 10, compiled <= native + 0.1"}
    if not ref_points:
        extra["note"] = (f"fewer than {every} steps per epoch: no loss point, so the seed's "
                         f"check passes whatever the losses (lower --loss-every)")
    result = measured(case.suite, case.name, "loss_ratio", [res / ref if ref else 1.0],
                      params={**case.params, "loss_rule": "seed"},
                      status=Status.PASS.value if ok else Status.FAIL_ACCURACY.value,
                      extra=extra)
    if ok:
        return result
    return replace(result, error=f"compiled loss {res:.6g} exceeds native {ref:.6g} by more "
                                 f"than {SEED_MARGIN}")


def parity(case: CaseSpec, native: TrainingRun, compiled: TrainingRun,
           tolerance: float) -> Result:
    """The verdict: compiled final loss <= native final loss * (1 + tolerance)."""
    native_final, compiled_final = native.epoch_losses[-1], compiled.epoch_losses[-1]
    ok = compiled_final <= native_final * (1 + tolerance)
    ratio = compiled_final / max(native_final, 1e-12)
    result = measured(
        case.suite, case.name, "loss_ratio", [ratio], params=case.params,
        status=Status.PASS.value if ok else Status.FAIL_ACCURACY.value,
        extra={"native_final_loss": native_final, "compiled_final_loss": compiled_final,
               "loss_tolerance": tolerance,
               "rule": "pass when compiled final-epoch mean loss <= native one * (1 + "
                       "loss_tolerance)"})
    if ok:
        return result
    return replace(result, error=f"compiled final loss {compiled_final:.6g} exceeds native "
                                 f"{native_final:.6g} by more than {tolerance:.0%}")


def _per_epoch(times_ms: Sequence[float]) -> str:
    return str(timedelta(milliseconds=sum(times_ms) / len(times_ms))) if times_ms else "-"


def render(results: Sequence[Result]) -> list[str]:
    """The seed's report per case: PASSED or FAILED, then time per epoch of each run, over
    every epoch as the seed counts it and without the compiling epoch."""
    lines: list[str] = []
    for verdict in (r for r in results if r.metric == "loss_ratio" and r.status in (
            Status.PASS.value, Status.FAIL_ACCURACY.value)):
        word = "PASSED" if verdict.status == Status.PASS.value else "FAILED"
        relation = "less than or equal to" if word == "PASSED" else "greater than"
        p = verdict.params
        lines += [f"[{word}] {verdict.name}: end to end training loss compiled ({p['backend']}) "
                  f"is {relation} native PyTorch ({verdict.extra.get('rule', '')})",
                  f"Train model on {p['epochs']} epochs with backend {p['backend']} and "
                  f"optimizer {p['optimizer']}:"]
        for runtime, who in (("native", "PyTorch"), ("compiled", "TorchDynamo")):
            times = next((r.extra.get("epoch_times_ms", []) for r in results
                          if r.metric == "epoch_time" and r.name == verdict.name
                          and r.params.get("runtime") == runtime
                          and "epoch" not in r.params), [])
            lines.append(f"{who} spent {_per_epoch(times)} per epoch (all epochs); "
                         f"{_per_epoch(times[1:])} without the first, compiling epoch")
    return lines


SUITE = Suite(
    name=SUITE_NAME,
    description="training-loss parity: models trained natively and compiled",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
    spread_over_processes=False,  # one long measurement per case
    render=render,
)
