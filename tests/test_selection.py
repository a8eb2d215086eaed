import re
from types import SimpleNamespace

import pytest

from torch_bench.config import build_run_config
from torch_bench.errors import UserError
from torch_bench.runner import plan_cases
from torch_bench.zoo.choices import apply_tf32, check_backend, parse_optimizer

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


def test_filter_and_exclude_ignore_case_as_dynamo_does():
    assert {n for n, _ in planned(filter="MLP$")} == {"mlp"}
    assert "tiny_bert" not in {n for n, _ in planned(exclude=["BERT"])}
    assert {n for n, _ in planned(exclude_exact=["MLP"])} >= {"mlp"}  # exact stays exact


def test_a_selection_matching_nothing_is_an_error(cli):
    done = cli("run", "--suite", "rnns", "--filter", "no-such-variant", "--dry-run")
    assert done.returncode == 2 and "no case matches" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_partition_of_a_real_selection_is_not_an_error():
    config = build_run_config(suites=["compile"], cli_options={"models": "mlp"},
                              total_partitions=2, partition_id=1)
    assert plan_cases(config) == []


def test_backend_is_checked_against_what_torch_registers():
    assert check_backend("inductor", known=lambda: ["eager", "inductor"]) == "inductor"
    with pytest.raises(ValueError, match="unknown torch.compile backend 'inductr'.*inductor"):
        check_backend("inductr", known=lambda: ["eager", "inductor"])
    with pytest.raises(UserError, match="backend.*unknown torch.compile backend 'nope'"):
        build_run_config(suites=["compile"], cli_options={"backend": "nope"})
    config = build_run_config(suites=["compile"], cli_options={"backend": "aot_eager"})
    assert config.options["compile"]["backend"] == "aot_eager"  # debug backends count


def test_optimizer_is_any_torch_optim_class():
    assert parse_optimizer("RMSprop") == "rmsprop"
    config = build_run_config(suites=["training"], cli_options={"optimizer": "Adagrad"})
    assert config.options["training"]["optimizer"] == "adagrad"
    with pytest.raises(UserError, match="unknown optimizer 'adamm'"):
        build_run_config(suites=["training"], cli_options={"optimizer": "adamm"})


@pytest.mark.parametrize("spelling, short, torch_name", [
    ("fp16", "fp16", "float16"), ("float16", "fp16", "float16"), ("half", "fp16", "float16"),
    ("bf16", "bf16", "bfloat16"), ("BFloat16", "bf16", "bfloat16"), ("fp32", "fp32", "float32"),
])
def test_one_dtype_vocabulary_for_every_suite(spelling, short, torch_name):
    config = build_run_config(suites=["transformers", "compile"],
                              cli_options={"dtype": spelling})
    assert config.options["transformers"]["dtype"] == (short,)
    assert config.options["compile"]["dtype"] == (torch_name,)


def test_dtype_lists_run_each_and_unknown_dtypes_are_named():
    config = build_run_config(suites=["compile"], cli_options={"models": "mlp",
                                                                "dtype": "fp32,bf16"})
    assert {p.case.params["dtype"] for p in plan_cases(config)} == {"float32", "bfloat16"}
    with pytest.raises(UserError, match="unknown dtype 'int8'"):
        build_run_config(suites=["compile"], cli_options={"dtype": "int8"})
    with pytest.raises(UserError, match="dtype float64 is not supported"):
        build_run_config(suites=["transformers"], cli_options={"dtype": "double"})


def test_tf32_is_set_and_recorded_on_cuda_only():
    fake = SimpleNamespace(backends=SimpleNamespace(
        cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False)),
        cudnn=SimpleNamespace(allow_tf32=False)))
    assert apply_tf32(fake, "cpu") == {}
    assert fake.backends.cuda.matmul.allow_tf32 is False
    assert apply_tf32(fake, "cuda:0") == {"tf32": {"matmul": True, "cudnn": True}}
    assert fake.backends.cuda.matmul.allow_tf32 and fake.backends.cudnn.allow_tf32


def test_freezing_skips_the_models_listed_for_it_in_inference_only(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("skip: {freezing: [mlp]}\n")
    config = build_run_config(suites=["compile"], cli_options={
        "models": "mlp,lstm", "freezing": "true", "compile_config": str(path)})
    cases = {(p.case.name, p.case.params["mode"]): p.case for p in plan_cases(config)}
    assert cases[("mlp", "inference")].options["skip"] == "listed in skip.freezing"
    assert cases[("lstm", "inference")].params["freezing"] is True
    assert "freezing" not in cases[("mlp", "training")].params
    assert cases[("mlp", "training")].options["skip"] is None


@pytest.mark.parametrize("suite, recorded", [
    ("rnns", "mini_batch"), ("cnns", "mini_batch"), ("transformers", "batch_size"),
    ("compile", "batch_size"), ("training", "batch_size")])
def test_one_batch_size_list_for_every_suite(suite, recorded):
    config = build_run_config(suites=[suite], cli_options={"batch_size": "2,4"})
    assert sorted({p.case.params[recorded] for p in plan_cases(config)}) == [2, 4]


def test_older_batch_size_names_still_work_as_flags_and_yaml_keys():
    yaml = {"options": {"rnns": {"mini_batch": 3}, "transformers": {"batch_sizes": [1, 2]}}}
    config = build_run_config(yaml_data=yaml, suites=["rnns", "transformers"])
    assert config.options["rnns"]["batch_size"] == (3,)
    assert config.options["transformers"]["batch_size"] == (1, 2)
    from torch_bench.cli import build_parser

    for flag in ("--batch-size", "--mini-batch", "--batch-sizes"):
        args = build_parser().parse_args(["run", "--suite", "rnns", flag, "5"])
        assert args.suite_opt_batch_size == "5"
