"""The environment as Hugging Face's benchmark utilities describe it (`environment_info`):
its keys, in its order, from a run document. Where the run did not record what a key asks
for, the value is "N/A", as Hugging Face writes it when psutil or NVML is missing. Written
first into `env.csv` and printed by `--env-print` under Hugging Face's heading."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from torch_bench.results.schema import Run

NA = "N/A"
SUITE = "transformers"
# platform.platform() begins with the system's display name; platform.system()'s own
SYSTEMS = {"macOS": "Darwin"}


def _known(value: Any) -> Any:
    return NA if value is None or value == "" else value


def _created(run: Run) -> datetime | None:
    try:
        return datetime.fromisoformat(run.created_at.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def _system(platform_text: Any) -> Any:
    if not isinstance(platform_text, str) or not platform_text:
        return NA
    first = platform_text.split("-")[0]
    return SYSTEMS.get(first, first)


def _options(run: Run) -> Mapping[str, Any]:
    options = (run.config or {}).get("options") or {}
    return options.get(SUITE) or {}


def hf_environment(run: Run) -> dict[str, Any]:
    """{Hugging Face's key: value} of `run`."""
    env, options = run.env or {}, _options(run)
    created = _created(run)
    gpus = env.get("gpus") if isinstance(env.get("gpus"), list) else []
    gpu = gpus[0] if gpus and isinstance(gpus[0], Mapping) else {}
    use_gpu = str((run.config or {}).get("device", "cpu")).startswith("cuda")
    info: dict[str, Any] = {
        "transformers_version": _known(env.get("transformers")),
        "framework": "PyTorch",
        "use_torchscript": bool(options.get("torchscript", False)),
        "framework_version": _known(env.get("torch")),
        "python_version": _known(env.get("python")),
        "system": _system(env.get("platform")),
        "cpu": _known(env.get("cpu_model")),
        "architecture": NA,  # platform.architecture() is not recorded
        "date": str(created.date()) if created else NA,
        "time": str(created.time()) if created else NA,
        "fp16": "fp16" in (options.get("dtype") or ()),
        "use_multiprocessing": not options.get("no_multi_process", False),
        "only_pretrain_model": options.get("head") == "base",
        "cpu_ram_mb": _known(env.get("ram_mb")),
        "use_gpu": use_gpu,
    }
    if use_gpu:
        info.update({
            "num_gpus": 1,  # Hugging Face's: it measures on one GPU
            "gpu": _known(gpu.get("name") or env.get("gpu_name")),
            "gpu_ram_mb": _known(gpu.get("memory_mb")),
            "gpu_power_watts": _known(gpu.get("power_limit_w")),
            "gpu_performance_state": _known(gpu.get("performance_state")),
        })
    info["use_tpu"] = False
    return info


def environment_lines(run: Run) -> list[str]:
    """Hugging Face's `env_print` block."""
    title = "ENVIRONMENT INFORMATION".center(40)
    return ["", 20 * "=" + title + 20 * "=",
            *(f"- {key}: {value}" for key, value in hf_environment(run).items()), ""]
