import json

import pytest

from torch_bench.errors import InvalidDocument
from torch_bench.results.document import load_run, save_run
from torch_bench.results.migrate import MIGRATIONS, migrate
from torch_bench.results.schema import SCHEMA_VERSION, failed, measured, new_run
from torch_bench.results.validate import problems


def sample_run():
    return new_run(
        [
            measured("rnns", "cudnn", "forward_time", [1.0, 2.0, 4.0],
                     params={"seq_length": 5, "device": "cpu"}, group="lstm"),
            failed("rnns", "py", "forward_time", "oom", "out of memory", group="lstm"),
        ],
        env={"fingerprint": "abc"},
        git={"sha": "deadbeef", "message": "<b>hi</b>"},
    )


def test_save_and_load_round_trip(tmp_path):
    run = sample_run()
    path = save_run(run, tmp_path / "r.json")
    assert load_run(path) == run
    data = json.loads(path.read_text())
    assert data["schema"] == {"name": "torch-bench/run", "version": SCHEMA_VERSION}
    assert data["results"][0]["unit"] == "ms" and data["results"][0]["direction"] == "lower"
    assert data["results"][0]["summary"]["median"] == pytest.approx(2.0)


def write_doc(tmp_path, mutate):
    data = sample_run().to_dict()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["results"][0].update(unit="sec"), "results[0].unit"),
        (lambda d: d["results"][1].update(status="exploded"), "results[1].status"),
        (lambda d: d["results"][0].update(unit="MB"), "results[0].unit"),
        (lambda d: d["results"][0].update(direction="higher"), "results[0].direction"),
        (lambda d: d["results"][0]["summary"].update(n=7), "results[0].summary.n"),
        (lambda d: d["results"][0].update(summary=None), "results[0].summary"),
        (lambda d: d.pop("run_id"), "(document)"),
        (lambda d: d.update(created_at="yesterday"), "created_at"),
        (lambda d: d["results"][0].update(colour="red"), "results[0]"),
    ],
)
def test_validation_names_file_and_field(tmp_path, mutate, field):
    path = write_doc(tmp_path, mutate)
    with pytest.raises(InvalidDocument) as info:
        load_run(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {field}")


def test_not_json_is_reported_with_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"schema":\n  nope}')
    with pytest.raises(InvalidDocument, match=r"broken.json: not valid JSON \(line 2"):
        load_run(path)


def test_newer_version_asks_for_upgrade(tmp_path):
    path = write_doc(tmp_path, lambda d: d["schema"].update(version=SCHEMA_VERSION + 1))
    with pytest.raises(InvalidDocument, match="upgrade torch-bench"):
        load_run(path)


def test_migration_hook_runs_each_step(monkeypatch):
    old = sample_run().to_dict()
    old["schema"]["version"] = 0
    old["legacy"] = True

    def to_1(doc):
        doc.pop("legacy")
        return doc

    monkeypatch.setitem(MIGRATIONS, 1, to_1)
    migrated = migrate(old)
    assert migrated["schema"]["version"] == 1 and "legacy" not in migrated


def test_invalid_run_is_never_written(tmp_path):
    run = sample_run()
    bad = run.with_results([measured("rnns", "x", "forward_time", [1.0])][:0] + [
        run.results[0].__class__(**{**{f: getattr(run.results[0], f)
                                       for f in run.results[0].__dataclass_fields__},
                                    "unit": "MB"})])
    target = tmp_path / "out.json"
    with pytest.raises(InvalidDocument, match="refusing to write"):
        save_run(bad, target)
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_a_summarised_result_drops_the_per_sample_fields_of_extra_but_keeps_the_rest():
    from torch_bench.results.schema import measured

    result = measured("s", "b", "forward_time", [1.0, 1.2],
                      extra={"loops": 4, "clock": "cpu", "wall_samples": [1.1, 5.0],
                             "involuntary_switches": [0, 3], "interrupted_share": 0.5})
    summarised = result.without_samples()
    assert summarised.samples == () and summarised.summary == result.summary
    assert summarised.extra == {"loops": 4, "clock": "cpu", "interrupted_share": 0.5}


def problems_of_samples(samples_json: str, summary_min: str = "1.0") -> list[str]:
    data = sample_run().to_dict()
    data["results"][0]["samples"] = []
    data["results"][0]["summary"]["n"] = len(json.loads(samples_json))
    text = json.dumps(data).replace('"samples": []', f'"samples": {samples_json}', 1)
    text = text.replace('"min": 1.0', f'"min": {summary_min}', 1)
    return problems(json.loads(text))


@pytest.mark.parametrize("samples, found", [
    ("[1.0, 2, NaN, -1.0]", "results[0].samples[2]: nan is not a finite number"),
    ("[1.0, Infinity]", "results[0].samples[1]: inf is not a finite number"),
    ("[1.0, 1e999]", "results[0].samples[1]: inf is not a finite number"),
    ("[3, true]", "results[0].samples[1]: True is not a finite number"),
    ("[2.0, -0.5]", "results[0].samples[1]: -0.5 is negative, and a value in 'ms' cannot be"),
    (f"[1.0, {'9' * 400}]", "results[0].samples[1]: 99999"),
])
def test_every_kind_of_bad_sample_is_named_with_its_index(samples, found):
    lines = problems_of_samples(samples)
    assert len(lines) == 1 and lines[0].startswith(found)


def test_samples_whose_sum_overflows_are_each_finite_and_pass():
    assert problems_of_samples("[1e308, 1e308, 1.5e308, 0]") == []


def test_a_bad_summary_number_is_named_by_its_key():
    assert problems_of_samples("[1.0]", summary_min="-2.0") == [
        "results[0].summary.min: -2.0 is negative, and a value in 'ms' cannot be"]
    assert problems_of_samples("[1.0]", summary_min="NaN") == [
        "results[0].summary.min: nan is not a finite number"]
