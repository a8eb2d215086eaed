"""The compile suite's YAML configuration: which models to skip, batch sizes, tolerances.

    skip:
      all: [model]                 # never run
      device: {cpu: [model], cuda: [model]}
      training: [model]            # not in training mode
      control_flow: [model]        # data-dependent control flow: not compiled
      freezing: [model]            # not run with --freezing
    batch_size: {model: 8}         # overrides the model's default batch size
    tolerance:
      default: 1.0e-4              # the default class
      higher: 1.0e-3
      even_higher: 1.0e-2
      dtype: {float16: 1.0e-3, bfloat16: 1.0e-2}   # the least tolerance for a dtype
      cosine_threshold: 0.99
      fp64_reference: true         # judge a failing comparison against a float64 run
      classes: {higher: [model], even_higher: [model], cosine: [model]}
    slow: [model]                  # run only with --include-slow
    very_slow: [model]             # run only with --include-very-slow
    non_deterministic: [model]     # eager runs may differ: compare by cosine similarity

Every key is optional. PyTorch dynamo's own `torchbench.yaml` is read as it is too
(`zoo.dynamo_yaml`), with dynamo's tolerance table (`torchbench_tolerance`). In our layout,
unknown keys and bad values raise `UserError` naming the key's path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from torch_bench.errors import UserError

DEVICE_KINDS = ("cpu", "cuda")
DTYPES = ("float32", "float16", "bfloat16", "float64")
TOLERANCE_CLASSES = ("default", "higher", "even_higher")
MODEL_CLASSES = ("higher", "even_higher", "cosine")


@dataclass(frozen=True)
class Tolerance:
    """How one model's compiled outputs are judged."""

    value: float  # rtol = atol
    cosine: bool = False
    cosine_threshold: float = 0.99
    fp64_reference: bool = True


@dataclass(frozen=True)
class CompileConfig:
    skip_all: tuple[str, ...] = ()
    skip_device: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skip_training: tuple[str, ...] = ()
    skip_control_flow: tuple[str, ...] = ()
    skip_freezing: tuple[str, ...] = ()
    batch_size: Mapping[str, int] = field(default_factory=dict)
    tolerances: Mapping[str, float] = field(
        default_factory=lambda: {"default": 1e-4, "higher": 1e-3, "even_higher": 1e-2})
    dtype_tolerance: Mapping[str, float] = field(
        default_factory=lambda: {"float16": 1e-3, "bfloat16": 1e-2})
    classes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cosine_threshold: float = 0.99
    fp64_reference: bool = True
    slow: tuple[str, ...] = ()
    very_slow: tuple[str, ...] = ()
    non_deterministic: tuple[str, ...] = ()
    # Read from dynamo's layout (`zoo.dynamo_yaml`); empty in ours.
    skip_freezing_device: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    batch_size_by_mode: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    only_training: tuple[str, ...] = ()  # models dynamo runs in training mode only
    tolerance_rule: str = "classes"  # "torchbench": dynamo's table over `torchbench_lists`
    torchbench_lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unused: tuple[str, ...] = ()  # keys of the file that have no effect here

    def skip_reason(self, model: str, device: str, mode: str, include_slow: bool,
                    include_very_slow: bool = False, freezing: bool = False) -> str | None:
        """Why `model` is not run in this configuration, or None."""
        kind = device.split(":")[0]
        rules = (
            (model in self.skip_all, "listed in skip.all"),
            (model in self.skip_device.get(kind, ()), f"listed in skip.device.{kind}"),
            (mode == "training" and model in self.skip_training, "listed in skip.training"),
            (mode == "inference" and model in self.only_training,
             "runs in training mode only (listed in only_training)"),
            (model in self.skip_control_flow,
             "data-dependent control flow (listed in skip.control_flow)"),
            (freezing and model in self.skip_freezing, "listed in skip.freezing"),
            (freezing and model in self.skip_freezing_device.get(kind, ()),
             f"listed in skip.freezing.{kind}"),
            (model in self.slow and not include_slow, "slow (listed in slow; --include-slow)"),
            (model in self.very_slow and not include_very_slow,
             "very slow (listed in very_slow; --include-very-slow)"),
        )
        return next((reason for hit, reason in rules if hit), None)

    def batch_size_for(self, model: str, mode: str) -> int | None:
        """The configured batch size of `model` in `mode`, or None for the model's own."""
        return self.batch_size_by_mode.get(mode, {}).get(model) or self.batch_size.get(model)

    def tolerance_for(self, model: str, dtype: str, *, mode: str = "inference",
                      device: str = "cpu", amp: bool = False, freezing: bool = False,
                      cosine: bool = False) -> Tolerance:
        """How `model`'s outputs are judged; `cosine` (`--cosine`) asks cosine similarity
        of every model, as dynamo's flag does."""
        if self.tolerance_rule == "torchbench":
            value, by_cosine = torchbench_tolerance(
                self.torchbench_lists, model, dtype, training=mode == "training",
                device=device.split(":")[0], amp=amp, freezing=freezing)
            return Tolerance(value, cosine or by_cosine or model in self.non_deterministic,
                             self.cosine_threshold, self.fp64_reference)
        cls = next((c for c in ("even_higher", "higher") if model in self.classes.get(c, ())),
                   "default")
        value = max(self.tolerances[cls], self.dtype_tolerance.get(dtype, 0.0))
        cosine = cosine or model in self.classes.get("cosine", ()) or \
            model in self.non_deterministic
        return Tolerance(value, cosine, self.cosine_threshold, self.fp64_reference)


def torchbench_tolerance(lists: Mapping[str, tuple[str, ...]], model: str, dtype: str, *,
                         training: bool, device: str, amp: bool,
                         freezing: bool) -> tuple[float, bool]:
    """(tolerance, cosine) as dynamo's TorchBench runner decides them
    (`get_tolerance_and_cosine_flag` of benchmarks/dynamo/torchbench.py): fp16 or autocast
    1e-3, 1e-2 for `higher_fp16`, 8e-2 for `even_higher` (under freezing its own lists
    first); bf16 1e-2 for `higher_bf16`; training on a GPU 1e-3, 8e-2 for `even_higher`,
    cosine for `cosine`; else 1e-4."""
    def listed(key: str) -> bool:
        return model in lists.get(key, ())

    if dtype == "float16" or amp:
        if freezing and listed("freezing.higher_fp16"):
            return 1e-2, False
        if freezing and listed("freezing.even_higher"):
            return 8e-2, False
        if listed("higher_fp16"):
            return 1e-2, False
        return (8e-2, False) if listed("even_higher") else (1e-3, False)
    if dtype == "bfloat16" and listed("higher_bf16"):
        return 1e-2, False
    if training and device in ("cuda", "xpu"):
        if listed("cosine"):
            return 1e-3, True
        return (8e-2, False) if listed("even_higher") else (1e-3, False)
    return 1e-4, False


# --- loading -----------------------------------------------------------------------------

def _fail(where: str, message: str) -> UserError:
    return UserError(f"{where}: {message}")


def _mapping(value: Any, where: str, known: tuple[str, ...] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, f"expected a mapping, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(where, f"keys must be strings, got {key!r}")
        if known is not None and key not in known:
            raise _fail(f"{where}.{key}", f"unknown key; known keys: {', '.join(known)}")
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(where, f"expected a list of model names, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise _fail(f"{where}[{index}]", f"expected a model name, got {item!r}")
    return tuple(value)


def _positive(value: Any, where: str, kind: Callable[[Any], Any] = float) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _fail(where, f"expected a positive number, got {value!r}")
    if kind is int and value != int(value):
        raise _fail(where, f"expected a positive integer, got {value!r}")
    return kind(value)


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, f"expected true or false, got {value!r}")
    return value


TOP_KEYS = ("skip", "batch_size", "tolerance", "slow", "very_slow", "non_deterministic")
SKIP_KEYS = ("all", "device", "training", "control_flow", "freezing")
TOLERANCE_KEYS = (*TOLERANCE_CLASSES, "dtype", "cosine_threshold", "fp64_reference", "classes")


def parse_compile_config(data: Any, source: str) -> CompileConfig:
    """Validate the parsed YAML `data`; errors read `SOURCE: key.path: problem`."""
    top = _mapping(data, source, TOP_KEYS)
    where = f"{source}: "
    skip = _mapping(top.get("skip"), where + "skip", SKIP_KEYS)
    devices = _mapping(skip.get("device"), where + "skip.device", DEVICE_KINDS)
    sizes = _mapping(top.get("batch_size"), where + "batch_size", None)
    tol = _mapping(top.get("tolerance"), where + "tolerance", TOLERANCE_KEYS)
    dtypes = _mapping(tol.get("dtype"), where + "tolerance.dtype", DTYPES)
    classes = _mapping(tol.get("classes"), where + "tolerance.classes", MODEL_CLASSES)
    defaults = CompileConfig()
    threshold = tol.get("cosine_threshold", defaults.cosine_threshold)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
            or not 0 < threshold <= 1:
        raise _fail(where + "tolerance.cosine_threshold",
                    f"expected a number in (0, 1], got {threshold!r}")
    return CompileConfig(
        skip_all=_names(skip.get("all"), where + "skip.all"),
        skip_device={k: _names(v, f"{where}skip.device.{k}") for k, v in devices.items()},
        skip_training=_names(skip.get("training"), where + "skip.training"),
        skip_control_flow=_names(skip.get("control_flow"), where + "skip.control_flow"),
        skip_freezing=_names(skip.get("freezing"), where + "skip.freezing"),
        batch_size={k: _positive(v, f"{where}batch_size.{k}", int) for k, v in sizes.items()},
        tolerances={c: _positive(tol[c], f"{where}tolerance.{c}") if c in tol
                    else defaults.tolerances[c] for c in TOLERANCE_CLASSES},
        dtype_tolerance={**defaults.dtype_tolerance,
                         **{k: _positive(v, f"{where}tolerance.dtype.{k}")
                            for k, v in dtypes.items()}},
        classes={k: _names(v, f"{where}tolerance.classes.{k}") for k, v in classes.items()},
        cosine_threshold=float(threshold),
        fp64_reference=_bool(tol.get("fp64_reference", True), where + "tolerance.fp64_reference"),
        slow=_names(top.get("slow"), where + "slow"),
        very_slow=_names(top.get("very_slow"), where + "very_slow"),
        non_deterministic=_names(top.get("non_deterministic"), where + "non_deterministic"),
    )
