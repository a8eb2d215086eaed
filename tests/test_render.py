"""The dashboard's pure pieces (model, marks, tables, escaping) and its writer and command."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from site_history import MAIN_RUNS, RUNS, XSS_MESSAGE, XSS_NAME, make_run, write_history
from torch_bench.errors import UserError
from torch_bench.render import paths
from torch_bench.render.build import build_site, default_change_point_finder
from torch_bench.render.data import (
    overlay_siblings,
    run_table_payload,
    series_payload,
    training_payload,
)
from torch_bench.render.escape import json_for_html
from torch_bench.render.formatting import change_class, format_change, format_value
from torch_bench.render.markers import change_marks, env_changes
from torch_bench.render.model import build_model, choose_baseline_branch, run_info
from torch_bench.render.pages import compare_context, suite_context, training_context
from torch_bench.render.sparkline import sparkline_points
from torch_bench.render.writer import plotly_js
from torch_bench.store.reader import History


@pytest.fixture(scope="module")
def model():
    return build_model(History(tuple(make_run(i) for i in range(RUNS))))


def series_named(model, name, **params):
    return next(s for s in model.series if s.name == name
                and all(s.params.get(k) == v for k, v in params.items()))


@dataclass(frozen=True)
class Found:
    index: int
    before: float
    after: float
    ratio: float


def test_json_for_html_cannot_close_a_script_element():
    text = json_for_html({"m": XSS_MESSAGE + "<!-- & \u2028\u2029"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"m": XSS_MESSAGE + "<!-- & \u2028\u2029"}


def test_series_group_results_by_benchmark_id_oldest_first(model):
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    assert len(bert.points) == RUNS
    assert [p.run.index for p in bert.points] == list(range(RUNS))
    assert bert.unit == "ms" and bert.direction == "lower"
    t5 = series_named(model, "t5")
    assert len(t5.points) == RUNS - 1 and t5.last_status == "oom"
    assert len({s.key for s in model.series}) == len(model.series)


def test_baseline_branch_prefers_main_then_the_busiest():
    runs = [run_info(i, make_run(i)) for i in range(RUNS)]
    assert choose_baseline_branch(runs) == "main"
    assert choose_baseline_branch(runs, preferred=("trunk",)) == "main"  # the busiest
    assert choose_baseline_branch([]) is None


def test_run_info_keeps_only_http_commit_urls():
    run = make_run(0)
    hostile = type(run)(**{**{f: getattr(run, f) for f in run.__dataclass_fields__},
                           "git": {**run.git, "url": "javascript:alert(1)"}})
    assert run_info(0, run).url.startswith("https://")
    assert run_info(0, hostile).url is None


def test_environment_changes_are_marked_where_torch_changed(model):
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    [change] = env_changes(bert.points)
    assert change.index == 5 and change.label == "torch 2.5.0 → 2.6.0"


def test_change_points_are_found_on_the_baseline_branch_and_mapped_back(model):
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    seen = []

    def finder(values):
        seen.append(list(values))
        return [Found(6, 10.0, 12.5, 1.25)]

    [mark] = change_marks(bert, "main", finder)
    assert len(seen[0]) == MAIN_RUNS  # the feature branch's points are left out
    assert mark.index == 6 and mark.regression  # latency up: worse
    higher_is_better = next(s for s in model.series if s.metric == "speedup")
    [mark] = change_marks(higher_is_better, "main", finder)
    assert not mark.regression
    assert change_marks(bert, "main", lambda values: [Found(99, 1, 1, 1)]) == []
    seen.clear()
    [mark] = change_marks(bert, "main", lambda v: finder(v)[:0] + [Found(1, 1, 1, 1)], window=4)
    assert seen[0] == [p.median for p in bert.points[MAIN_RUNS - 4:MAIN_RUNS]]
    assert mark.index == MAIN_RUNS - 3  # mapped back from the window


def test_default_finder_comes_from_the_analysis_module_when_present(monkeypatch):
    import sys
    import types

    from torch_bench.render.build import CHANGE_POINT_MODULE
    from torch_bench.render.model import no_change_points

    monkeypatch.setitem(sys.modules, CHANGE_POINT_MODULE, None)  # import fails
    assert default_change_point_finder() is no_change_points
    module = types.ModuleType(CHANGE_POINT_MODULE)
    module.find_change_points = lambda values: [Found(1, 1.0, 2.0, 2.0)]
    monkeypatch.setitem(sys.modules, CHANGE_POINT_MODULE, module)
    assert default_change_point_finder() is module.find_change_points


def test_the_analysis_finder_marks_the_step_in_the_history(tmp_path):
    site = build_site(History(tuple(make_run(i) for i in range(RUNS))), tmp_path / "site")
    model = build_model(History(tuple(make_run(i) for i in range(RUNS))))
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    data = json.loads((site / paths.series_data(bert)).read_text(encoding="utf-8"))
    [change] = data["change_points"]
    assert change["index"] == 6 and change["regression"]
    assert round(change["ratio"], 2) == 1.25
    assert "+25.0%" in (site / paths.INDEX_PAGE).read_text(encoding="utf-8")


def test_suite_rows_compare_with_previous_run_and_the_baseline_branch(model):
    context = suite_context(model, "transformers")
    assert len(context["rows"]) == 10
    bert = next(r for r in context["rows"] if r.series.params.get("dtype") == "float32"
                and r.series.params.get("batch_size") == 1 and r.series.name == "bert")
    assert bert.latest_run.branch != "main"
    assert bert.vs_baseline.endswith("%") and bert.vs_previous.endswith("%")
    t5 = next(r for r in context["rows"] if r.series.name == "t5")
    assert t5.vs_previous == "—" and t5.vs_baseline == "—"  # the newest result failed
    filters = {f["key"]: f["options"] for f in context["filters"]}
    assert filters["batch_size"] == ["1", "8"]
    assert filters["gpu"] == ["NVIDIA A100-SXM4-80GB"]
    assert XSS_NAME in filters["model"]


def test_overlay_siblings_differ_in_one_facet_only(model):
    siblings = overlay_siblings(model)
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    assert {s.params["dtype"] for s in siblings[bert.key]["dtype"]} == {"float32", "float16"}
    assert {s.params["batch_size"] for s in siblings[bert.key]["batch_size"]} == {1, 8}
    assert "model" not in siblings[bert.key]  # gpt2 differs in its size too


def test_series_payload_has_one_entry_per_point(model):
    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    payload = series_payload(bert, env_changes(bert.points), [], {})
    assert all(len(column) == RUNS for column in payload["points"].values())
    assert payload["env_changes"] == [{"index": 5, "label": "torch 2.5.0 → 2.6.0"}]
    assert [e["torch"] for e in payload["environments"]] == ["2.5.0", "2.6.0"]
    assert payload["points"]["run"] == [p.run.index for p in bert.points]  # run table rows
    json.dumps(payload, allow_nan=False)
    table = run_table_payload(model.runs, 0, "values.jsonl", range(RUNS + 1))
    assert table["commit_url_prefix"] == "https://github.com/octo/net/commit/"
    assert "url" not in table  # every URL is prefix + sha


def test_compare_defaults_to_the_newest_run_against_the_baseline(model):
    context = compare_context(model)
    base, newest = context["pair"]
    assert newest.index == RUNS - 1 and base.branch == "main" and base.index == MAIN_RUNS - 1
    t5 = next(r for r in context["rows"] if r["series"].name == "t5")
    assert t5["b"] == "oom" and t5["ratio"] == "—"


def test_training_table_puts_compiled_next_to_eager(model):
    payload = training_payload(model)
    context = training_context(payload)
    cnn, mlp = context["rows"]  # one row per model: native and compiled side by side
    assert mlp["backend"] == "inductor" and mlp["name"] == "mlp"
    assert mlp["params"] == "optimizer=adam"  # runtime and backend are the columns
    assert float(mlp["ratio"]) < 1  # the synthetic compiled run ends lower
    assert cnn["ratio"] == "1.000" and cnn["eager"] == cnn["compiled"]


@pytest.mark.parametrize("change, direction, expected", [
    (0.05, "lower", "worse"), (-0.05, "lower", "better"), (0.05, "higher", "better"),
    (0.001, "lower", "same"), (None, "lower", "same"),
])
def test_change_class_follows_the_metric_direction(change, direction, expected):
    assert change_class(change, direction) == expected


def test_formatting_uses_the_unit_table():
    assert format_value(12.345678, "ms") == "12.35 ms"
    assert format_value(1234.5, "ms") == "1.234 s"
    assert format_value(None, "ms") == "—"
    assert format_change(0.0512) == "+5.1%"


def test_sparkline_spans_its_box_and_keeps_noise_flat():
    points = [tuple(map(float, p.split(","))) for p in sparkline_points([1, 2, 3]).split()]
    assert points[0][1] > points[-1][1]  # rising values go up
    flat = [float(p.split(",")[1]) for p in sparkline_points([100, 100.1, 99.9]).split()]
    assert max(flat) - min(flat) < 6
    assert sparkline_points([]) == ""


def test_built_site_escapes_text_and_ships_plotly(tmp_path):
    write_history(tmp_path / "data")
    from torch_bench.store.reader import load_history

    site = build_site(load_history(tmp_path / "data"), tmp_path / "site")
    assert (site / paths.PLOTLY_FILE).read_bytes() == plotly_js()
    html = "\n".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert "<img src=x" not in html and "</script><script>" not in html
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in html
    # every benchmark page's data file exists; the overview refers to no series file
    pages = list((site / "bench").glob("*.html"))
    assert len(pages) == len(list((site / "json" / "series").glob("*.json")))
    assert "json/series/" not in (site / "index.html").read_text(encoding="utf-8")
    runs = json.loads((site / paths.RUNS_INDEX).read_text(encoding="utf-8"))
    assert len(runs) == RUNS and all((site / r["table"]).is_file() for r in runs)


def test_rebuild_replaces_the_site_but_never_a_foreign_folder(tmp_path):
    history = History(tuple(make_run(i) for i in range(3)))
    site = build_site(history, tmp_path / "site")
    (site / "stale.html").write_text("old")
    build_site(history, site)
    assert not (site / "stale.html").exists() and (site / "index.html").is_file()
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.md").write_text("keep me")
    with pytest.raises(UserError, match="not a torch-bench site"):
        build_site(history, foreign)
    assert (foreign / "notes.md").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "site"]  # no leftovers


def test_empty_history_builds_a_useful_site(tmp_path):
    site = build_site(History(()), tmp_path / "site")
    assert "No results yet" in (site / "index.html").read_text(encoding="utf-8")
    assert "at least two runs" in (site / "compare.html").read_text(encoding="utf-8")


def test_site_around_its_data_folder_keeps_the_data(cli, tmp_path: Path):
    write_history(tmp_path / "public" / "data")
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "public" / "data").rglob("*"))
    for _ in range(2):  # the first build and a rebuild over it
        cli("site", "--data", "public/data", "--out", "public", check=True)
        after = sorted(p.relative_to(tmp_path) for p in (tmp_path / "public" / "data").rglob("*"))
        assert after == before and (tmp_path / "public" / "index.html").is_file()
    same = cli("site", "--data", "public/data", "--out", "public/data")
    assert same.returncode == 2 and "is the data folder" in same.stderr
    write_history(tmp_path / "other" / "json")
    clash = cli("site", "--data", "other/json", "--out", "other")
    assert clash.returncode == 2 and "the site writes this path itself" in clash.stderr


def test_site_command(cli, tmp_path: Path):
    write_history(tmp_path / "data")
    (tmp_path / "data" / "runs" / "2026" / "01" / "broken.json").write_text("{")
    done = cli("site", "--data", "data", "--out", "public", check=True)
    assert "broken.json" in done.stderr and (tmp_path / "public" / "index.html").is_file()
    missing = cli("site", "--data", "nowhere", "--out", "public")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "torch-bench: error: nowhere: no such data folder"]


@pytest.mark.slow
def test_wheel_ships_templates_and_static_assets(tmp_path):
    import subprocess
    import sys
    import zipfile

    pytest.importorskip("setuptools")
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(tmp_path), str(root)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n for n in names if n.startswith("torch_bench/render/")}
    expected = {f"torch_bench/render/templates/{p.name}"
                for p in (root / "templates").glob("*.html")}
    expected |= {f"torch_bench/render/static/{p.name}" for p in (root / "site").iterdir()
                 if p.suffix in (".css", ".js")}
    assert expected and expected <= shipped


def test_site_ships_the_partial_plotly_bundle_and_no_script_over_1_5_mb(tmp_path):
    write_history(tmp_path / "data")
    from torch_bench.store.reader import load_history

    site = build_site(load_history(tmp_path / "data"), tmp_path / "site")
    bundle = (site / paths.PLOTLY_FILE).read_bytes()
    assert b"plotly.js (basic - minified)" in bundle[:200]
    scripts = list(site.rglob("*.js"))
    assert scripts and all(s.stat().st_size < 1_500_000 for s in scripts)
    benchmark_page = next((site / "bench").glob("*.html")).read_text(encoding="utf-8")
    assert "plotly" not in benchmark_page  # its chart is the dashboard's own, no library
    assert "<script src=" not in benchmark_page.replace('<script src="../static/dashboard.js"',
                                                        "")


def test_a_trend_card_says_the_unit_once(model):
    from torch_bench.render.noise_band import noise_band
    from torch_bench.render.trends import trend_card

    bert = series_named(model, "bert", dtype="float32", batch_size=1)
    card = trend_card(bert, [], noise_band(bert, "main"), "main")
    assert card.latest.count(bert.unit) == 1, card.latest


def test_environment_change_labels_follow_each_series_own_points():
    """Labels are worked out once per pair of versions for all series (a memo on the run
    table), yet each series gets the changes between its own consecutive points."""
    from torch_bench.results.schema import measured, new_run
    torches = ["2.5.0", "2.5.0", "2.6.0", "2.6.0", "2.5.0", "2.6.0"]
    runs = []
    for i, torch in enumerate(torches):
        results = [measured("rnns", name, "forward_time", [1.0 + i] * 3)
                   for name in ("lstm", "gru") if not (name == "gru" and i == 2)]
        runs.append(new_run(results, run_id=f"r{i}", created_at=f"2026-01-0{i + 1}T00:00:00Z",
                            git={"sha": f"{i:040x}", "branch": "main"},
                            env={"torch": torch, "cuda": "12.4" if i < 5 else "12.6"}))
    model = build_model(History(tuple(runs)))
    by_name = {s.name: [(c.index, c.label) for c in env_changes(s.points)]
               for s in model.series}
    assert by_name["lstm"] == [(2, "torch 2.5.0 → 2.6.0"), (4, "torch 2.6.0 → 2.5.0"),
                               (5, "torch 2.5.0 → 2.6.0; CUDA 12.4 → 12.6")]
    assert by_name["gru"] == [(2, "torch 2.5.0 → 2.6.0"), (3, "torch 2.6.0 → 2.5.0"),
                              (4, "torch 2.5.0 → 2.6.0; CUDA 12.4 → 12.6")]
