"""Scratch folders of killed runs are swept on the next start; live runs' folders are not."""

import subprocess
import sys

import psutil

from torch_bench.measure.case_folders import (
    PREFIX,
    make_case_folder,
    owner_of,
    owner_tag,
    sweep_stale_case_folders,
)


def test_a_folder_names_its_owner():
    assert owner_of(f"{PREFIX}{owner_tag(123, 1700000000.7)}-abc") == (123, 1700000000)
    assert owner_of(f"{PREFIX}k2j3h4") is None


def test_only_folders_of_gone_owners_are_swept(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(gone.pid).create_time()
    gone.wait()
    stale = tmp_path / f"{PREFIX}{owner_tag(gone.pid, started)}-x"
    stale.mkdir()
    (stale / "request.json").write_text("{}")
    reused_pid = tmp_path / f"{PREFIX}{owner_tag(psutil.Process().pid, 1)}-y"
    reused_pid.mkdir()
    mine = make_case_folder(tmp_path)
    unowned = tmp_path / f"{PREFIX}legacy"
    unowned.mkdir()
    assert sorted(sweep_stale_case_folders(tmp_path)) == sorted([stale, reused_pid])
    assert mine.is_dir() and unowned.is_dir()
