import pytest

from torch_bench.fileio import write_json_atomic
from torch_bench.results.schema import measured, new_run
from torch_bench.store.layout import run_path
from torch_bench.store.reader import RunFilter, load_history
from torch_bench.store.table import results_frame


def put(root, run):
    write_json_atomic(root / run_path(run), run.to_dict())


def test_history_is_read_in_time_order_and_bad_files_are_named(tmp_path):
    late = new_run([measured("s", "a", "latency", [2.0])], created_at="2026-02-01T00:00:00Z",
                   git={"branch": "main"})
    early = new_run([measured("s", "a", "latency", [1.0])], created_at="2026-01-01T00:00:00Z",
                    git={"branch": "feature"})
    put(tmp_path, late)
    put(tmp_path, early)
    corrupt = tmp_path / "runs" / "2026" / "01" / "broken.json"
    corrupt.write_text("{not json")
    history = load_history(tmp_path)
    assert [r.run_id for r in history.runs] == [early.run_id, late.run_id]
    assert len(history.problems) == 1 and "broken.json: not valid JSON" in history.problems[0]
    assert [r.run_id for r in load_history(tmp_path, RunFilter(branch="main")).runs] == [
        late.run_id]
    frame = results_frame(history.runs)
    assert list(frame["median"]) == pytest.approx([1.0, 2.0])
    assert set(frame["branch"]) == {"main", "feature"}
