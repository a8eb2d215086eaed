"""Presets: every default of `torch-bench run` set to a seed tool's own, for its users
(`--preset hf|fastrnns|dynamo|training`). A preset is a configuration in the layout of a
`--config` file, laid under it: the file's values win over the preset's, and flags over both.
Without a preset our defaults hold.

The seeds' defaults, from their own argument parsers:
- hf, Hugging Face's `PyTorchBenchmarkArguments`: batch_sizes [8], sequence_lengths
  [8, 32, 128, 512], inference on and training off, the fastest of its repeats (min), the GPU
  when there is one (`cuda` unless `--no_cuda`).
- fastrnns, PyTorch's `benchmarks/fastrnns/bench.py`: groups cnns and rnns, device cuda,
  warmup 10, nloops 100, its table printed with `--sep ' '` (the sizes are ours already).
- dynamo, `benchmarks/dynamo/common.py`: the compile suite on the GPU when there is one, 30
  timed repetitions (`--repeat`), a 2000 s timeout a model.
- training, dynamo's `training_loss.py`: 10 epochs of 1,000 samples in batches of 8, Adam at
  lr 5e-5, and its loss check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch_bench.errors import UserError


@dataclass(frozen=True)
class Preset:
    seed: str  # the tool whose defaults these are
    config: Mapping[str, Any]  # in the layout of a --config file
    gpu_when_available: bool = False  # the seed runs on the GPU whenever there is one
    notes: tuple[str, ...] = field(default_factory=tuple)


PRESETS: dict[str, Preset] = {
    "hf": Preset(
        "Hugging Face's benchmark utilities",
        {"suites": ["transformers"],
         "options": {"transformers": {"batch_size": [8], "seq_lengths": [8, 32, 128, 512],
                                      "mode": ["inference"], "statistic": "min"}}},
        gpu_when_available=True,
        notes=("--training adds the training benchmark, as in Hugging Face's",)),
    "fastrnns": Preset(
        "PyTorch's fastrnns (bench.py)",
        {"suites": ["rnns", "cnns"], "device": "cuda",
         "timing": {"warmup": 10, "nloops": 100},
         "options": {"rnns": {"sep": " "}, "cnns": {"sep": " "}}},
        notes=("--device cpu where there is no GPU",)),
    "dynamo": Preset(
        "PyTorch dynamo's TorchBench runner",
        {"suites": ["compile"], "timing": {"min_repeats": 30, "max_repeats": 30},
         "isolation": {"timeout_s": 2000}},
        gpu_when_available=True),
    "training": Preset(
        "PyTorch dynamo's training_loss.py",
        {"suites": ["training"],
         "options": {"training": {"epochs": 10, "samples": 1000, "batch_size": [8],
                                  "lr": 5e-5, "optimizer": "adam", "loss_rule": "seed"}}}),
}


def preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UserError(f"--preset: unknown preset {name!r}; choose from "
                        f"{', '.join(PRESETS)}") from None


def under(config: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """`config` laid over `base`: mappings merged key by key, any other value of `config`
    replacing `base`'s."""
    merged = dict(base)
    for key, value in config.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = under(value, merged[key])
        else:
            merged[key] = value
    return merged


def describe(name: str, chosen: Preset) -> str:
    """One line saying what the preset sets, printed at the start of a run."""
    config = chosen.config
    parts = [f"suites {','.join(config['suites'])}"]
    if "device" in config:
        parts.append(f"device {config['device']}")
    elif chosen.gpu_when_available:
        parts.append("device cuda when available")
    for section in ("timing", "isolation"):
        parts += [f"{key} {value}" for key, value in config.get(section, {}).items()]
    for suite, options in config.get("options", {}).items():
        parts += [f"{suite} {key} {_shown(value)}" for key, value in options.items()]
    text = f"preset {name}, the defaults of {chosen.seed}: {'; '.join(parts)}"
    return text + " (--config and flags override these" + \
        "".join(f"; {note}" for note in chosen.notes) + ")"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return repr(value) if isinstance(value, str) and not value.strip() else str(value)
