"""PyTorch dynamo's own `torchbench.yaml` (benchmarks/dynamo), read as it is.

Its layout differs from ours: tolerance classes are lists of models (`tolerance.higher:
[model]`), batch sizes are per mode (`batch_size.training.model`), lists nest through YAML
anchors (`- *DETECTRON2_MODELS`, an empty anchor being null), and it carries keys for parts
of dynamo's harness this project does not have. It is recognised by its tolerance lists or
its per-mode batch sizes (`is_dynamo_layout`) and turned into a `CompileConfig`:

- `skip.all`, `skip.device.<cpu|cuda|...>`, `skip.test.training`, `skip.control_flow`,
  `skip.freezing.<device>`, `only_training`, `slow`, `very_slow`, `non_deterministic`,
  `batch_size.<training|inference>`: as dynamo applies them;
- `tolerance`: dynamo's table (`torchbench.py`'s `get_tolerance_and_cosine_flag`), see
  `CompileConfig.tolerance_for`;
- every other key (`dont_change_batch_size`, `disable_cudagraph`, `dtype`, `accuracy`,
  `skip.multiprocess`, `tolerance.use_iou_for_bool_masks`, ...) is accepted and listed in
  `CompileConfig.unused`, so a user sees what has no effect here.

A value of the wrong kind (a number where dynamo has a list of model names) is an error
naming its key path.
"""

from __future__ import annotations

from typing import Any

from torch_bench.errors import UserError
from torch_bench.zoo.config import CompileConfig

# Keys read from dynamo's layout; anything else is accepted and listed as unused.
USED = {
    "batch_size": ("training", "inference"),
    "skip": ("all", "device", "test", "control_flow", "freezing"),
    "tolerance": ("higher", "even_higher", "higher_fp16", "higher_bf16", "cosine", "freezing"),
}
USED_LISTS = ("only_training", "slow", "very_slow", "non_deterministic")
TORCHBENCH_LISTS = ("higher", "even_higher", "higher_fp16", "higher_bf16", "cosine",
                    "freezing.higher_fp16", "freezing.even_higher")


def is_dynamo_layout(data: Any) -> bool:
    """Whether parsed YAML is dynamo's layout rather than ours."""
    if not isinstance(data, dict):
        return False
    tolerance, sizes = data.get("tolerance"), data.get("batch_size")
    listed = isinstance(tolerance, dict) and any(
        isinstance(tolerance.get(key), list) for key in ("higher", "even_higher", "cosine"))
    by_mode = isinstance(sizes, dict) and any(
        isinstance(sizes.get(mode), dict) for mode in ("training", "inference"))
    extra = isinstance(tolerance, dict) and any(
        key in tolerance for key in ("higher_fp16", "higher_bf16", "freezing"))
    return listed or by_mode or extra


def _fail(where: str, message: str) -> UserError:
    return UserError(f"{where}: {message}")


def names(value: Any, where: str) -> tuple[str, ...]:
    """A list of model names, nested lists (YAML anchors) flattened, nulls (an empty anchor)
    dropped."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(where, f"expected a list of model names, got {type(value).__name__}")
    found: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, list):
            found += names(item, f"{where}[{index}]")
        elif isinstance(item, str) and item.strip():
            found.append(item)
        elif item is not None:
            raise _fail(f"{where}[{index}]", f"expected a model name, got {item!r}")
    return tuple(dict.fromkeys(found))


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, f"expected a mapping, got {type(value).__name__}")
    return value


def _sizes(value: Any, where: str) -> dict[str, int]:
    sizes = {}
    for model, size in _mapping(value, where).items():
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise _fail(f"{where}.{model}", f"expected a positive integer, got {size!r}")
        sizes[str(model)] = size
    return sizes


def _unused(data: dict) -> tuple[str, ...]:
    unused = []
    for key, value in data.items():
        if key in USED and isinstance(value, dict):
            unused += [f"{key}.{sub}" for sub in value if sub not in USED[key]]
        elif key not in USED and key not in USED_LISTS:
            unused.append(key)
    tolerance = data.get("tolerance")
    freezing = tolerance.get("freezing") if isinstance(tolerance, dict) else None
    if isinstance(freezing, dict):
        unused += [f"tolerance.freezing.{k}" for k in freezing
                   if k not in ("higher_fp16", "even_higher")]
    return tuple(unused)


def parse_dynamo_config(data: dict, source: str) -> CompileConfig:
    where = f"{source}: "
    skip = _mapping(data.get("skip"), where + "skip")
    devices = _mapping(skip.get("device"), where + "skip.device")
    tests = _mapping(skip.get("test"), where + "skip.test")
    freezing_skip = skip.get("freezing")
    if isinstance(freezing_skip, list):  # a plain list in older files: every device
        freezing_by_device = {"*": names(freezing_skip, where + "skip.freezing")}
    else:
        freezing_by_device = {k: names(v, f"{where}skip.freezing.{k}") for k, v in
                              _mapping(freezing_skip, where + "skip.freezing").items()}
    sizes = _mapping(data.get("batch_size"), where + "batch_size")
    tolerance = _mapping(data.get("tolerance"), where + "tolerance")
    freezing_tol = _mapping(tolerance.get("freezing"), where + "tolerance.freezing")
    lists = {key: names(tolerance.get(key), f"{where}tolerance.{key}")
             for key in TORCHBENCH_LISTS if "." not in key}
    lists.update({f"freezing.{key}": names(freezing_tol.get(key),
                                           f"{where}tolerance.freezing.{key}")
                  for key in ("higher_fp16", "even_higher")})
    return CompileConfig(
        skip_all=names(skip.get("all"), where + "skip.all"),
        skip_device={k: names(v, f"{where}skip.device.{k}") for k, v in devices.items()},
        skip_training=names(tests.get("training"), where + "skip.test.training"),
        skip_control_flow=names(skip.get("control_flow"), where + "skip.control_flow"),
        skip_freezing=freezing_by_device.get("*", ()),
        skip_freezing_device={k: v for k, v in freezing_by_device.items() if k != "*"},
        batch_size_by_mode={mode: _sizes(sizes.get(mode), f"{where}batch_size.{mode}")
                            for mode in ("training", "inference")},
        only_training=names(data.get("only_training"), where + "only_training"),
        tolerance_rule="torchbench",
        torchbench_lists=lists,
        slow=names(data.get("slow"), where + "slow"),
        very_slow=names(data.get("very_slow"), where + "very_slow"),
        non_deterministic=names(data.get("non_deterministic"), where + "non_deterministic"),
        unused=_unused(data),
    )
