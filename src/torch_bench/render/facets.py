"""The facets a user filters and overlays by: a declarative table of where each one is read
from (a result's params, or the run's environment)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Facet:
    key: str  # used in HTML data attributes and in the series data files
    label: str
    param_names: tuple[str, ...] = ()  # first present param wins
    env_field: str | None = None  # read from the run's environment instead


FACETS: tuple[Facet, ...] = (
    Facet("model", "model", ("model", "model_name")),
    Facet("dtype", "dtype", ("dtype", "precision")),
    Facet("batch_size", "batch size", ("batch_size", "mini_batch", "batch")),
    Facet("seq_length", "sequence length", ("seq_length", "sequence_length", "seq_len")),
    Facet("device", "device", ("device",)),
    Facet("mode", "mode", ("mode",)),
    Facet("backend", "backend", ("backend",)),
    Facet("gpu", "GPU", env_field="gpu"),
)

PARAM_FACETS = tuple(f for f in FACETS if f.env_field is None)


def param_facet_value(facet: Facet, params: Mapping[str, Any]) -> str | None:
    for name in facet.param_names:
        if name in params and params[name] is not None:
            return str(params[name])
    return None


def param_for_facet(facet: Facet, params: Mapping[str, Any]) -> str | None:
    """The name of the param that carries this facet in `params`, if any."""
    return next((name for name in facet.param_names if name in params), None)
