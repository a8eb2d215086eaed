"""Every export format through `torch-bench export`, read back as the seed tool's consumers
read it: fastrnns' OSS object and AI-PEP lines, Hugging Face's CSV set, dynamo's CSV. A format
with nothing to say for a run exits 2 with the reason and writes no file."""

from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import TINY_RNN
from support.commands import torch_bench
from torch_bench.cli.outputs import EXPORT_FLAGS
from torch_bench.formats import EXPORTERS

FAST = ["--threads", "1", "--max-time", "0.2", "--min-repeats", "3", "--max-repeats", "10",
        "--warmup", "1", "--processes", "1", "--no-preflight"]
RUNS = {
    "rnns": ["--suite", "rnns", "--variants", "aten", *TINY_RNN],
    "transformers": ["--suite", "transformers", "--models", "tiny-bert", "--batch-size", "1",
                     "--seq-lengths", "8", "--mode", "inference", *FAST],
    "compile": ["--suite", "compile", "--models", "mlp", "--backend", "aot_eager", "--modes",
                "inference", *FAST],
}


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """{suite: run document path} of one small run of each seed's suite."""
    folder = tmp_path_factory.mktemp("runs")
    paths = {}
    for suite, args in RUNS.items():
        done = torch_bench(folder, "run", *args, "--out", f"{suite}.json")
        assert done.returncode == 0, done.stderr
        paths[suite] = folder / f"{suite}.json"
    return paths


def read_oss(text: str) -> dict:
    """As fastrnns' consumers: {group: {runner: time}}."""
    document = json.loads(text)
    assert all(isinstance(v, float) for group in document.values() for v in group.values())
    return document


def read_aipep(text: str) -> list[dict]:
    """As AI-PEP's parser: every `Caffe2Observer ` line is a NET record, its value a string."""
    records = [json.loads(line[len("Caffe2Observer "):]) for line in text.splitlines()
               if line.startswith("Caffe2Observer ")]
    assert all(r["type"] == "NET" and float(r["value"]) > 0 for r in records)
    return records


def read_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


# format -> (the suite whose run a seed consumer reads it from, the check of what it reads)
CONSUMERS = {
    "oss": ("rnns", lambda text: read_oss(text)["lstm"]["aten"] > 0),
    "aipep": ("rnns", lambda text: {r["metric"] for r in read_aipep(text)}
              >= {"lstm-aten", "lstm-backward-aten"}),
    "csv": ("transformers", lambda text: [row["model"] for row in read_csv(text)
                                          if row["metric"] == "latency"] == ["tiny-bert"]),
    # dynamo's summaries read its CSV with pandas and take the geometric mean of `speedup`
    "dynamo-csv": ("compile", lambda text: [(r["dev"], r["name"], float(r["speedup"]) > 0)
                                            for r in read_csv(text)] == [("cpu", "mlp", True)]),
    # test-infra's upload action reads JSON lines, each record needing a `metric`
    "pytorch-v3": ("compile", lambda text: {(r["model"]["name"], r["metric"]["name"])
                                            for r in map(json.loads, text.splitlines())
                                            if "metric" in r} >= {("mlp", "speedup")}),
}


def test_every_format_has_a_consumer_check():
    assert set(CONSUMERS) == set(EXPORTERS) == set(EXPORT_FLAGS)


@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_export_format_writes_what_the_seed_consumer_reads(documents, name, tmp_path):
    suite, reads = CONSUMERS[name]
    out = tmp_path / f"out.{name}"
    done = torch_bench(tmp_path, "export", str(documents[suite]), "--format", name,
                       "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert reads(out.read_text())
    by_flag = tmp_path / f"flag.{name}"
    torch_bench(tmp_path, "export", str(documents[suite]), EXPORT_FLAGS[name], str(by_flag))
    assert by_flag.read_text() == out.read_text()


# format -> (a run document, the results of it kept) that format has nothing to say about
NOTHING_TO_SAY = {
    "oss": ("rnns", lambda r: r["unit"] != "ms"),  # memory only: its consumers read times
    "aipep": ("rnns", lambda r: r["unit"] != "ms"),
    "csv": ("rnns", lambda r: False),  # every result has a CSV row: none left
    "dynamo-csv": ("transformers", lambda r: True),  # no compile-suite model
    "pytorch-v3": ("rnns", lambda r: False),  # one record per result: none left
}


@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_export_format_with_nothing_to_say_exits_2_and_writes_nothing(documents, name,
                                                                    tmp_path):
    suite, keep = NOTHING_TO_SAY[name]
    document = json.loads(documents[suite].read_text())
    document["results"] = [r for r in document["results"] if keep(r)]
    (tmp_path / "run.json").write_text(json.dumps(document))
    out = tmp_path / "out"
    done = torch_bench(tmp_path, "export", "run.json", "--format", name, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert f"--format {name}: nothing to write from run.json" in done.stderr
    assert not out.exists()
    by_flag = torch_bench(tmp_path, "export", "run.json", EXPORT_FLAGS[name], str(out))
    assert by_flag.returncode == 2 and f"{EXPORT_FLAGS[name]}: nothing" in by_flag.stderr


def test_hf_csv_set_from_export_as_hugging_face_writes_it(documents, tmp_path):
    done = torch_bench(tmp_path, "export", str(documents["transformers"]), "--hf-csv", "hf")
    assert done.returncode == 0, done.stderr
    rows = read_csv((tmp_path / "hf" / "inference_time.csv").read_text())
    assert [(r["model"], r["batch_size"], r["sequence_length"]) for r in rows] == \
        [("tiny-bert", "1", "8")]
    assert float(rows[0]["result"]) > 0  # seconds
    assert not (tmp_path / "hf" / "train_time.csv").exists()  # inference only was run
    refused = torch_bench(tmp_path, "export", str(documents["compile"]), "--hf-csv", "none")
    assert refused.returncode == 2 and "no transformers-suite result" in refused.stderr
    assert not (tmp_path / "none").exists()
