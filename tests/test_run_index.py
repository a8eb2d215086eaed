"""`compare` chooses its baseline from an index of the stored runs (their facts, not their
results) and reads in full only the runs the rule uses; it gives exactly what reading the
whole history gives, run files, Parquet and legacy JSON archives, duplicates, other branches
and environments, untrusted and damaged runs included."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from support.runs import BASE_ENV, make_run, ok, untrusted
from torch_bench.analyze.evidence import HISTORY_WINDOW
from torch_bench.cli import compare as compare_cli
from torch_bench.cli import main
from torch_bench.results.document import save_run
from torch_bench.store import run_index
from torch_bench.store.archive import Archive, encode_archive, encode_json_archive
from torch_bench.store.archive import digest as archive_digest
from torch_bench.store.layout import archive_path, run_path
from torch_bench.store.reader import EVERY_RUN, RunFilter, load_history
from torch_bench.store.run_index import IndexMismatch, index_history, read_in_full

OTHER_ENV = {**BASE_ENV, "fingerprint": "fp-other-0002"}


def a_run(month: str, day: int, index: int, *, branch: str = "main", env=None, scale=1.0):
    return make_run([ok("steady", 10, seed=index), ok("moving", 20 * scale, seed=index + 500)],
                    sha=f"{index:040x}", branch=branch, env=env,
                    created_at=f"{month}-{day:02d}T00:00:00Z", run_id=f"run-{index:03d}")


def archive(root: Path, month: str, runs, *, legacy=False, summarised=False) -> None:
    path = root / archive_path(month.replace("-", "/"), archive_digest(r.run_id for r in runs))
    kept = Archive(month.replace("-", "/"), tuple(runs), summarised=summarised)
    if legacy:
        path = path.with_name(path.name.replace(".parquet", ".json.gz"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_json_archive(kept) if legacy else encode_archive(kept))


@pytest.fixture
def data(tmp_path) -> Path:
    root = tmp_path / "data"
    archive(root, "2025-10", [a_run("2025-10", d, d) for d in range(1, 7)], legacy=True)
    november = [a_run("2025-11", d, 100 + d) for d in range(1, 9)]
    november[2] = untrusted(november[2])
    november += [a_run("2025-11", 20, 120, branch="feature"),
                 a_run("2025-11", 21, 121, env=OTHER_ENV)]
    archive(root, "2025-11", november)
    december = [a_run("2025-12", d, 200 + d) for d in range(1, 9)]
    archive(root, "2025-12", december, summarised=True)
    restored = replace(december[-1], results=(ok("steady", 11, seed=9),))  # stored again
    for run in [restored, *(a_run("2026-01", d, 300 + d) for d in range(1, 11)),
                a_run("2026-01", 15, 400, env=OTHER_ENV)]:
        save_run(run, root / run_path(run))
    return root


def facts(runs) -> list[tuple]:
    return [(r.run_id, r.created_at, dict(r.git), dict(r.env), r.fingerprint, r.trusted)
            for r in runs]


@pytest.mark.parametrize("where", [EVERY_RUN, RunFilter(fingerprint=BASE_ENV["fingerprint"])])
def test_the_index_lists_the_runs_the_reader_gives_and_reads_them_back_equal(data, where):
    full = load_history(data, where).runs
    index = index_history(data, where)
    assert facts(index.runs) == facts(full)
    assert read_in_full(index.runs) == list(full)
    assert "run-208" in [r.run_id for r in full]  # the run file's copy, not the archive's
    assert next(r for r in full if r.run_id == "run-208").results[0].summary.median > 10.5


def head_file(tmp_path: Path, scale: float = 1.25) -> Path:
    head = a_run("2026-01", 20, 999, branch="feature", scale=scale)
    return save_run(head, tmp_path / "head.json")


def compared(tmp_path: Path, data: Path, *extra: str, name: str) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["compare", "auto", str(head_file(tmp_path)), "--history", str(data),
                 "--latest", "--json", str(out), *extra]) in (0, 1)
    return json.loads(out.read_text())


def everything_read(monkeypatch) -> None:
    def whole(root, where=EVERY_RUN):
        raise IndexMismatch("read the whole history")
    monkeypatch.setattr(compare_cli, "index_history", whole)


def test_compare_from_the_index_equals_compare_from_the_whole_history(data, tmp_path,
                                                                      monkeypatch, capsys):
    indexed = compared(tmp_path, data, name="indexed")
    base = tmp_path / "base.json"
    save_run(a_run("2026-01", 10, 310), base)
    explicit = tmp_path / "explicit.json"
    assert main(["compare", str(base), str(head_file(tmp_path)), "--history", str(data),
                 "--json", str(explicit)]) in (0, 1)
    everything_read(monkeypatch)
    assert compared(tmp_path, data, name="whole") == indexed
    assert indexed["verdicts"][0]["history_runs"] > HISTORY_WINDOW // 2
    again = tmp_path / "explicit-whole.json"
    assert main(["compare", str(base), str(head_file(tmp_path)), "--history", str(data),
                 "--json", str(again)]) in (0, 1)
    assert json.loads(again.read_text()) == json.loads(explicit.read_text())


def test_only_the_baseline_and_the_newest_history_are_read_in_full(data, tmp_path,
                                                                   monkeypatch):
    read: list[str] = []
    load_run, decode_archive = run_index.load_run, run_index.decode_archive

    def counted_load(path):
        run = load_run(path)
        read.append(run.run_id)
        return run

    def counted_decode(data_bytes, source, trust=True, only=None):
        archive_read, problems = decode_archive(data_bytes, source, trust, only)
        read.extend(run.run_id for run in archive_read.runs)
        return archive_read, problems
    monkeypatch.setattr(run_index, "load_run", counted_load)
    monkeypatch.setattr(run_index, "decode_archive", counted_decode)
    compared(tmp_path, data, name="counted")
    legacy = {f"run-{d:03d}" for d in range(1, 7)}  # a JSON archive is read whole to index it
    main_runs = [r.run_id for r in load_history(data).runs
                 if r.git["branch"] == "main" and r.trusted
                 and r.fingerprint == BASE_ENV["fingerprint"]]
    assert set(read) - legacy == set(main_runs[-HISTORY_WINDOW:])
    assert len(read) - len(legacy) == HISTORY_WINDOW  # each once


def test_a_chosen_run_that_does_not_read_back_makes_compare_read_everything(data, tmp_path,
                                                                            monkeypatch):
    newest = data / run_path(a_run("2026-01", 10, 310))
    document = json.loads(newest.read_text())
    document["results"][0]["status"] = 7  # its facts index well; the run does not validate
    newest.write_text(json.dumps(document))
    with pytest.raises(IndexMismatch, match="run-310"):
        read_in_full(index_history(data).runs)
    indexed = compared(tmp_path, data, name="indexed")
    everything_read(monkeypatch)
    whole = compared(tmp_path, data, name="whole")
    assert whole == indexed
    assert "run-310" not in json.dumps(whole)  # skipped as a bad file, as the reader does


def test_an_archive_whose_run_column_is_not_an_object_is_indexed_without_facts(tmp_path):
    """Its runs then match no filter on facts (and read back only if they are whole)."""
    import pyarrow as pa

    from torch_bench.store import columnar
    runs = [a_run("2025-11", d, 100 + d) for d in range(1, 3)]
    table = columnar.runs_table(runs, {"month": "2025/11", "samples": "kept"})
    broken = table.set_column(table.schema.get_field_index("run"), "run",
                              pa.array(["[1, 2]"] * table.num_rows, pa.string()))
    path = tmp_path / "data" / archive_path("2025/11", archive_digest(r.run_id for r in runs))
    path.parent.mkdir(parents=True)
    columnar.write_table(broken.replace_schema_metadata(table.schema.metadata), str(path))
    index = index_history(tmp_path / "data")
    assert [(r.run_id, dict(r.git), r.fingerprint) for r in index.runs] == [
        ("run-101", {}, None), ("run-102", {}, None)]
    assert index_history(tmp_path / "data", RunFilter(fingerprint="fp-test-0001")).runs == ()


@pytest.mark.parametrize("shape", ["as written", "results first", "nested results key",
                                   "results text in a message", "indented"])
def test_a_run_files_facts_come_from_its_members_before_the_results_whatever_its_shape(
        tmp_path, shape, monkeypatch):
    run = make_run([ok("steady", 10)], run_id="run-1", sha="c" * 40,
                   created_at="2026-01-05T00:00:00Z")
    document = run.to_dict()
    if shape == "results text in a message":
        document["git"]["message"] = 'fix "results": [1], "env": {"fingerprint": "x"}'
    if shape == "nested results key":
        document["config"] = {"results": [{"env": {"fingerprint": "nested"}}]}
    if shape == "results first":
        document = {"results": document.pop("results"), **document}
    path = tmp_path / "data" / run_path(run)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document, indent=2 if shape == "indented" else None))
    parsed = []
    parse_json = run_index.parse_json
    monkeypatch.setattr(run_index, "parse_json",
                        lambda text, source: parsed.append(len(text)) or parse_json(text, source))
    [entry] = index_history(tmp_path / "data").runs
    whole = path.stat().st_size
    assert (whole in parsed) == (shape == "results first")  # else only the part before
    full = load_history(tmp_path / "data").runs[0]
    assert facts([entry]) == facts([full])
    assert read_in_full([entry]) == [full]
