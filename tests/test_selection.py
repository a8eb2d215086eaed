import re

import pytest

from torch_bench.config import build_run_config
from torch_bench.errors import UserError
from torch_bench.runner import plan_cases

MODELS = "mlp,lstm,tiny_bert,resnet18,a=torch_bench.zoo.builtin:mlp," \
         "b=torch_bench.zoo.builtin:mlp,c=torch_bench.zoo.builtin:mlp"


def planned(**flags):
    config = build_run_config(suites=["compile"], cli_options={"models": MODELS}, **flags)
    return [(p.case.name, p.case.params["mode"]) for p in plan_cases(config)]


def test_exclude_and_exclude_exact():
    names = {name for name, _ in planned(exclude=["bert|resnet", "^compile/a$"])}
    assert names == {"mlp", "lstm", "b", "c"}
    names = {name for name, _ in planned(exclude_exact=["mlp", "compile/b"])}
    assert names == {"lstm", "tiny_bert", "resnet18", "a", "c"}
    assert {n for n, _ in planned(filter="mlp", exclude_exact=["ml"])} == {"mlp"}


@pytest.mark.parametrize("total", [1, 2, 3, 7, 10])
def test_every_model_lands_in_exactly_one_partition(total):
    everything = planned()
    shards = [planned(total_partitions=total, partition_id=i) for i in range(total)]
    assert sorted(case for shard in shards for case in shard) == sorted(everything)
    owners = {}
    for i, shard in enumerate(shards):
        for name, _ in shard:
            assert owners.setdefault(name, i) == i  # both modes of a model share its shard
    sizes = [len({n for n, _ in shard}) for shard in shards]
    assert max(sizes) - min(sizes) <= 1  # balanced
    assert shards == [planned(total_partitions=total, partition_id=i) for i in range(total)]


def test_partitioning_does_not_depend_on_the_listing_order():
    config = dict(total_partitions=3, partition_id=1)
    forward = build_run_config(suites=["compile"], cli_options={"models": MODELS}, **config)
    backward = build_run_config(suites=["compile"], **config,
                                cli_options={"models": ",".join(MODELS.split(",")[::-1])})
    assert {p.case.name for p in plan_cases(forward)} == \
        {p.case.name for p in plan_cases(backward)}


@pytest.mark.parametrize("flags, message", [
    ({"total_partitions": 2}, "--total-partitions and --partition-id go together"),
    ({"total_partitions": 2, "partition_id": 2}, "--partition-id: expected 0 to 1"),
    ({"total_partitions": 0, "partition_id": 0}, "--total-partitions: expected a positive"),
    ({"exclude": ["("]}, "--exclude: '(' is not a regular expression"),
])
def test_bad_selection_flags(flags, message):
    with pytest.raises(UserError, match=re.escape(message)):
        build_run_config(suites=["compile"], **flags)


def test_partition_of_is_round_robin_over_sorted_names():
    from torch_bench.config import partition_of

    assert partition_of(["c", "a", "b", "a", "d"], 2) == {"a": 0, "b": 1, "c": 0, "d": 1}
