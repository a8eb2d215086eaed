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
    model = build_model(history)
    listed = json.loads((site / paths.RUNS_INDEX).read_text(encoding="utf-8"))
    assert len(listed) == RUNS
    assert len(list((site / "json" / "runs").iterdir())) == 2 * math.ceil(RUNS / 5)
    for entry in listed:
        table = json.loads((site / entry["table"]).read_text(encoding="utf-8"))
        offsets = table["values"]["offsets"]
        packed = (site / table["values"]["file"]).read_bytes()
        assert len(packed) == offsets[-1]
        line = packs.decode_run_values(packed[offsets[entry["line"]]:offsets[entry["line"] + 1]])
        assert line["run"] == entry["run"] == table["run"][entry["line"]]
        assert line == json.loads(json.dumps(data.run_values_payload(model, model.runs[
            [r.run_id for r in model.runs].index(entry["run"])])))


def points(count: int, seed: int = 0, **changes) -> dict[str, np.ndarray]:
    """A series' points as a build has them: every run, n constant, quartiles centred."""
    rng = np.random.default_rng(seed)
    median = rng.uniform(1e-4, 1e4, count)
    half = median * rng.uniform(0.001, 0.2, count)
    columns = {"run": np.arange(7, 7 + count), "n": np.full(count, 5), "median": median,
               "q1": median - half, "q3": median + half, "env": np.arange(count) // 20}
    return {**columns, **changes}


def assert_decodes_to(segment: bytes, columns: dict[str, np.ndarray]) -> None:
    decoded = packs.decode_segment(segment, len(columns["run"]))
    for name in ("run", "n", "env"):
        assert decoded[name].tolist() == np.asarray(columns[name]).tolist(), name
    for name in ("median", "q1", "q3"):  # as close as float32 keeps them
        assert decoded[name] == pytest.approx(columns[name], rel=2.0 ** -22, abs=0), name


def test_a_series_measured_in_every_run_costs_nine_bytes_a_point():
    columns = points(500)
    segment = packs.encode_segment(columns)
    assert len(segment) == packs.HEADER.size + 500 * 9  # median, half width, env in a byte
    assert_decodes_to(segment, columns)
    six = [float(f"{v:.6g}") for v in columns["q1"]]  # at most one unit of the sixth digit
    decoded = packs.decode_segment(segment, 500)["q1"]
    assert [float(f"{v:.6g}") for v in decoded] == pytest.approx(six, rel=1.01e-5)


@pytest.mark.parametrize(("changes", "extra_bytes"), [
    ({"run": np.cumsum(np.arange(1, 51) % 3 + 1)}, 49),  # gaps: run steps in a byte
    ({"run": np.arange(50) * 1000}, 0),  # a constant step, however long, is its base
    ({"run": np.cumsum(np.arange(50) ** 3 + 1)}, 49 * 4),  # long gaps: four bytes
    ({"n": np.arange(50) * 40 - 1}, 50 * 2),  # n from -1 to 1959: two bytes
    ({"env": np.zeros(50, int)}, -50),  # one environment: nothing stored
    ({"env": np.arange(50) * 2000}, 50 * 3),  # environments beyond 65,535: four bytes
])
def test_integer_columns_take_the_width_their_values_need(changes, extra_bytes):
    columns = points(50, **changes)
    segment = packs.encode_segment(columns)
    assert len(segment) == packs.HEADER.size + 50 * 9 + extra_bytes
    assert_decodes_to(segment, columns)


def test_quartiles_not_centred_on_the_median_are_kept_as_they_are():
    columns = points(50)
    columns["q3"] = columns["median"] * 1.5  # skewed
    segment = packs.encode_segment(columns)
    assert len(segment) == packs.HEADER.size + 50 * 13
    assert_decodes_to(segment, columns)
    wide = points(50)  # centred, but q1 near zero: median - half would lose its digits
    wide["q1"] = wide["median"] * 1e-6
    wide["q3"] = wide["median"] * (2 - 1e-6)
    assert_decodes_to(packs.encode_segment(wide), wide)


def test_segment_lengths_match_the_segments_without_making_them():
    parts = [points(40), points(40, q3=np.full(40, 1e9)),
             points(40, run=np.arange(40) * 7 + 100000, env=np.arange(40) * 9)]
    for seed, whole in enumerate(parts):
        columns = {name: np.concatenate([whole[name], points(40, seed + 9)[name] + (
            10**6 if name == "run" else 0)]) for name in whole}
        lengths = packs.segment_lengths(columns, 40).tolist()
        made = [packs.encode_segment({k: v[i * 40:(i + 1) * 40] for k, v in columns.items()})
                for i in range(2)]
        assert lengths == [len(m) for m in made]


def test_a_damaged_or_foreign_segment_is_refused():
    segment = packs.encode_segment(points(20))
    packs.decode_segment(segment, 20)
    for bad in (segment[:-1], segment[:10], bytes([1]) + segment[1:], segment + b"\0"):
        with pytest.raises(ValueError):
            packs.decode_segment(bad, 20)
    with pytest.raises(ValueError):
        packs.encode_segment(points(20, run=np.arange(20)[::-1]))  # runs go back


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


@pytest.mark.parametrize("run_id", ["r", "run-1", "run-12", "run-123"])  # every padding
def test_a_runs_values_part_gives_back_its_payload(run_id):
    payload = {"run": run_id, "statuses": ["ok", "error"], "series": [[0, 3], [7, 2]],
               "median": [1.23457, None, 9.99999e-07, 123456.0, 0.5], "status": [0, 1, 0, 0, 0]}
    part = packs.encode_run_values(payload)
    assert len(part) % 4 == 0 and len(part) < len(packs.json_bytes(payload)) + 8
    assert packs.decode_run_values(part) == payload
    with pytest.raises(ValueError):
        packs.decode_run_values(part[:-4])
