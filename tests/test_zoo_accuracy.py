import torch

from torch_bench.zoo.accuracy import compare, leaves
from torch_bench.zoo.config import Tolerance

TIGHT = Tolerance(1e-4)


def test_leaves_walk_nested_outputs():
    out = {"logits": torch.zeros(2), "aux": (torch.ones(1), [3])}
    assert [path for path, _ in leaves(out)] == ["out.logits", "out.aux[0]", "out.aux[1][0]"]


def test_within_tolerance_is_same_and_beyond_is_named():
    ref = (torch.ones(3), torch.zeros(2))
    assert compare(ref, (torch.ones(3) + 1e-6, torch.zeros(2)), TIGHT).same
    verdict = compare(ref, (torch.ones(3), torch.full((2,), 0.1)), TIGHT)
    assert not verdict.same and verdict.reason.startswith("out[1]: max abs diff 0.1")


def test_shape_count_and_integer_differences_fail():
    assert not compare(torch.ones(3), torch.ones(4), TIGHT).same
    assert not compare((torch.ones(1),), (torch.ones(1), torch.ones(1)), TIGHT).same
    assert not compare(torch.tensor([1, 2]), torch.tensor([1, 3]), TIGHT).same


def test_fp64_reference_forgives_what_eager_gets_as_wrong():
    exact = torch.tensor([1.0, 2.0], dtype=torch.float64)
    eager = torch.tensor([1.001, 2.0])  # eager itself is off by 1e-3
    close = torch.tensor([1.0, 2.001])  # as far from exact as eager, but elsewhere
    far = torch.tensor([1.1, 2.0])
    assert not compare(eager, close, TIGHT).same
    assert compare(eager, close, TIGHT, fp64=exact).same
    assert not compare(eager, far, TIGHT, fp64=exact).same
    assert not compare(eager, close, Tolerance(1e-4, fp64_reference=False), fp64=exact).same


def test_cosine_similarity_judges_direction():
    ref = torch.tensor([1.0, 2.0, 3.0])
    cosine = Tolerance(1e-4, cosine=True, cosine_threshold=0.999)
    assert compare(ref, ref * 1.5, cosine).same  # scaled: same direction
    assert not compare(ref, torch.tensor([3.0, 2.0, 1.0]), cosine).same


class Cache:
    def __init__(self, value):
        self.layers = [torch.full((2,), value)]
        self._scratch = object()  # private: not compared


def test_objects_in_outputs_are_compared_by_their_tensors():
    assert compare({"cache": Cache(1.0)}, {"cache": Cache(1.0)}, TIGHT).same
    verdict = compare({"cache": Cache(1.0)}, {"cache": Cache(2.0)}, TIGHT)
    assert not verdict.same and verdict.reason.startswith("out.cache.layers[0]:")
