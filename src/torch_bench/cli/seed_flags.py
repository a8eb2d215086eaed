"""The flags of the tools our users come from, on `torch-bench run`: Hugging Face's benchmark
utilities, PyTorch's fastrnns and dynamo's TorchBench runner. Each is taken with the seed's
meaning, spelled as the seed spells it (its lists space-separated, as there), or refused with
one line naming ours. docs/migration.md has the table of every one of them;
tests/test_seed_flags.py walks that table through this parser."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

# Our suite options under the seeds' spellings: {option: extra flags}.
SEED_SPELLINGS: dict[str, tuple[str, ...]] = {
    "batch_size": ("--batch_sizes",),  # Hugging Face
    "seq_lengths": ("--sequence_lengths",),
    "trace_memory": ("--trace_memory_line_by_line",),
    "no_speed": ("--no_speed",),
    "no_memory": ("--no_memory",),
    "no_multi_process": ("--no_multi_process",),
    "variants": ("--rnns",),  # fastrnns
    "variable_lstms": ("--variable_lstms",),
    "models": ("--only",),  # dynamo
    "evaluate": ("--evaluation",),  # dynamo's training_loss.py
}

# Switches that set one of our values: (flags, destination, value).
SEED_SWITCHES = (
    (("--fp16",), "suite_opt_dtype", "fp16"),  # Hugging Face
    (("--only_pretrain_model",), "suite_opt_head", "base"),
    (("--no_cuda",), "device", "cpu"),
    (("--float16",), "suite_opt_dtype", "fp16"),  # dynamo
    (("--bfloat16",), "suite_opt_dtype", "bf16"),
    (("--float32",), "suite_opt_dtype", "fp32"),
    (("--accuracy",), "suite_opt_check", "accuracy"),
    (("--performance",), "suite_opt_check", "performance"),
    (("--inductor",), "suite_opt_backend", "inductor"),
)

# Flags with no same-meaning counterpart: {flags: what to use instead}.
REFUSED: dict[tuple[str, ...], str] = {
    ("--repeat",): "did you mean --min-repeats N --max-repeats N? (samples per metric; the "
                   "calls in each sample are calibrated, not a fixed number)",
    ("--save_to_csv",): "did you mean --hf-csv DIR? (Hugging Face's CSV files, into DIR)",
    ("--inference_time_csv_file", "--inference_memory_csv_file", "--train_time_csv_file",
     "--train_memory_csv_file", "--env_info_csv_file"):
        "did you mean --hf-csv DIR? (it writes inference_time.csv, inference_memory.csv, "
        "train_time.csv, train_memory.csv and env.csv into DIR)",
    ("--fp16_opt_level",): "apex's optimisation level has no equivalent; --dtype fp16 runs the "
                           "model in half precision",
    ("--cuda-pointwise-loop-level", "--cuda_pointwise_loop_level",
     "--cuda-pointwise-block-count", "--cuda_pointwise_block_count",
     "--cuda-pointwise-block-size", "--cuda_pointwise_block_size"):
        "the tensor-expression fuser's CUDA tuning has no equivalent; did you mean --fuser or "
        "--executor?",
    ("--amp-dtype",): "did you mean --dtype fp16 or --dtype bf16 (with --amp)?",
}

# Hugging Face's and dynamo's mode flags: one spelling, each seed's own meaning (see
# `seed_mode_options`).
MODE_FLAGS = {"--training": "seed_training", "--inference": "seed_inference",
              "--no_inference": "seed_no_inference"}


class Refused(argparse.Action):
    """A seed's flag with no counterpart here: one line naming what to use, exit 2."""

    def __init__(self, option_strings, dest, instead: str = "", **kwargs):
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs="*",
                         default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        self.instead = instead

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string}: {self.instead}")


class JoinedList(argparse.Action):
    """A list flag given as the seeds give lists (`--sequence_lengths 8 32 512`) or as ours
    (`--seq-lengths 8,32,512`), stored as our comma-separated text; the last flag wins."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, ",".join(values))


class AppendJoined(argparse.Action):
    """fastrnns' `--group rnns cnns` as one more `--suite rnns,cnns`."""

    def __call__(self, parser, namespace, values, option_string=None):
        if not values:
            parser.error(f"{option_string}: name at least one group (rnns, cnns)")
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []),
                                       ",".join(values)])


class PrintJson(argparse.Action):
    """fastrnns' `--print-json [oss|pep]`: that export on standard output."""

    TARGETS = {"oss": "export_oss", "pep": "export_aipep"}

    def __call__(self, parser, namespace, values, option_string=None):
        choice = values or "oss"
        if choice not in self.TARGETS:
            parser.error(f"{option_string}: expected oss or pep, got {choice!r}")
        setattr(namespace, self.TARGETS[choice], "-")


def add_seed_flags(parser: argparse.ArgumentParser) -> None:
    """The seeds' flags that are not suite options, hidden from --help (docs/migration.md
    lists them)."""
    hidden = argparse.SUPPRESS
    for flags, dest, value in SEED_SWITCHES:
        parser.add_argument(*flags, dest=dest, action="store_const", const=value, help=hidden)
    for flag, dest in MODE_FLAGS.items():
        parser.add_argument(flag, dest=dest, action="store_true", help=hidden)
    parser.add_argument("--devices", dest="device", help=hidden)  # dynamo
    parser.add_argument("--group", dest="suite", nargs="*", action=AppendJoined, help=hidden)
    parser.add_argument("--print-json", nargs="?", action=PrintJson, dest="print_json",
                        help=hidden)
    parser.add_argument("--output", dest="export_dynamo_csv", help=hidden)  # dynamo's CSV
    for flags, instead in REFUSED.items():
        parser.add_argument(*flags, action=Refused, instead=instead)


def seed_mode_options(args: argparse.Namespace, suites: Iterable[str],
                      declared: Mapping[str, set[str]]) -> dict[str, str]:
    """The suite options `--training`, `--inference` and `--no_inference` stand for, given the
    selected suites and the options each declares ({suite: option names}). Hugging Face's
    `--training` adds the training benchmark to inference (on by default, off with
    `--no_inference`); dynamo's `--training` and `--inference` choose one mode. An explicit
    `--mode`/`--modes` wins."""
    training = getattr(args, "seed_training", False)
    inference = getattr(args, "seed_inference", False)
    no_inference = getattr(args, "seed_no_inference", False)
    if not (training or inference or no_inference):
        return {}
    if inference and no_inference:
        raise_usage("--inference and --no_inference contradict each other")
    options: dict[str, str] = {}
    for suite in suites:
        names = declared.get(suite, set())
        if "mode" in names and getattr(args, "suite_opt_mode", None) is None:  # transformers
            modes = [m for m, on in (("inference", not no_inference), ("train", training)) if on]
            if not modes:
                raise_usage("--no_inference: without --training nothing is left to run")
            options["mode"] = ",".join(modes)
        if "modes" in names and getattr(args, "suite_opt_modes", None) is None:  # compile
            modes = [m for m, on in (("inference", inference), ("training", training)) if on]
            if modes:
                options["modes"] = ",".join(modes)
    if not any({"mode", "modes"} & declared.get(suite, set()) for suite in suites):
        flag = next(f for f, d in MODE_FLAGS.items() if getattr(args, d, False))
        raise_usage(f"{flag}: no selected suite takes this option (transformers and compile "
                    "do)")
    return options


def raise_usage(message: str) -> None:
    from torch_bench.errors import UserError

    raise UserError(message)
