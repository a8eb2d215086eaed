"""The strict decoders and the rules every document and configuration passes: keys given
twice, nesting, names, negative values, units, devices and numeric ranges."""

from __future__ import annotations

import json
import random

import pytest

from test_cli import assert_usage_error
from torch_bench.config import build_run_config, load_yaml_config
from torch_bench.decoding import (
    MAX_JSON_DEPTH,
    MAX_YAML_DEPTH,
    _quickly_judged_too_deep,
    json_too_deep,
    parse_json,
    parse_yaml,
)
from torch_bench.errors import InvalidDocument, UserError
from torch_bench.formats import importer
from torch_bench.formats.oss import import_oss
from torch_bench.results.schema import measured, new_run
from torch_bench.results.validate import problems
from torch_bench.store.folder import store_in_folder


def test_a_json_key_given_twice_is_refused_at_any_depth():
    assert parse_json('{"a": 1, "b": {"c": 2}}', "x") == {"a": 1, "b": {"c": 2}}
    for text in ('{"a": 1, "a": 2}', '{"b": [{"c": 1, "c": 1}]}'):
        with pytest.raises(InvalidDocument, match=r"^x: the key '[ac]' is given twice"):
            parse_json(text, "x")


def test_json_nesting_is_capped_before_parsing_and_brackets_in_strings_do_not_count():
    fits = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(fits, "x") is not None
    # deeper than the cap but far shallower than the parser's own limit
    too_deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(InvalidDocument, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        parse_json(too_deep, "x")
    assert parse_json(json.dumps({"s": "[" * 5000 + '"\\'}), "x") == {"s": "[" * 5000 + '"\\'}


def test_a_yaml_key_given_twice_and_deep_yaml_are_refused():
    assert parse_yaml("a: 1\nb: {c: 2}\n", "c.yaml") == {"a": 1, "b": {"c": 2}}
    with pytest.raises(InvalidDocument, match=r"c.yaml: not valid YAML \(line 2\): the key "
                                              r"'suites' is given twice"):
        parse_yaml("suites: [rnns]\nsuites: [cnns]\n", "c.yaml")
    with pytest.raises(InvalidDocument, match="given twice"):
        parse_yaml("timing: {warmup: 1, warmup: 2}\n", "c.yaml")
    depth = MAX_YAML_DEPTH + 1
    with pytest.raises(InvalidDocument, match=f"nested more than {MAX_YAML_DEPTH} levels"):
        parse_yaml("a: " + "[" * depth + "]" * depth, "c.yaml")
    assert parse_yaml("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n", "c.yaml")["other"] == \
        {"x": 1, "y": 2}  # merge keys are not keys given twice


def _document(**fields) -> dict:
    doc = new_run([measured("s", "b", "latency", [1.0, 2.0, 3.0])]).to_dict()
    doc["results"][0].update(fields)
    return doc


@pytest.mark.parametrize("name", ["b\x1b[31m", "\u202eb", "b\nc", "", "   ", "n" * 501,
                                  "a\x85b", "a\u2066b"])
@pytest.mark.parametrize("field", ["name", "suite", "group", "metric"])
def test_names_with_control_characters_or_nothing_in_them_are_refused(field, name):
    found = problems(_document(**{field: name}))
    assert found and found[0].startswith(f"results[0].{field}: "), found
    assert "without control characters" in found[0] and "\n" not in found[0]


def test_a_parameter_name_with_a_control_character_is_refused():
    assert problems(_document(params={"batch\x07": 1}))


@pytest.mark.parametrize(("unit", "metric"), [("ms", "latency"), ("MB", "peak_memory"),
                                              ("samples/s", "throughput"),
                                              ("ratio", "speedup"), ("count", "graph_breaks")])
def test_negative_values_are_refused_where_the_unit_cannot_be_negative(unit, metric):
    direction = "higher" if metric in ("throughput", "speedup") else "lower"
    doc = _document(metric=metric, unit=unit, direction=direction)
    assert problems(doc) == []
    doc["results"][0]["samples"] = [1.0, -2.0, 3.0]
    assert problems(doc) == [f"results[0].samples[1]: -2.0 is negative, and a value in "
                             f"{unit!r} cannot be"]
    doc = _document(metric=metric, unit=unit, direction=direction)
    doc["results"][0]["summary"]["min"] = -1.0
    assert problems(doc)[0].startswith("results[0].summary.min: -1.0 is negative")


def test_a_loss_may_be_negative():
    doc = new_run([measured("training", "b", "loss", [-1.5, -1.2])]).to_dict()
    assert problems(doc) == []


def test_every_importer_refuses_a_negative_time_and_a_memory_metric_in_time_units(tmp_path):
    with pytest.raises(InvalidDocument, match=r"^o.json: an imported value is not valid: "
                                              r"results\[0\].samples\[0\]: -1.5 is negative"):
        importer("oss")('{"lstm": {"cudnn": -1.5}}', source="o.json", unit="ms")
    with pytest.raises(UserError, match="the metric 'peak_memory' is measured in 'MB', so "
                                        "values in 'ms' cannot be it"):
        import_oss('{"lstm": {"cudnn": 1.5}}', source="o.json", unit="ms",
                   metric="peak_memory")
    assert import_oss('{"lstm": {"cudnn": 1.5}}', source="o.json", unit="KB",
                      metric="peak_memory")[0].unit == "MB"


def test_a_device_that_is_not_a_string_or_is_empty_is_refused(tmp_path):
    for text in ("device: 0\n", "device: ''\n", "device: false\n"):
        (tmp_path / "c.yaml").write_text("suites: [rnns]\n" + text)
        with pytest.raises(UserError, match="device"):
            build_run_config(yaml_data=load_yaml_config(str(tmp_path / "c.yaml")),
                             yaml_source="c.yaml")
    with pytest.raises(UserError, match=r"--device: '' is not cpu, cuda or cuda:N"):
        build_run_config(suites=["rnns"], device="")
    assert build_run_config(suites=["rnns"]).device == "cpu"


@pytest.mark.parametrize(("text", "message"), [
    ("threads: 100000000000000000000000", "threads: expected a whole number from 1 to 4,096"),
    ("timing: {warmup: 100000000000000000000000}", "timing.warmup: expected a whole number "
                                                   "from 0 to 1,000,000 calls"),
    ("timing: {max_time_s: .nan}", "timing.max_time_s: expected a finite number, got nan"),
    ("timing: {warmup: '3'}", "timing.warmup: expected a whole number, got '3'"),
    ("timing: {warmup: true}", "timing.warmup: expected a whole number, got True"),
    ("isolation: {timeout_s: .inf}", "isolation.timeout_s: expected a finite number"),
    ("preflight: {cpu_busy_limit: .nan}", "preflight.cpu_busy_limit: expected a finite"),
    ("processes: 5000", "processes: expected a whole number from 1 to 1,024"),
])
def test_configuration_numbers_are_finite_and_in_range(tmp_path, text, message):
    (tmp_path / "c.yaml").write_text(f"suites: [rnns]\n{text}\n")
    with pytest.raises(UserError) as caught:
        build_run_config(yaml_data=load_yaml_config(str(tmp_path / "c.yaml")),
                         yaml_source="c.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _history(folder):
    runs = [new_run([measured("s", "lstm", "latency", [1.0, 1.1, 0.9], params={"batch": 8})],
                    created_at=f"2026-01-0{day}T00:00:00Z",
                    git={"branch": branch, "sha": f"{day:040x}"})
            for day, branch in ((1, "main"), (2, "dev"))]
    store_in_folder(runs, folder)


def test_renaming_what_is_not_there_is_an_error_and_changes_nothing(tmp_path, cli):
    _history(tmp_path / "benchmarks")
    before = sorted(p.read_bytes() for p in (tmp_path / "benchmarks").rglob("*.json"))
    assert_usage_error(cli("data", "rename", "--benchmark", "lstn", "gru"),
                       "data rename: no benchmark 'lstn'")
    assert_usage_error(cli("data", "rename", "--param", "batch", "9", "16"),
                       "no result has the parameter batch=9")
    assert sorted(p.read_bytes() for p in (tmp_path / "benchmarks").rglob("*.json")) == before
    cli("data", "rename", "--benchmark", "lstm", "gru", check=True)


def test_a_baseline_branch_without_runs_is_a_loud_warning_naming_the_branches(tmp_path, cli):
    _history(tmp_path / "benchmarks")
    done = cli("site", "--data", "benchmarks", "--out", "site", "--baseline-branch", "mian",
               check=True)
    warning = [line for line in done.stderr.splitlines() if "mian" in line]
    assert warning and "warning" in warning[0] and "'dev', 'main'" in warning[0], done.stderr
    done = cli("site", "--data", "benchmarks", "--out", "site", "--baseline-branch", "dev",
               check=True)
    assert "warning" not in done.stderr


def _random_json(rng: random.Random, depth: int):
    """A value nesting exactly `depth` levels, its strings full of brackets, quotes,
    backslashes and text beyond ASCII."""
    def text():
        return "".join(rng.choice('[]{}"\\/ aé\n\t\u2028') for _ in range(rng.randrange(6)))
    value = text() if rng.random() < 0.5 else rng.random()
    for _ in range(depth):
        siblings = [text() for _ in range(rng.randrange(3))]
        if rng.random() < 0.5:
            value = [*siblings, value]
        else:
            value = {text() + str(i): s for i, s in enumerate(siblings)} | {"k": value}
    return value


def test_the_quick_depth_verdict_matches_the_exact_one_on_every_document_the_parser_reads():
    rng = random.Random(7)
    for _ in range(300):
        depth = rng.choice([1, 3, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 150])
        text = json.dumps(_random_json(rng, depth), ensure_ascii=rng.random() < 0.5)
        assert _quickly_judged_too_deep(text) == json_too_deep(text) == (depth > MAX_JSON_DEPTH)


def test_a_document_the_parser_refuses_gets_the_same_message_whatever_the_quick_verdict():
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    # a backslash outside any string: the quick verdict reads these two the other way round
    looks_deep_but_is_not = '\\"' + deep + '"'
    assert _quickly_judged_too_deep(looks_deep_but_is_not)
    with pytest.raises(InvalidDocument, match=r"^x: not valid JSON"):
        parse_json(looks_deep_but_is_not, "x")
    deep_but_looks_shallow = '\\"]]"' + deep + '"'
    assert not _quickly_judged_too_deep(deep_but_looks_shallow)
    with pytest.raises(InvalidDocument, match=f"^x: JSON nested more than {MAX_JSON_DEPTH}"):
        parse_json(deep_but_looks_shallow, "x")


def test_nesting_that_alternates_objects_and_arrays_counts_every_level():
    levels = MAX_JSON_DEPTH // 2 + 1  # two levels each
    mixed = '[{"a": ' * levels + "0" + "}]" * levels
    with pytest.raises(InvalidDocument, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        parse_json(mixed, "x")
    assert parse_json('[{"a": ' * (levels - 1) + "0" + "}]" * (levels - 1), "x")
