"""Comparing a compiled run with eager: tensors pulled out of nested outputs and judged within
a tolerance, with an fp64 reference or cosine similarity as fallbacks.

The rule for one pair of floating-point tensors (reference `ref`, candidate `res`):
1. same shape, and `allclose(res, ref, rtol=tol, atol=tol)` -> same;
2. otherwise, with a float64 reference `fp64`: same when
   `rmse(res, fp64) <= FP64_MULTIPLIER * rmse(ref, fp64) + tol / 10`, i.e. the candidate is
   not much further from the exact answer than eager itself is;
3. with cosine similarity asked for (instead of 1 and 2): same when the cosine similarity of
   the flattened tensors is at least the threshold.
Integer and boolean tensors must be equal; non-tensor leaves must compare equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from torch_bench.zoo.config import Tolerance

FP64_MULTIPLIER = 2.0


@dataclass(frozen=True)
class Verdict:
    same: bool
    reason: str = ""  # which leaf differed and by how much


PLAIN = (int, float, complex, str, bytes, bool, type(None))
MAX_DEPTH = 8


def leaves(obj: Any, path: str = "out", depth: int = 0) -> list[tuple[str, Any]]:
    """(path, leaf) pairs of nested tuples, lists and dicts. Leaves are tensors and plain
    values; other objects (a key-value cache, say) are walked through their attributes, and
    what is neither is left out rather than compared by identity."""
    if isinstance(obj, torch.Tensor) or isinstance(obj, PLAIN):
        return [(path, obj)]
    if depth >= MAX_DEPTH:
        return []
    if isinstance(obj, Mapping):
        return [pair for key in obj for pair in leaves(obj[key], f"{path}.{key}", depth + 1)]
    if isinstance(obj, Sequence):
        return [pair for i, item in enumerate(obj)
                for pair in leaves(item, f"{path}[{i}]", depth + 1)]
    if hasattr(obj, "to_tuple"):
        return leaves(obj.to_tuple(), path, depth + 1)
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        return [pair for key in sorted(attributes) if not key.startswith("_")
                for pair in leaves(attributes[key], f"{path}.{key}", depth + 1)]
    return []


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.sqrt(torch.mean((a.detach().double() - b.detach().double()) ** 2)))


def cosine_similarity(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach().double().flatten(), b.detach().double().flatten()
    if a.norm() == 0 and b.norm() == 0:
        return 1.0
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0, eps=1e-12))


def _compare_tensors(name: str, ref: torch.Tensor, res: torch.Tensor,
                     fp64: torch.Tensor | None, tol: Tolerance) -> Verdict:
    if ref.shape != res.shape:
        return Verdict(False, f"{name}: shape {tuple(res.shape)} vs eager {tuple(ref.shape)}")
    if not ref.is_floating_point():
        same = torch.equal(ref, res.to(ref.dtype))
        return Verdict(same, "" if same else f"{name}: integer values differ")
    ref, res = ref.detach().float(), res.detach().float()
    if tol.cosine:
        cos = cosine_similarity(ref, res)
        ok = cos >= tol.cosine_threshold
        return Verdict(ok, "" if ok else f"{name}: cosine similarity {cos:.6f} < "
                                         f"{tol.cosine_threshold}")
    if torch.allclose(res, ref, rtol=tol.value, atol=tol.value, equal_nan=True):
        return Verdict(True)
    worst = float((res - ref).abs().nan_to_num(float("inf")).max())
    if fp64 is not None and tol.fp64_reference:
        res_error, ref_error = _rmse(res, fp64), _rmse(ref, fp64)
        if res_error <= FP64_MULTIPLIER * ref_error + tol.value / 10:
            return Verdict(True)
        return Verdict(False, f"{name}: max abs diff {worst:.3g} > tol {tol.value:g}; rmse to "
                              f"fp64 {res_error:.3g} vs eager's {ref_error:.3g}")
    return Verdict(False, f"{name}: max abs diff {worst:.3g} > tol {tol.value:g}")


def compare(ref: Any, res: Any, tol: Tolerance, fp64: Any = None) -> Verdict:
    """Judge `res` against `ref` (and `fp64`, a float64 run of the same, when given)."""
    ref_leaves, res_leaves = leaves(ref), leaves(res)
    if len(ref_leaves) != len(res_leaves):
        return Verdict(False, f"{len(res_leaves)} outputs vs eager's {len(ref_leaves)}")
    fp64_leaves = leaves(fp64) if fp64 is not None else [(None, None)] * len(ref_leaves)
    if len(fp64_leaves) != len(ref_leaves):
        fp64_leaves = [(None, None)] * len(ref_leaves)
    for (name, a), (_, b), (_, c) in zip(ref_leaves, res_leaves, fp64_leaves, strict=True):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            verdict = _compare_tensors(name, a, b, c if isinstance(c, torch.Tensor) else None,
                                       tol)
        else:
            verdict = Verdict(a == b, "" if a == b else f"{name}: {b!r} vs eager {a!r}")
        if not verdict.same:
            return verdict
    return Verdict(True)
