"""The command line as a user at a shell meets it: pipes closed early, folders of run
documents, per-suite defaults in the help, and tables in logs."""

import json
import subprocess
import sys

import pytest

from torch_bench.cli import build_parser
from torch_bench.cli.pipes import EXIT_BROKEN_PIPE, report_console
from torch_bench.report.console import results_table
from torch_bench.results.schema import measured, new_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.reader import load_history


def a_run(name="lstm", day=1, results=1):
    return new_run([measured("rnns", f"{name}{i}", "latency", [1.0, 1.1]) for i in range(results)],
                   created_at=f"2026-01-{day:02d}T12:00:00Z", git={"branch": "main"},
                   env={"fingerprint": "fp1"})


def test_data_list_into_a_pipe_closed_early_ends_without_a_traceback(tmp_path):
    # 3,000 benchmarks: far more than a pipe holds, so the writer meets the closed pipe
    store_in_folder([a_run(name="a_rather_long_benchmark_name_", results=3000)],
                    tmp_path / "data")
    lister = subprocess.Popen(
        [sys.executable, "-m", "torch_bench", "data", "list", "--benchmarks", "--data",
         str(tmp_path / "data")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.run(["head", "-n", "2"], stdin=lister.stdout, capture_output=True,
                          text=True, timeout=120)
    lister.stdout.close()  # head has exited: nobody reads the pipe any more
    err = lister.stderr.read().decode()
    assert lister.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert head.stdout.startswith("benchmark")


def test_store_takes_a_folder_of_run_documents(tmp_path, cli):
    shards = tmp_path / "artifacts"
    (shards / "shard-1").mkdir(parents=True)
    (shards / "shard-2").mkdir()
    (shards / "shard-1" / "results.json").write_text(json.dumps(a_run(day=1).to_dict()))
    (shards / "shard-2" / "results.json").write_text(json.dumps(a_run(day=2).to_dict()))
    done = cli("store", str(shards), "--to-folder", "data", check=True)
    assert "stored 2 runs" in done.stderr
    assert len(load_history(tmp_path / "data").runs) == 2


def test_store_names_the_file_of_a_folder_that_is_not_a_run_document(tmp_path, cli):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(a_run().to_dict()))
    (folder / "oss.json").write_text(json.dumps({"lstm": {"cudnn": 1.2}}))
    done = cli("store", str(folder), "--to-folder", "data")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "oss.json" in line and "must be a run document" in line
    assert not (tmp_path / "data").exists()  # nothing stored
    (tmp_path / "empty").mkdir()
    empty = cli("store", str(tmp_path / "empty"), "--to-folder", "data")
    assert empty.returncode == 2 and "no run documents" in empty.stderr


def test_a_data_folder_is_still_stored_as_a_data_folder(tmp_path, cli):
    store_in_folder([a_run(day=1), a_run(day=2)], tmp_path / "old")  # runs/, exports/
    done = cli("store", str(tmp_path / "old"), "--to-folder", "new", check=True)
    assert "stored 2 runs" in done.stderr  # the OSS and AI-PEP exports are not read as runs


def option_help(flag):
    run_parser = build_parser(["run"])._subparsers._group_actions[0].choices["run"]
    (action,) = [a for a in run_parser._actions if flag in a.option_strings]
    return action.help


def test_models_help_shows_each_suites_own_default():
    text = option_help("--models")
    assert "transformers: tiny-bert,tiny-gpt2,tiny-t5" in text
    assert "training: text_classification" in text
    assert "compile: mlp,lstm" in text
    assert option_help("--hidden-size").endswith("(default 512)")  # one suite, one default


def wide_results():
    params = {"model": "a-model-with-a-long-name", "batch_size": 64, "sequence_length": 512,
              "dtype": "bf16", "mode": "inference"}
    return [measured("transformers", f"bert-large-uncased-whole-word-masking-{i}", "latency",
                     [12.5, 12.6, 12.7], params={**params, "batch_size": i})
            for i in (1, 2)]


def test_the_results_table_keeps_one_row_per_line_when_stdout_is_not_a_terminal(
        capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    report_console(environ={}).print(results_table(wide_results()))
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "bert-large" in line]
    assert len(rows) == 2 and all("latency" in row and "ok" in row for row in rows), out
    assert max(map(len, out.splitlines())) > 80


@pytest.mark.parametrize("columns", ["60"])
def test_columns_set_by_the_user_is_the_width(capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    report_console(environ={"COLUMNS": columns}).print(results_table(wide_results()))
    assert max(map(len, capsys.readouterr().out.splitlines())) <= int(columns)
