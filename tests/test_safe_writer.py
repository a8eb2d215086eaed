"""Every output goes through one safe writer: a folder where a file belongs, a missing
parent, a name too long, two flags naming one file, a full or read-only disk all end as one
line naming the path, and a reader never sees half a file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torch_bench.cli import main
from torch_bench.results.document import save_run
from torch_bench.results.schema import measured, new_run


def big_run(benchmarks: int = 40, samples: int = 200):
    return new_run([measured("s", f"b{i}", "latency", [1.0 + j / 1000 for j in range(samples)])
                    for i in range(benchmarks)], created_at="2026-01-01T00:00:00Z")


def run_cli(capsys, *argv) -> tuple[int, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


@pytest.fixture
def results(tmp_path):
    return save_run(big_run(3, 5), tmp_path / "results.json")


def test_a_folder_where_the_file_belongs_is_one_line_and_nothing_is_written(tmp_path, capsys,
                                                                             results):
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv in (("export", results, "--format", "csv", "--out", tmp_path),
                 ("export", results, "--oss", tmp_path),
                 ("compare", results, results, "--markdown", tmp_path),
                 ("compare", results, results, "--json", tmp_path)):
        code, err = run_cli(capsys, *argv)
        assert code == 2 and "is a directory" in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_file_where_a_folder_belongs_and_a_name_too_long(tmp_path, capsys, results):
    code, err = run_cli(capsys, "export", results, "--csv", results / "x.csv")
    assert code == 2 and "is not a directory" in err
    code, err = run_cli(capsys, "export", results, "--csv", tmp_path / ("n" * 300 + ".csv"))
    assert code == 2 and "too long" in err and len(err.strip().splitlines()) == 1
    code, err = run_cli(capsys, "export", results, "--csv", " ")
    assert code == 2 and "no file name" in err


def test_missing_parent_folders_are_made(tmp_path, capsys, results):
    code, _ = run_cli(capsys, "export", results, "--csv", tmp_path / "a" / "b" / "r.csv")
    assert code == 0 and (tmp_path / "a" / "b" / "r.csv").read_text().strip()


def test_two_outputs_naming_one_file_are_refused(tmp_path, capsys, results, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(capsys, "export", results, "--oss", "x", "--aipep", "./x")
    assert code == 2 and "--oss and --aipep both name x" in err
    assert not (tmp_path / "x").exists()
    code, err = run_cli(capsys, "compare", results, results, "--markdown", "r",
                        "--json", tmp_path / "r")
    assert code == 2 and "both name" in err and not (tmp_path / "r").exists()


def _in_a_small_file_system(folder: Path, command: list[str], read_only: bool = False):
    """`command` with `folder` a 64 KiB tmpfs (read-only if asked) in a user and mount
    namespace of its own; its exit status, output, and the names left in the folder."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1)")
    mount = 'mount -t tmpfs -o size=64k tmpfs "$0" && echo old > "$0/report.csv"'
    if read_only:
        mount += ' && mount -o remount,ro "$0"'
    script = (f'{mount} || exit 99; "$@"; code=$?; echo "left: $(ls -A "$0" | tr "\\n" " ")"'
              f' >&2; echo "old: $(cat "$0/report.csv")" >&2; exit $code')
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, str(folder), *command],
                          capture_output=True, text=True, timeout=300)
    if done.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()[:200]}")
    return done


def test_a_full_disk_is_one_line_and_keeps_the_old_file(tmp_path):
    results = save_run(big_run(), tmp_path / "results.json")
    folder = tmp_path / "small"
    folder.mkdir()
    target = folder / "report.csv"
    done = _in_a_small_file_system(folder, [sys.executable, "-m", "torch_bench", "export",
                                            str(results), "--aipep", str(target)])
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0] == (f"torch-bench: error: cannot write {target}: no space left on the "
                        f"device; nothing was written there")
    assert lines[1].split() == ["left:", "report.csv"]  # no temporary file left behind
    assert lines[2] == "old: old"  # the previous file is whole


def test_a_read_only_disk_is_one_line_before_any_work(tmp_path):
    results = save_run(big_run(1, 2), tmp_path / "results.json")
    folder = tmp_path / "small"
    folder.mkdir()
    done = _in_a_small_file_system(folder, [sys.executable, "-m", "torch_bench", "export",
                                            str(results), "--aipep", str(folder / "r.txt")],
                                   read_only=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].endswith(f"{folder} is on a read-only file system")
    assert lines[1].split() == ["left:", "report.csv"]


def test_inputs_that_never_end_or_cannot_be_named_are_one_line(tmp_path, capsys, results):
    code, err = run_cli(capsys, "export", "/dev/zero", "--format", "csv")
    assert code == 2 and "/dev/zero: more than 64 MiB" in err
    code, err = run_cli(capsys, "data", "compact", "--data", "9" * 5000)
    assert code == 2 and "a name is too long" in err and len(err.strip().splitlines()) == 1


def test_a_pipe_is_written_to_and_a_link_kept(tmp_path, capsys, results):
    """An output that is a FIFO (or a device such as /dev/null) is written to, never replaced
    by a regular file; an output that is a link keeps the link and replaces its target."""
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    code, err = run_cli(capsys, "export", results, "--csv", fifo)
    reader.join(30)
    assert code == 0, err
    assert fifo.is_fifo() and received and received[0].startswith("model,")
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    code, err = run_cli(capsys, "export", results, "--csv", link)
    assert code == 0 and link.is_symlink() and real.read_text().startswith("model,")


def test_a_staged_file_replaces_a_link_without_writing_through_it(tmp_path):
    from torch_bench.fileio import write_staged

    outside = tmp_path / "previous-site.html"
    outside.write_text("previous", encoding="utf-8")
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "page.html").symlink_to(outside)
    write_staged(staging / "page.html", b"new")
    assert outside.read_text(encoding="utf-8") == "previous"
    assert not (staging / "page.html").is_symlink()
    assert (staging / "page.html").read_bytes() == b"new"


def test_a_staged_file_that_cannot_be_written_is_one_line_naming_it(tmp_path):
    from torch_bench.fileio import OutputError, write_staged

    (tmp_path / "page.html").mkdir()  # a folder where the file belongs
    with pytest.raises(OutputError) as raised:
        write_staged(tmp_path / "page.html", b"new")
    assert str(raised.value).startswith(f"cannot write {tmp_path / 'page.html'}: ")
    assert (tmp_path / "page.html").is_dir()
