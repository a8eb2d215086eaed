"""Hostile files and flags give one line on stderr and exit status 2, never a traceback:
undecodable files on the data branch, non-finite or oversized numbers, binary files and
folders given to `import`, deeply nested JSON, files where folders belong, a full disk."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from torch_bench.cli import main
from torch_bench.formats import IMPORTERS
from torch_bench.formats.github_action_benchmark import HISTORY_IMPORTERS
from torch_bench.results.schema import measured, new_run
from torch_bench.store.folder import store_in_folder

FORMATS = sorted([*IMPORTERS, *HISTORY_IMPORTERS])


def a_run():
    return new_run([measured("s", "b", "latency", [1.0, 1.1])],
                   created_at="2026-01-01T00:00:00Z", git={"branch": "main", "sha": "a"})


def run_cli(capsys, *argv) -> tuple[int, str]:
    """The CLI in this process: (exit status, stderr and stdout). A traceback fails the
    test."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err + captured.out


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    return errors[0]


def document(tmp_path: Path, name: str, change) -> Path:
    data = a_run().to_dict()
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture()
def data_with_undecodable_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store_in_folder([a_run()], tmp_path / "data")
    (tmp_path / "data/runs/2026/01/broken.json").write_bytes(b"\xff\xfe{}")
    (tmp_path / "head.json").write_text(json.dumps(a_run().to_dict()))
    return tmp_path / "data"


@pytest.mark.parametrize("argv, status", [
    (("data", "verify", "--data", "data"), 1),
    (("data", "list", "--data", "data"), 0),
    (("site", "--data", "data", "--out", "site"), 0),
    (("compare", "auto", "head.json", "--history", "data", "--latest"), 0),
])
def test_an_undecodable_file_on_the_data_branch_is_named_not_a_crash(
        data_with_undecodable_file, capsys, argv, status):
    code, output = run_cli(capsys, *argv)
    assert status is None or code == status
    assert code in (0, 1, 2)
    if argv[0] != "compare":
        assert "broken.json: not UTF-8 text" in output


@pytest.mark.parametrize("field, value", [("median", float("nan")), ("mean", float("inf")),
                                          ("max", float("-inf"))])
def test_non_finite_summaries_are_refused_by_store(tmp_path, capsys, field, value):
    def spoil(data):
        data["results"][0]["summary"][field] = value
    path = document(tmp_path, "bad.json", spoil)
    line = one_line_error(*run_cli(capsys, "store", path, "--to-folder", tmp_path / "out"))
    assert f"summary.{field}" in line and "not a finite number" in line
    assert not (tmp_path / "out").exists()


def test_a_400_digit_integer_and_deep_nesting_are_one_line_errors(tmp_path, capsys):
    text = json.dumps(a_run().to_dict()).replace('"samples": [1.0', '"samples": [1' + "0" * 400)
    (tmp_path / "big.json").write_text(text)
    assert "not a finite number" in one_line_error(
        *run_cli(capsys, "store", tmp_path / "big.json", "--to-folder", tmp_path / "o"))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "nested more than" in one_line_error(
        *run_cli(capsys, "store", tmp_path / "deep.json", "--to-folder", tmp_path / "o"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_import_of_a_binary_file_a_folder_or_deep_json_is_one_line(tmp_path, capsys, fmt):
    (tmp_path / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "folder").mkdir()
    (tmp_path / "deep.json").write_text("{\"a\":" * 100_000 + "1" + "}" * 100_000)
    out = tmp_path / "out"
    for source, expected in (("binary.dat", "binary"), ("folder", "folder"), ("deep.json", "")):
        line = one_line_error(*run_cli(capsys, "import", tmp_path / source, "--format", fmt,
                                       "--no-env", "--out", out))
        assert source in line and expected in line


def test_a_suite_name_that_climbs_out_of_its_folder_is_refused(tmp_path, capsys):
    (tmp_path / "oss.json").write_text('{"lstm": {"cudnn": 1.5}}')
    line = one_line_error(*run_cli(capsys, "import", tmp_path / "oss.json", "--format", "oss",
                                   "--suite", "../../x", "--no-env",
                                   "--out", tmp_path / "r.json"))
    assert "suite" in line and not (tmp_path / "r.json").exists()


def test_files_where_folders_belong_and_an_empty_folder(tmp_path, capsys):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    store_in_folder([a_run()], tmp_path / "data")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(a_run().to_dict()))
    assert "is a file" in one_line_error(
        *run_cli(capsys, "store", good, "--to-folder", tmp_path / "a-file"))
    assert "is a file" in one_line_error(
        *run_cli(capsys, "site", "--data", tmp_path / "data", "--out", tmp_path / "a-file"))
    assert "no run documents" in one_line_error(
        *run_cli(capsys, "store", tmp_path / "empty", "--to-folder", tmp_path / "out"))


@pytest.mark.parametrize("argv", [
    ("data", "prune", "--keep", "-1"), ("data", "prune", "--keep", "nan"),
    ("data", "prune", "--before", "yesterday"), ("data", "compact", "--before", "2026-13"),
    ("data", "rename", "--benchmark", "", "x"), ("data", "rename", "--param", "", "1", "2"),
    ("store", "x.json", "--retry-for", "nan"), ("store", "x.json", "--attempts", "0"),
])
def test_nonsense_flag_values_are_refused_up_front(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    store_in_folder([a_run()], tmp_path / "data")
    code, err = run_cli(capsys, *argv)
    assert code == 2 and err.strip(), err


def _limited_writes():
    """A disk that fills after 64 KiB: writes past it fail (EFBIG) instead of killing us."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_full_disk_is_one_line_for_site_and_store(tmp_path):
    runs = [new_run([measured("s", f"b{i}", "latency", [1.0] * 200) for i in range(40)],
                    created_at=f"2026-01-{d:02d}T00:00:00Z") for d in range(1, 4)]
    store_in_folder(runs, tmp_path / "data")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    for argv in (["site", "--data", "data", "--out", "site"],
                 ["store", "data", "--remote", str(remote)]):
        done = subprocess.run([sys.executable, "-m", "torch_bench", *argv], cwd=tmp_path,
                              capture_output=True, text=True, preexec_fn=_limited_writes,
                              timeout=300)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "File too large" in done.stderr.strip().splitlines()[-1]


def _bad_input_folder(folder: Path) -> None:
    store_in_folder([a_run()], folder / "data")
    (folder / "r.json").write_text((folder / "data").joinpath(
        next(p for p in (folder / "data").rglob("*.json")).relative_to(folder / "data")
    ).read_text())
    (folder / "report.md").write_text("report\n")
    (folder / "object.txt").write_text(
        'Caffe2Observer {"type": "NET", "metric": {"a": 1}, "unit": "ms", "value": "1.0"}\n')
    (folder / "good.txt").write_text(
        'Caffe2Observer {"type": "NET", "metric": "g-b", "unit": "ms", "value": "1.0"}\n')
    (folder / "huge.yaml").write_text("timing:\n  warmup: " + "9" * 5000 + "\n")


# Each: the command line, then what its one line of error says (naming the input).
BAD_INPUTS = {
    "an AI-PEP metric that is an object": (
        ("import", "object.txt", "--format", "aipep", "--out", "o.json"),
        "object.txt: line 1: not a valid AI-PEP record"),
    "import --suite ''": (("import", "good.txt", "--format", "aipep", "--suite", "",
                           "--out", "o.json"), "argument --suite: must not be empty"),
    "import --branch ''": (("import", "good.txt", "--format", "aipep", "--branch", "",
                            "--out", "o.json"), "argument --branch: must not be empty"),
    "a configuration with a 5,000-digit number": (
        ("run", "--config", "huge.yaml"),
        "huge.yaml: not valid YAML: Exceeds the limit (4300 digits)"),
    "run --suite ../../etc/passwd": (
        ("run", "--suite", "../../etc/passwd"),
        "suite '../../etc/passwd': not a module path such as mypackage.bench"),
    "site --repository 'not a repo'": (
        ("site", "--data", "data", "--out", "site", "--repository", "not a repo"),
        "argument --repository: 'not a repo' is not a repository as OWNER/NAME"),
    "site --cache FILE": (("site", "--data", "data", "--out", "site", "--cache", "report.md"),
                          "--cache report.md: is a file, expected a folder"),
    "comment /dev/zero": (("comment", "/dev/zero", "--pr", "1", "--repo", "o/r"),
                          "REPORT /dev/zero: more than 64 MiB"),
    "data export --parquet ''": (("data", "export", "--data", "data", "--parquet", ""),
                                 "argument --parquet: must not be empty"),
    "compare --confirm-run-args with an open quote": (
        ("compare", "r.json", "r.json", "--confirm-run-args", "--suite 'rnns"),
        "argument --confirm-run-args: \"--suite 'rnns\": no closing quotation"),
    "explain --threads 0": (("explain", "--base", ".", "--head", ".", "--threads", "0", "--",
                             "--suite", "rnns"),
                            "argument --threads: '0' is out of range: expected 1 to 4,096"),
    "explain of no case": (("explain", "--base", ".", "--head", ".", "--", "--suite", "rnns",
                            "--filter", "zzz-none"),
                           "-- RUN_ARGS: --suite rnns --filter zzz-none: select no case"),
    "bisect --repository ../x": (
        ("bisect", "--good", "a", "--bad", "b", "--issue", "1", "--repository", "../x"),
        "argument --repository: '../x' is not a repository as OWNER/NAME"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_each_bad_input_is_one_line_naming_it_and_exit_2(tmp_path, cli, name):
    _bad_input_folder(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    argv, message = BAD_INPUTS[name]
    done = cli(*argv)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing
