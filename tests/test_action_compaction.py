"""The Action's `compact-after` retention: old run files folded into monthly archives on a
real data branch (a local bare repository), nothing lost."""

from __future__ import annotations

import subprocess
from datetime import date

from torch_bench.action.inputs import read_inputs
from torch_bench.action.stages import compact, compaction_month
from torch_bench.results.document import save_run
from torch_bench.results.schema import measured, new_run
from torch_bench.store.layout import run_path
from torch_bench.store.reader import load_history
from torch_bench.store.remote import Target


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def test_compaction_month_counts_whole_months_back():
    assert compaction_month(date(2026, 3, 15), 1) == "2026-02"
    assert compaction_month(date(2026, 1, 2), 2) == "2025-11"
    assert read_inputs({})["compact-after"] == 0
    assert read_inputs({"TB_COMPACT_AFTER": "3"})["compact-after"] == 3


def test_old_months_are_archived_and_every_run_still_reads(tmp_path):
    work, remote = tmp_path / "work", tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "init", "-q", "-b", "gh-pages", str(work))
    days = ["2026-01-05", "2026-01-20", "2026-02-03", "2026-03-01"]
    for i, day in enumerate(days):
        run = new_run([measured("rnns", "lstm", "forward_time", [1.0 + i, 1.1 + i])],
                      created_at=f"{day}T10:00:00Z", git={"sha": f"{i:040x}", "branch": "main"},
                      ci={"provider": "local"}, env={"fingerprint": "f"})
        save_run(run, work / "benchmarks" / run_path(run))
    git(work, "add", "-A")
    git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "runs")
    git(work, "push", "-q", str(remote), "gh-pages")

    compact(Target(str(remote), "gh-pages", "benchmarks"), None, 1, today=date(2026, 3, 15))

    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", "-b", "gh-pages", str(remote), str(check))
    archives = sorted(p.relative_to(check / "benchmarks").as_posix()
                      for p in (check / "benchmarks").rglob("*.parquet"))
    assert len(archives) == 1 and archives[0].startswith("archive/2026/01-")  # January only
    history = load_history(check / "benchmarks")
    assert sorted(r.created_at[:10] for r in history.runs) == days
    january = [r for r in history.runs if r.created_at.startswith("2026-01")]
    assert all(len(r.results[0].samples) == 2 for r in january)  # samples kept
