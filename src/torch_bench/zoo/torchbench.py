"""Models of the `torchbenchmark` package (pytorch/benchmark), where it is installed.

Referenced as `torchbenchmark/NAME` in `--models`. The package is not a dependency: without it,
such a model reports `model_fail_to_load` with the reason.
"""

from __future__ import annotations

PREFIX = "torchbenchmark/"


def load(name: str, batch_size: int | None = None, device: str = "cpu"):
    """`(module, example_inputs)` of torchbenchmark's model `name`, in eval configuration."""
    try:
        from torchbenchmark import load_model_by_name
    except ImportError as exc:
        raise ImportError(f"torchbenchmark/{name}: the torchbenchmark package is not "
                          f"importable ({exc})") from None
    model_class = load_model_by_name(name)
    if model_class is None:
        raise LookupError(f"torchbenchmark has no model {name!r}")
    benchmark = model_class(test="eval", device=device, batch_size=batch_size)
    return benchmark.get_module()
