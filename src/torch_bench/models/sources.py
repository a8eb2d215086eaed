"""Where a transformer's configuration comes from: a built-in tiny name, a local
`config.json` (or a folder holding one), or a Hugging Face Hub id.

Only the configuration is ever fetched (weights are random). A Hub id never hangs: offline
mode (`HF_HUB_OFFLINE`, `TRANSFORMERS_OFFLINE`) is honoured, the local cache is tried first,
and the Hub is probed with a short timeout before anything is downloaded.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

from torch_bench.models.tiny import TINY_CONFIGS, tiny_config

HUB_HOST = "huggingface.co"
PROBE_TIMEOUT_S = 3.0
FETCH_TIMEOUT_S = 10
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


class ModelLoadError(Exception):
    """The model reference cannot be turned into a configuration; the message says why."""


def reference_kind(ref: str) -> str:
    """`builtin`, `file` or `hub`: how `ref` will be resolved (no I/O beyond a stat)."""
    if ref in TINY_CONFIGS:
        return "builtin"
    if ref.endswith(".json") or ref.startswith((".", os.sep, "~")) or os.path.exists(ref):
        return "file"  # a Hub id is "name" or "org/name", never an existing path
    return "hub"


def load_config(ref: str):
    """The transformers configuration named by `ref`; raises ModelLoadError."""
    kind = reference_kind(ref)
    if kind == "builtin":
        return tiny_config(ref)
    if kind == "file":
        return _config_from_file(Path(ref))
    return _config_from_hub(ref)


def _config_from_file(path: Path):
    from transformers import AutoConfig

    path = path.expanduser()
    file = path / "config.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(f"{file}: no such configuration file") from None
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{file}: not a readable JSON configuration ({exc})") from None
    if not isinstance(data, dict) or "model_type" not in data:
        raise ModelLoadError(f"{file}: a transformers config.json needs a 'model_type' key")
    model_type = data.pop("model_type")
    try:
        return AutoConfig.for_model(model_type, **data)
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"{file}: model_type {model_type!r}: {exc}") from None


def hub_offline() -> str | None:
    """The variable that puts the Hub offline, if one is set."""
    for name in OFFLINE_VARIABLES:
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return name
    return None


def hub_reachable(host: str = HUB_HOST, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the Hub opens within `timeout_s` (name lookup included,
    which has no timeout of its own, hence the thread)."""
    outcome: list[bool] = []

    def probe():
        try:
            socket.create_connection((host, 443), timeout=timeout_s).close()
            outcome.append(True)
        except OSError:
            outcome.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return bool(outcome and outcome[0])


def _config_from_hub(ref: str):
    from transformers import AutoConfig

    try:  # a configuration already in the local cache needs no network
        return AutoConfig.from_pretrained(ref, local_files_only=True)
    except (OSError, ValueError):
        pass
    offline = hub_offline()
    builtin = ", ".join(TINY_CONFIGS)
    if offline:
        raise ModelLoadError(f"model {ref!r}: not in the local Hugging Face cache and {offline} "
                             f"is set; use a local config.json or a built-in model ({builtin})")
    if not hub_reachable():
        raise ModelLoadError(f"model {ref!r}: the Hugging Face Hub ({HUB_HOST}) is unreachable "
                             f"and the configuration is not cached; use a local config.json or "
                             f"a built-in model ({builtin})")
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(FETCH_TIMEOUT_S))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(FETCH_TIMEOUT_S))
    try:
        return AutoConfig.from_pretrained(ref)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"model {ref!r}: cannot fetch its configuration ({exc})") from None
