"""The model zoo of the compile suite: built-in tiny models and user models.

A zoo entry is a function returning `(model, example_inputs)`; `example_inputs` is a tuple of
positional arguments (a single tensor or a dict of keyword arguments is accepted too). The
function may take `batch_size` (an override from the configuration, or None for its default).
User models are referenced by a dotted path, `package.module:function`, optionally named:
`name=package.module:function` (the default name is the function's). Models of the
`torchbenchmark` package, when it is installed, are `torchbenchmark/NAME`.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

BUILTIN_MODELS: dict[str, str] = {
    "mlp": "torch_bench.zoo.builtin:mlp",
    "lstm": "torch_bench.zoo.builtin:lstm",
    "tiny_bert": "torch_bench.zoo.builtin:tiny_bert",
    "tiny_gpt2": "torch_bench.zoo.builtin:tiny_gpt2",
    "tiny_t5": "torch_bench.zoo.builtin:tiny_t5",
    "resnet18": "torch_bench.zoo.builtin:resnet18",
}

TORCHBENCH_PREFIX = "torchbenchmark/"
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class ZooRef:
    """A model by name and where its builder lives (`package.module:function`)."""

    name: str
    target: str


@dataclass(frozen=True)
class Example:
    model: Any  # torch.nn.Module (or any callable module-like object)
    args: tuple
    kwargs: Mapping[str, Any]


def parse_ref(text: str) -> ZooRef:
    """`mlp`, `package.module:function` or `name=package.module:function`."""
    text = text.strip()
    if text.startswith(TORCHBENCH_PREFIX) and _NAME.match(text[len(TORCHBENCH_PREFIX):]):
        return ZooRef(text[len(TORCHBENCH_PREFIX):], text)
    name, _, target = text.rpartition("=") if "=" in text else ("", "", text)
    if not target or ":" not in target:
        if target in BUILTIN_MODELS and not name:
            return ZooRef(target, BUILTIN_MODELS[target])
        raise ValueError(f"{text!r} is neither a built-in model ({', '.join(BUILTIN_MODELS)}) "
                         "nor a dotted path package.module:function")
    if not _TARGET.match(target):
        raise ValueError(f"{text!r}: expected package.module:function")
    name = name or target.rpartition(":")[2]
    if not _NAME.match(name):
        raise ValueError(f"{text!r}: model names may use letters, digits, '_', '-' and '.'")
    return ZooRef(name, target)


def parse_refs(text: str) -> tuple[ZooRef, ...]:
    refs = tuple(parse_ref(part) for part in str(text).split(",") if part.strip())
    if not refs:
        raise ValueError("expected at least one model")
    names = [r.name for r in refs]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"model name(s) given twice: {', '.join(duplicated)}")
    return refs


def format_ref(ref: ZooRef) -> str:
    if ref.target.startswith(TORCHBENCH_PREFIX):
        return ref.target
    return ref.name if BUILTIN_MODELS.get(ref.name) == ref.target else f"{ref.name}={ref.target}"


def load_builder(ref: ZooRef) -> Callable[..., Any]:
    if ref.target.startswith(TORCHBENCH_PREFIX):
        from torch_bench.zoo import torchbench

        return functools.partial(torchbench.load, ref.name)
    module_name, _, attr = ref.target.partition(":")
    builder = getattr(import_module(module_name), attr)
    if not callable(builder):
        raise TypeError(f"{ref.target} is not callable")
    return builder


def build(ref: ZooRef, batch_size: int | None = None) -> Example:
    """Import and call the entry's builder. Any exception propagates: the caller reports the
    model as failing to load."""
    builder = load_builder(ref)
    accepts = inspect.signature(builder).parameters
    made = builder(batch_size=batch_size) if "batch_size" in accepts else builder()
    if not (isinstance(made, tuple) and len(made) == 2):
        raise TypeError(f"{ref.target} must return (model, example_inputs), "
                        f"got {type(made).__name__}")
    model, inputs = made
    if isinstance(inputs, Mapping):
        return Example(model, (), dict(inputs))
    if isinstance(inputs, (tuple, list)):
        return Example(model, tuple(inputs), {})
    return Example(model, (inputs,), {})
