"""One dtype vocabulary for every suite: `--dtype` accepts fp32/float32/float, fp16/float16/
half, bf16/bfloat16 and fp64/float64/double, whichever suite reads it. Each suite records its
own established spelling (the transformers suite HF's fp16, the compile suite torch's
float16), so stored series keep their names."""

from __future__ import annotations

from collections.abc import Callable, Sequence

ALIASES = {
    "float32": ("fp32", "float32", "float", "single"),
    "float16": ("fp16", "float16", "half"),
    "bfloat16": ("bf16", "bfloat16"),
    "float64": ("fp64", "float64", "double"),
}
TORCH_NAME = {alias: name for name, aliases in ALIASES.items() for alias in aliases}
SHORT_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}


def torch_name(text: str) -> str:
    """The torch name (float16, ...) of any accepted spelling."""
    name = TORCH_NAME.get(str(text).strip().lower())
    if name is None:
        raise ValueError(f"unknown dtype {text!r}; use fp32, fp16 (float16, half), "
                         "bf16 (bfloat16) or fp64")
    return name


def dtype_list_parser(allowed: Sequence[str], short: bool) -> Callable[[str], tuple[str, ...]]:
    """A parser for a comma-separated dtype list: each must be one of `allowed` (torch
    names); the result in short (fp16) or torch (float16) spelling."""

    def parse(text: str) -> tuple[str, ...]:
        names = [torch_name(part) for part in str(text).split(",") if part.strip()]
        if not names:
            raise ValueError(f"expected a comma-separated list of dtypes, got {text!r}")
        refused = [n for n in names if n not in allowed]
        if refused:
            raise ValueError(f"dtype {refused[0]} is not supported here; "
                             f"supported: {', '.join(SHORT_NAME[a] for a in allowed)}")
        unique = tuple(dict.fromkeys(names))
        return tuple(SHORT_NAME[n] for n in unique) if short else unique

    return parse
