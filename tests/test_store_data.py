"""`torch-bench data`: list, prune, rename, compact, verify on a data folder."""

from __future__ import annotations

import gzip
import json

from torch_bench.results.schema import measured, new_run
from torch_bench.store.archive import decode_archive, encode_json_archive
from torch_bench.store.folder import store_in_folder
from torch_bench.store.layout import archive_files, run_files
from torch_bench.store.reader import load_history


def history(root, months=("2025-11", "2025-12", "2026-01"), per_month=2):
    runs = []
    for month in months:
        for day in range(1, per_month + 1):
            runs.append(new_run(
                [measured("rnns", "lstm", "latency", [1.0 + day, 1.1 + day, 1.2 + day],
                          params={"batch": 8}),
                 measured("rnns", "gru", "latency", [3.0, 3.1], params={"batch": 8})],
                created_at=f"{month}-{day:02d}T12:00:00Z", git={"branch": "main"},
                env={"fingerprint": "fp1"}))
    store_in_folder(runs, root)
    return runs


def as_json_archive(root):
    """The one Parquet archive replaced by the gzip JSON archive older versions wrote."""
    (archive,) = archive_files(root)
    decoded, _ = decode_archive(archive.read_bytes(), str(archive))
    legacy = archive.with_name(archive.name.replace(".parquet", ".json.gz"))
    legacy.write_bytes(encode_json_archive(decoded))
    archive.unlink()
    return legacy


def test_list_shows_runs_and_benchmarks(tmp_path, cli):
    history(tmp_path / "benchmarks")
    runs = cli("data", "list", check=True).stdout
    assert "6 runs" in runs and "2025-11-01T12:00:00Z" in runs and "file" in runs
    benches = cli("data", "list", "--benchmarks", check=True).stdout
    assert "rnns/lstm[batch=8]:latency  6" in benches and "2 benchmarks" in benches


def test_prune_before_a_date_and_keep_newest(tmp_path, cli):
    root = tmp_path / "benchmarks"
    history(root)
    dry = cli("data", "prune", "--before", "2025-12-01", "--dry-run", check=True)
    assert dry.stdout.count("delete") == 6 and len(run_files(root)) == 6  # 2 runs x 3 files
    cli("data", "prune", "--before", "2025-12-01", check=True)
    assert [r.created_at[:7] for r in load_history(root).runs] == ["2025-12"] * 2 + ["2026-01"] * 2
    assert not (root / "runs" / "2025" / "11").exists()
    cli("data", "prune", "--keep", "1", check=True)
    (left,) = load_history(root).runs
    assert left.created_at == "2026-01-02T12:00:00Z" and len(left.results) == 2
    assert cli("data", "verify", check=True).returncode == 0
    nothing = cli("data", "prune")
    assert nothing.returncode == 2 and "--before" in nothing.stderr


def test_rename_a_benchmark_and_a_parameter_value(tmp_path, cli):
    root = tmp_path / "benchmarks"
    history(root, months=("2026-01",))
    cli("data", "rename", "--benchmark", "lstm", "lstm_fused", check=True)
    cli("data", "rename", "--param", "batch", "8", "16", check=True)
    names = {(r.name, r.params["batch"]) for run in load_history(root).runs for r in run.results}
    assert names == {("lstm_fused", 16), ("gru", 16)}
    oss = json.loads(next((root / "exports").rglob("*.oss.json")).read_text())
    assert "lstm_fused" in json.dumps(oss)  # exports follow the rename
    assert cli("data", "verify", check=True).returncode == 0


def test_compact_folds_old_months_into_archives_the_reader_loads(tmp_path, cli):
    root = tmp_path / "benchmarks"
    before = history(root)
    done = cli("data", "compact", "--before", "2026-01", check=True)
    assert "archive/2025/11-" in done.stdout and "archive/2025/12-" in done.stdout
    assert len(archive_files(root)) == 2 and len(run_files(root)) == 2
    assert not list((root / "exports").glob("2025/*/*"))
    after = load_history(root)
    assert [r.run_id for r in after.runs] == sorted(r.run_id for r in before)
    old = [r for r in after.runs if r.created_at < "2026"]
    assert len(old) == 4 and all(not res.samples and res.summary.n in (2, 3)
                                 for run in old for res in run.results)
    assert after.runs[-1].results[0].samples  # the month kept as files keeps its samples
    assert cli("data", "list", check=True).stdout.count("archive") == 4
    # late runs for a compacted month fold into a new archive replacing the old one
    store_in_folder([new_run([measured("rnns", "lstm", "latency", [9.0])],
                             created_at="2025-11-20T00:00:00Z")], root)
    cli("data", "compact", "--before", "2026-01", "--keep-samples", check=True)
    assert len(archive_files(root)) == 2 and len(load_history(root).runs) == 7
    cli("data", "prune", "--before", "2025-12-01", check=True)  # edits reach into archives
    assert len(archive_files(root)) == 1 and len(load_history(root).runs) == 4
    assert cli("data", "verify", check=True).returncode == 0


def test_verify_and_the_reader_name_bad_files(tmp_path, cli):
    root = tmp_path / "benchmarks"
    history(root)
    cli("data", "compact", "--before", "2025-12", check=True)
    archive = as_json_archive(root)
    document = json.loads(gzip.decompress(archive.read_bytes()))
    document["runs"][1]["results"][0]["metric"] = 7
    archive.write_bytes(gzip.compress(json.dumps(document).encode()))
    broken = run_files(root)[0]
    broken.write_text("{truncated")
    next((root / "exports").rglob("*.aipep.txt")).unlink()
    (root / "archive" / "2025" / "junk.json.gz").write_bytes(b"not gzip")
    loaded = load_history(root)
    assert len(loaded.runs) == 4 and len(loaded.problems) == 3
    assert any("runs[1]: results[0].metric" in p for p in loaded.problems)
    done = cli("data", "verify")
    assert done.returncode == 1
    assert broken.name in done.stdout and "junk.json.gz: not a readable gzip archive" in done.stdout
    assert "aipep export" in done.stdout and "missing" in done.stdout
    assert "problems" in done.stderr
    listed = cli("data", "list", check=True)
    assert "skipped:" in listed.stderr and broken.name in listed.stderr


def test_bad_arguments_are_one_line_errors(tmp_path, cli):
    assert cli("data", "list", "--data", "nowhere").stderr.strip().endswith(
        "nowhere: no such data folder")
    assert cli("data", "compact", "--before", "2026-13").returncode == 2
    assert cli("data", "prune", "--keep", "0").returncode == 2


def test_an_intact_archive_is_trusted_by_the_reader_but_verify_checks_every_run(tmp_path, cli):
    from torch_bench.store.archive import _runs_digest

    root = tmp_path / "benchmarks"
    history(root, months=("2025-11",))
    cli("data", "compact", "--before", "2025-12", check=True)
    archive = as_json_archive(root)
    document = json.loads(gzip.decompress(archive.read_bytes()))
    document["runs"][0]["results"][0]["unit"] = "s"  # invalid, digest recomputed to match
    document["runs_sha256"] = _runs_digest(document["runs"])
    archive.write_bytes(gzip.compress(json.dumps(document).encode()))
    assert len(load_history(root).runs) == 2
    done = cli("data", "verify")
    assert done.returncode == 1 and "runs[0]: results[0].unit" in done.stdout


def test_rename_onto_an_existing_benchmark_is_refused_unless_merge(tmp_path, cli):
    root = tmp_path / "benchmarks"
    history(root, months=("2026-01",))
    before = sorted(p.read_bytes() for p in root.rglob("*.json"))
    refused = cli("data", "rename", "--benchmark", "gru", "lstm")
    assert refused.returncode == 2 and "--merge" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert sorted(p.read_bytes() for p in root.rglob("*.json")) == before
    cli("data", "rename", "--benchmark", "gru", "lstm", "--merge", check=True)
    verify = cli("data", "verify")
    assert verify.returncode == 1
    assert "more than once" in verify.stdout and "rnns/lstm[batch=8]:latency" in verify.stdout


def test_rename_onto_an_existing_parameter_value_is_refused(tmp_path, cli):
    root = tmp_path / "benchmarks"
    runs = [new_run([measured("s", "b", "latency", [1.0], params={"batch": batch})],
                    created_at="2026-01-01T00:00:00Z") for batch in (8, 16)]
    store_in_folder(runs, root)
    refused = cli("data", "rename", "--param", "batch", "8", "16")
    assert refused.returncode == 2 and "--merge" in refused.stderr
