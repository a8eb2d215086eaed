"""The packed data files: a run's values line says what the model says of each result (to
six significant digits), a run table's offsets cut the values pack into its runs' lines, and
segments decode to the points they were made from."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from site_history import RUNS, write_history
from torch_bench.render import data, packs, paths
from torch_bench.render.build import build_site
from torch_bench.render.model import build_model
from torch_bench.store.reader import load_history


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    write_history(root / "data")
    return load_history(root / "data")


def test_each_values_line_holds_what_the_model_says_of_every_result_of_its_run(history):
    model = build_model(history)
    for run in model.runs:
        line = data.run_values_payload(model, run)
        values = sorted(model.run_values(run), key=lambda v: model.series.index(v.series))
        positions = [p for first, count in line["series"] for p in range(first, first + count)]
        assert positions == [model.series.index(v.series) for v in values]
        codes = line.get("status", [0] * len(values))
        assert [line["statuses"][c] for c in codes] == [v.status for v in values]
        assert [m is None for m in line["median"]] == [v.median is None for v in values]
        assert [m for m in line["median"] if m is not None] == pytest.approx(
            [v.median for v in values if v.median is not None], rel=1e-5)
    newest = data.run_values_payload(model, model.runs[-1])
    assert None in newest["median"]  # the failed result has no value, only its status
    assert len(newest["statuses"]) == 2 and "status" in newest
    oldest = data.run_values_payload(model, model.runs[0])
    assert "status" not in oldest  # all "ok"
    assert len(oldest["series"]) == 1  # every benchmark: one span


def test_spans_of_consecutive_positions():
    assert data.spans(np.asarray([0, 1, 2, 5, 6, 9])) == [[0, 3], [5, 2], [9, 1]]
    assert data.spans(np.asarray([4, 3])) == [[4, 1], [3, 1]]
    assert data.spans(np.asarray([], np.int32)) == []


def test_the_run_tables_locate_every_runs_line_in_the_values_packs(history, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(data, "RUN_CHUNK", 5)
    site = build_site(history, tmp_path / "site")
    listed = json.loads((site / paths.RUNS_INDEX).read_text(encoding="utf-8"))
    assert len(listed) == RUNS
    assert len(list((site / "json" / "runs").iterdir())) == 2 * math.ceil(RUNS / 5)
    for entry in listed:
        table = json.loads((site / entry["table"]).read_text(encoding="utf-8"))
        offsets = table["values"]["offsets"]
        packed = (site / table["values"]["file"]).read_bytes()
        assert len(packed) == offsets[-1]
        line = json.loads(packed[offsets[entry["line"]]:offsets[entry["line"] + 1]])
        assert line["run"] == entry["run"] == table["run"][entry["line"]]


def test_a_segment_decodes_to_its_points_at_six_significant_digits():
    rng = np.random.default_rng(0)
    median = rng.uniform(1e-4, 1e4, 50)
    columns = {"run": np.arange(50), "n": np.full(50, 5), "median": median,
               "q1": median * 0.99, "q3": median * 1.01, "env": np.arange(50) % 3}
    segment = packs.encode_segment(columns)
    assert len(segment) == 50 * packs.POINT_BYTES
    decoded = packs.decode_segment(segment)
    assert decoded["run"].tolist() == list(range(50))
    assert decoded["env"].tolist()[:4] == [0, 1, 2, 0]
    six = [float(f"{v:.6g}") for v in median]
    assert [float(f"{v:.6g}") for v in decoded["median"].tolist()] == pytest.approx(six, rel=2e-6)
    with pytest.raises(ValueError):
        packs.decode_segment(segment[:-1])


def test_six_digits_rounds_many_values_as_one_value_is_rounded():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.uniform(-1, 1, 300) * 10.0 ** rng.integers(-12, 12, 300),
                             [0.0, 123456789.0, 1e-300, 1.5e300, np.nan, np.inf]])
    got = data.six_digits(values)
    for value, rounded in zip(values.tolist(), got.tolist(), strict=True):
        if math.isfinite(value):
            assert repr(rounded) == repr(data.rounded(value)) or \
                rounded == pytest.approx(data.rounded(value), rel=1.1e-6)
        else:
            assert math.isnan(rounded) if math.isnan(value) else rounded == value
    printed = [repr(v) for v in got[:300].tolist()]
    assert all(len(p.split("e")[0].replace("-", "").replace(".", "").strip("0")) <= 6
               for p in printed)
