"""Summary statistics over raw samples. Pure functions; no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Summary:
    """Statistics of one benchmark's samples, all in the samples' unit."""

    n: int
    median: float
    # Fields below are None only for results imported from a tool that does not report them.
    mean: float | None
    std: float | None  # sample standard deviation (ddof=1); 0 for a single sample
    iqr: float  # 75th minus 25th percentile, linear interpolation
    min: float | None
    max: float | None
    p90: float | None

    def to_dict(self) -> dict[str, float | int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: dict) -> Summary:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})

    @property
    def relative_iqr(self) -> float:
        """IQR / median: the spread torch.utils.benchmark warns about when it is high."""
        return self.iqr / self.median if self.median else float("inf")


def summarize(samples: Sequence[float]) -> Summary:
    """Summary of a non-empty sequence of samples."""
    if len(samples) == 0:
        raise ValueError("cannot summarize an empty list of samples")
    values = np.asarray(samples, dtype=float)
    q25, median, q75, p90 = np.percentile(values, [25, 50, 75, 90])
    return Summary(
        n=int(values.size),
        median=float(median),
        mean=float(values.mean()),
        std=float(values.std(ddof=1)) if values.size > 1 else 0.0,
        iqr=float(q75 - q25),
        min=float(values.min()),
        max=float(values.max()),
        p90=float(p90),
    )


def relative_iqr(samples: Sequence[float]) -> float:
    """IQR / median of the samples; infinite when the median is zero."""
    q25, median, q75 = np.percentile(np.asarray(samples, dtype=float), [25, 50, 75])
    return float((q75 - q25) / median) if median else float("inf")
