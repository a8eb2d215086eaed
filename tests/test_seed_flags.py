"""The seed tools' flags on `torch-bench run`, walked from the table in docs/migration.md
through the real parser: a flag marked same or alias gives the very run our flag gives, under
its seed's preset; a refused one exits 2 with one line naming ours. The table is the
documentation, so the two cannot drift apart."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from torch_bench.cli import build_parser
from torch_bench.cli.outputs import EXPORT_FLAGS, export_path
from torch_bench.cli.run import config_from_args
from torch_bench.cli.run_hf import log_path
from torch_bench.errors import UserError

PAGE = Path(__file__).resolve().parents[1] / "docs" / "migration.md"
HEADER = "| seed | seed's flag | here | ours |"
# What issue 49 found each seed's users typing, every one of which must have a row.
TRIED = {
    "hf": ["--sequence_lengths", "--batch_sizes", "--no_inference", "--training", "--fp16",
           "--repeat", "--only_pretrain_model", "--save_to_csv", "--env_print",
           "--trace_memory_line_by_line", "--no_speed", "--no_memory", "--log_print",
           "--log_filename"],
    "fastrnns": ["--rnns", "--group", "--print-json", "--cnns", "--cuda-pointwise-loop-level",
                 "--cuda-pointwise-block-count", "--cuda-pointwise-block-size", "--seqLength",
                 "--numLayers", "--inputSize", "--hiddenSize", "--miniBatch"],
    "dynamo": ["--accuracy", "--performance", "--only", "--training", "--float16", "--devices",
               "--inductor"],
}


def table_rows() -> list[tuple[str, str, str, str]]:
    text = PAGE.read_text()
    lines = text[text.index(HEADER):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        seed, theirs, status, ours = cells
        rows.append((seed, theirs.strip("`"), status, ours.strip("`")))
    return rows


ROWS = table_rows()


def parse(argv: list[str]):
    return build_parser(["run"]).parse_args(["run", *argv])


def outcome(argv: list[str]):
    """What the command line amounts to: the run configuration and every output asked for,
    or the error."""
    args = parse(argv)
    try:
        config = config_from_args(args)
    except UserError as exc:
        return "error", str(exc)
    outputs = {name: export_path(args, name) for name in EXPORT_FLAGS}
    return config.describe(), outputs, args.env_print, log_path(args), args.hf_csv


def visible_flags() -> set[str]:
    parser = build_parser(["run"])
    run = next(a for a in parser._actions if a.dest == "command").choices["run"]
    return {s for a in run._actions if a.help != "==SUPPRESS==" for s in a.option_strings}


def test_the_table_is_found_and_covers_what_users_tried():
    assert len(ROWS) > 50
    assert {status for *_, status, _ in ROWS} == {"same", "alias", "refused"}
    for seed, flags in TRIED.items():
        listed = {theirs.split()[0] for s, theirs, _, _ in ROWS if s == seed}
        assert not set(flags) - listed, seed


@pytest.mark.parametrize("seed,theirs,status,ours", [r for r in ROWS if r[2] != "refused"],
                         ids=lambda v: v if isinstance(v, str) else None)
def test_a_seed_flag_gives_the_run_our_flag_gives(seed, theirs, status, ours):
    preset = ["--preset", seed]
    assert outcome(preset + shlex.split(theirs)) == outcome(preset + shlex.split(ours))
    flag = theirs.split()[0]
    if status == "same":
        assert flag == ours.split()[0] and flag in visible_flags()
    else:
        assert flag != ours.split()[0]


@pytest.mark.parametrize("seed,theirs,status,ours", [r for r in ROWS if r[2] == "refused"],
                         ids=lambda v: v if isinstance(v, str) else None)
def test_a_refused_seed_flag_names_ours_on_one_line(seed, theirs, status, ours, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse(["--preset", seed, *shlex.split(theirs)])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1
    assert f"{theirs.split()[0]}: " in error
    assert re.search(re.escape(ours) + r"\b", error)


def test_list_flags_take_the_seeds_spaces_and_our_commas_alike():
    spaced = outcome(["--suite", "transformers", "--models", "tiny-bert", "tiny-t5",
                      "--seq-lengths", "8", "16"])
    commas = outcome(["--suite", "transformers", "--models", "tiny-bert,tiny-t5",
                      "--seq-lengths", "8,16"])
    assert spaced == commas
    options = spaced[0]["options"]["transformers"]
    assert options["models"] == ["tiny-bert", "tiny-t5"] and options["seq_lengths"] == [8, 16]


def test_mode_flags_keep_each_seeds_meaning_and_ours_wins():
    both = outcome(["--suite", "transformers,compile", "--training"])[0]["options"]
    assert both["transformers"]["mode"] == ["inference", "train"]  # Hugging Face: added
    assert both["compile"]["modes"] == ["training"]  # dynamo: instead of inference
    hf = outcome(["--suite", "transformers", "--preset", "hf", "--training"])[0]["options"]
    assert hf["transformers"]["mode"] == ["inference", "train"]  # Hugging Face: added
    dynamo = outcome(["--preset", "dynamo", "--training"])[0]["options"]
    assert dynamo["compile"]["modes"] == ["training"]  # dynamo: instead
    explicit = outcome(["--preset", "hf", "--training", "--mode", "inference"])[0]
    assert explicit["options"]["transformers"]["mode"] == ["inference"]
    nothing = outcome(["--preset", "hf", "--no_inference"])
    assert nothing[0] == "error" and "--training" in nothing[1]
    stray = outcome(["--suite", "rnns", "--training"])
    assert stray[0] == "error" and "--training: no selected suite" in stray[1]
