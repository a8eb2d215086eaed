"""Reading a YAML file a user wrote, with errors that name the file and the line."""

from __future__ import annotations

from typing import Any

import yaml

from torch_bench.errors import UserError


def read_yaml(path: str, what: str = "configuration file") -> Any:
    """The decoded document (None for an empty file); UserError for a missing or bad file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark else ""
        raise UserError(f"{path}: not valid YAML{line}") from None
