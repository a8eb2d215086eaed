"""Run notes: bounded, validated, kept beside the runs, accepted by `data verify`, left in
place by `data compact`, and shown on the benchmark page at the change point they belong to."""

from __future__ import annotations

import json

import pytest

from run_notes_data import (
    FIRST_BAD,
    HOSTILE_OP,
    HOSTILE_SUBJECT,
    STEP_AT,
    bisect_document,
    explain_document,
    write_data,
)
from torch_bench.cli import main
from torch_bench.errors import UserError
from torch_bench.render.build import build_site_from_data
from torch_bench.results.run_notes import MAX_ROWS, bisect_note, op_diff_note
from torch_bench.store.notes import NOTES_DIR, note_files, read_notes, write_note


def step_finder(values):
    """Any jump of more than 10% is a change point (a stand-in for the analysis module)."""
    from types import SimpleNamespace
    return [SimpleNamespace(index=i, before=values[i - 1], after=values[i],
                            ratio=values[i] / values[i - 1])
            for i in range(1, len(values)) if abs(values[i] / values[i - 1] - 1) > 0.10]


def test_op_diff_note_keeps_the_largest_rows_and_no_traces():
    note = op_diff_note("r1", explain_document())
    case = note["cases"][0]
    assert len(case["rows"]) == MAX_ROWS and case["more"] == 2
    assert case["rows"][0]["name"] == HOSTILE_OP
    assert case["graph_breaks"] == [0, 1]
    assert "traces" not in json.dumps(note) and "/tmp/" not in json.dumps(note)


def test_nothing_explained_or_found_makes_no_note():
    assert op_diff_note("r1", {"explained": [], "skipped": []}) is None
    assert bisect_note("r1", {**bisect_document(), "first_bad_commit": None}) is None


def test_a_note_for_another_run_or_an_invalid_one_is_refused(tmp_path):
    runs = write_data(tmp_path, notes=False)
    with pytest.raises(UserError, match="cannot be attached"):
        write_note(tmp_path, runs[0], op_diff_note("other", explain_document()))
    bad = op_diff_note(runs[0].run_id, explain_document())
    bad["cases"][0]["rows"][0]["kind"] = "exploded"
    with pytest.raises(UserError, match="not a run note"):
        write_note(tmp_path, runs[0], bad)
    assert note_files(tmp_path) == []


def test_verify_accepts_notes_and_reports_a_broken_one(tmp_path, capsys):
    runs = write_data(tmp_path / "data")
    assert main(["data", "verify", "--data", str(tmp_path / "data")]) == 0
    broken = tmp_path / "data" / NOTES_DIR / "2026" / "02" / f"{runs[1].run_id}.bisect.json"
    broken.write_text('{"schema": {"name": "torch-bench/run-note", "version": 1}}')
    assert main(["data", "verify", "--data", str(tmp_path / "data")]) == 1
    assert f"{runs[1].run_id}.bisect.json" in capsys.readouterr().out


def test_compaction_leaves_the_notes_readable(tmp_path):
    runs = write_data(tmp_path / "data")
    assert main(["data", "compact", "--data", str(tmp_path / "data"),
                 "--before", "2026-03"]) == 0
    assert not list((tmp_path / "data" / "runs").glob("*/*/*.json"))
    notes, problems = read_notes(tmp_path / "data")
    assert problems == [] and set(notes[runs[STEP_AT].run_id]) == {"op-diff", "bisect"}
    assert main(["data", "verify", "--data", str(tmp_path / "data")]) == 0


def test_the_benchmark_page_shows_the_notes_at_their_change_point_only(tmp_path):
    runs = write_data(tmp_path / "data")
    site = build_site_from_data(tmp_path / "data", tmp_path / "site", finder=step_finder)
    pages = {p.name: p.read_text(encoding="utf-8") for p in (site / "bench").glob("*.html")}
    mlp = next(text for name, text in pages.items() if "mlp" in name)
    steady = next(text for name, text in pages.items() if "steady" in name)
    assert f'data-run="{runs[STEP_AT].run_id}"' in mlp
    assert "aten::&lt;img src=x onerror=window.__xss=1&gt;" in mlp and HOSTILE_OP not in mlp
    assert f'href="https://github.com/octo/net/commit/{FIRST_BAD}"' in mlp
    assert "&lt;/script&gt;&lt;script&gt;" in mlp and HOSTILE_SUBJECT not in mlp
    assert "change-note" not in steady  # no change point there, so nothing to attach to


@pytest.mark.parametrize("flags, said", [
    (["--attach-to", "{data}"], "--attach-to and --run go together"),
    (["--attach-to", "{data}", "--run", "no-such-run"], "--run: no run no-such-run"),
    (["--attach-to", "{data}/missing", "--run", "x"], "no such data folder")])
def test_attach_flags_are_checked_before_anything_is_measured(tmp_path, capsys, flags, said):
    write_data(tmp_path / "data", notes=False)
    flags = [f.format(data=tmp_path / "data") for f in flags]
    for command in (["explain", "--base", str(tmp_path), "--head", str(tmp_path)],
                    ["bisect", "--good", "HEAD~1", "--bad", "HEAD", "--repo", str(tmp_path)]):
        assert main([*command, *flags, "--", "--suite", "rnns"]) == 2
        assert said in capsys.readouterr().err


def test_pruning_a_run_removes_its_notes(tmp_path, capsys):
    runs = write_data(tmp_path / "data")
    day_after = runs[STEP_AT + 1].created_at[:10]  # runs before it go, the noted one too
    assert main(["data", "prune", "--data", str(tmp_path / "data"), "--before",
                 day_after]) == 0
    assert f"delete {NOTES_DIR}/2026/02/{runs[STEP_AT].run_id}.bisect.json" in \
        capsys.readouterr().out
    assert note_files(tmp_path / "data") == []
    assert main(["data", "verify", "--data", str(tmp_path / "data")]) == 0


def test_a_note_attached_after_a_build_reaches_the_page_on_the_next_build(tmp_path):
    runs = write_data(tmp_path / "data", notes=False)
    site = build_site_from_data(tmp_path / "data", tmp_path / "site", finder=step_finder)
    page = next((site / "bench").glob("*mlp*.html"))
    assert "change-note" not in page.read_text(encoding="utf-8")
    stepped = runs[STEP_AT]
    write_note(tmp_path / "data", stepped, bisect_note(stepped.run_id, bisect_document()))
    build_site_from_data(tmp_path / "data", tmp_path / "site", finder=step_finder)
    assert f"first bad commit <a href=\"https://github.com/octo/net/commit/{FIRST_BAD}\"" in \
        page.read_text(encoding="utf-8")
