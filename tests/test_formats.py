import csv
import io
import json

import pytest

from torch_bench.errors import UserError
from torch_bench.formats import ExportOptions, exporter, importer
from torch_bench.formats.aipep import export_aipep, import_aipep
from torch_bench.formats.csv_hf import export_csv
from torch_bench.formats.oss import export_oss, import_oss
from torch_bench.results.schema import failed, measured, new_run


def fastrnns_like_run():
    return new_run([
        measured("rnns", "cudnn", "forward_time", [1.5, 2.5], group="lstm"),
        measured("rnns", "jit", "forward_time", [3.25], group="lstm"),
        measured("rnns", "cudnn", "backward_time", [0.1, 0.2, 0.3], group="lstm-backward"),
        failed("rnns", "py", "forward_time", "crash", "boom", group="lstm"),
    ])


def test_oss_is_what_fastrnns_prints():
    # fastrnns: print(json.dumps({group: {name: avg}}))
    expected = json.dumps({"lstm": {"cudnn": 2.0, "jit": 3.25},
                           "lstm-backward": {"cudnn": 0.20000000000000004}}) + "\n"
    assert export_oss(fastrnns_like_run()) == expected


def test_aipep_is_one_observer_line_per_sample():
    lines = export_aipep(fastrnns_like_run()).splitlines()
    assert lines[0] == ('Caffe2Observer {"type": "NET", "metric": "lstm-cudnn", "unit": "ms", '
                        '"value": "1.5"}')
    assert len(lines) == 6
    assert lines[-1].endswith('"metric": "lstm-backward-cudnn", "unit": "ms", "value": "0.3"}')


@pytest.mark.parametrize("fmt", ["oss", "aipep"])
def test_text_round_trip_is_exact(fmt):
    text = exporter(fmt)(fastrnns_like_run())
    again = exporter(fmt)(new_run(importer(fmt)(text, unit="ms")))
    assert again == text


def test_aipep_round_trip_keeps_groups_names_and_samples():
    results = import_aipep(export_aipep(fastrnns_like_run()))
    assert [(r.group, r.name, r.samples) for r in results] == [
        ("lstm", "cudnn", (1.5, 2.5)), ("lstm", "jit", (3.25,)),
        ("lstm-backward", "cudnn", (0.1, 0.2, 0.3)),
    ]


def test_unit_override_turns_fastrnns_cpu_seconds_into_ms():
    text = 'noise\nCaffe2Observer {"type": "NET", "metric": "lstm-py", "unit": "ms", ' \
           '"value": "0.0125"}\n'
    (result,) = import_aipep(text, unit="s")
    assert result.samples == pytest.approx((12.5,)) and result.unit == "ms"
    (oss,) = import_oss('{"lstm": {"py": 0.5}}', unit="s")
    assert oss.summary.mean == pytest.approx(500.0)


def test_memory_units_import_as_memory():
    (result,) = import_aipep('Caffe2Observer {"type": "NET", "metric": "m-x", "unit": "MB", '
                             '"value": "12"}')
    assert result.metric == "peak_memory" and result.unit == "MB"


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "expected an object of groups"),
    ('{"lstm": {"py": "fast"}}', "lstm.py: expected a number"),
    ('{"lstm": 3}', "lstm: expected an object"),
    ("{", "not valid JSON"),
])
def test_bad_oss_input_is_named(text, message):
    with pytest.raises(UserError, match=message):
        import_oss(text, source="f.json", unit="ms")


def test_bad_aipep_line_is_named_by_number():
    with pytest.raises(UserError, match="f.txt: line 2: not a valid AI-PEP record"):
        import_aipep('hello\nCaffe2Observer {"metric": 1}\n', source="f.txt")
    with pytest.raises(UserError, match="no 'Caffe2Observer' lines"):
        import_aipep("nothing here\n", source="f.txt")


def test_grid_results_get_distinct_flat_names():
    run = new_run([
        measured("transformers", "bert", "latency", [1.0], params={"batch_size": 1}),
        measured("transformers", "bert", "latency", [2.0], params={"batch_size": 2}),
    ])
    assert json.loads(export_oss(run)) == {
        "transformers-latency": {"bert[batch_size=1]": 1.0, "bert[batch_size=2]": 2.0}}


def test_csv_has_the_hugging_face_columns_first():
    run = new_run([
        measured("transformers", "bert", "latency", [1.0, 2.0, 9.0],
                 params={"model": "bert", "batch_size": 2, "sequence_length": 8}),
        failed("transformers", "gpt2", "latency", "oom", "no memory",
               params={"model": "gpt2", "batch_size": 64, "sequence_length": 512}),
    ])
    lines = export_csv(run).splitlines()
    assert lines[0].startswith("model,batch_size,sequence_length,result,")
    assert lines[1].startswith("bert,2,8,2.0000,")
    assert lines[2].startswith("gpt2,64,512,N/A,")


def test_oss_carries_only_time_groups_unless_all_metrics_asked():
    run = new_run([*fastrnns_like_run().results,
                   measured("rnns", "cudnn", "peak_rss", [812.0])])
    assert set(json.loads(export_oss(run))) == {"lstm", "lstm-backward"}
    everything = json.loads(export_oss(run, ExportOptions(all_metrics=True)))
    assert everything["rnns-peak_rss"] == {"cudnn": 812.0}
    assert "peak_rss" not in export_aipep(run)
    assert "rnns-peak_rss-cudnn" in export_aipep(run, ExportOptions(all_metrics=True))


def test_aipep_lines_come_group_by_group_as_fastrnns_prints_them():
    run = new_run([
        measured("rnns", "cudnn", "forward_time", [1.0], group="lstm"),
        measured("rnns", "cudnn", "backward_time", [2.0], group="lstm-backward"),
        measured("rnns", "jit", "forward_time", [3.0], group="lstm"),
        measured("rnns", "jit", "backward_time", [4.0], group="lstm-backward"),
    ])
    metrics = [json.loads(line.split(" ", 1)[1])["metric"]
               for line in export_aipep(run).splitlines()]
    assert metrics == ["lstm-cudnn", "lstm-jit", "lstm-backward-cudnn", "lstm-backward-jit"]
    assert list(json.loads(export_oss(run))) == ["lstm", "lstm-backward"]


def test_export_unit_writes_seconds_and_says_so():
    run = new_run([measured("rnns", "py", "forward_time", [1500.0], group="lstm")])
    assert json.loads(export_oss(run, ExportOptions(unit="s"))) == {
        "lstm": {"py": pytest.approx(1.5)}}
    (line,) = export_aipep(run, ExportOptions(unit="s")).splitlines()
    record = json.loads(line.split(" ", 1)[1])
    assert record["unit"] == "s" and float(record["value"]) == pytest.approx(1.5)
    with pytest.raises(UserError, match="--unit"):
        ExportOptions(unit="MB")


def test_oss_import_requires_the_unit():
    with pytest.raises(UserError, match="pass --unit"):
        import_oss('{"lstm": {"py": 0.5}}', source="f.json")


@pytest.mark.parametrize("label, group, name", [
    ("lstm-my-runner", "lstm", "my-runner"),
    ("lstm-backward-my-runner", "lstm-backward", "my-runner"),
    ("vl_lstm-backward-vl_py", "vl_lstm-backward", "vl_py"),
    ("transformers-latency-tiny-bert", "transformers-latency", "tiny-bert"),
    ("mine-backward-a-b", "mine-backward", "a-b"),
    ("plain", None, "plain"),
])
def test_aipep_names_split_right_when_runner_names_hold_dashes(label, group, name):
    line = f'Caffe2Observer {{"type": "NET", "metric": "{label}", "unit": "ms", "value": "1"}}'
    (result,) = import_aipep(line)
    assert (result.group, result.name) == (group, name)


def test_imported_fastrnns_history_uses_the_native_rnns_names():
    text = ('Caffe2Observer {"type": "NET", "metric": "lstm-cudnn", "unit": "ms", '
            '"value": "0.002"}\n'
            'Caffe2Observer {"type": "NET", "metric": "lstm-backward-cudnn", "unit": "ms", '
            '"value": "0.004"}\n')
    sizes = {"seq_length": 100, "device": "cpu"}
    forward, backward = import_aipep(text, unit="s", suite="rnns", params=sizes)
    assert (forward.suite, forward.name, forward.metric) == ("rnns", "cudnn", "forward_time")
    assert backward.metric == "backward_time" and backward.params == sizes
    assert forward.samples == (pytest.approx(2.0),)
    (oss,) = import_oss('{"lstm-backward": {"jit": 1.0}}', unit="ms")
    assert oss.metric == "backward_time"


def test_csv_rows_are_told_apart_by_mode_dtype_and_runtime():
    common = {"model": "tiny-bert", "batch_size": 1, "sequence_length": 8}
    run = new_run([
        measured("transformers", "tiny-bert", "latency", [6.2],
                 params={**common, "mode": "inference", "dtype": "fp32"}),
        measured("transformers", "tiny-bert", "latency", [6.2],
                 params={**common, "mode": "train", "dtype": "fp32"}),
        measured("compile", "mlp", "latency", [1.0],
                 params={"mode": "inference", "backend": "inductor", "runtime": "eager"}),
        measured("compile", "mlp", "latency", [1.0],
                 params={"mode": "inference", "backend": "inductor", "runtime": "compiled"}),
        measured("compile", "mlp", "speedup", [1.0],
                 params={"mode": "inference", "backend": "inductor"}),
    ])
    rows = list(csv.DictReader(io.StringIO(export_csv(run))))
    identities = [tuple(v for k, v in row.items() if k != "result") for row in rows]
    assert len(set(identities)) == len(rows)
    assert [row["mode"] for row in rows[:2]] == ["inference", "train"]
    assert [row["runtime"] for row in rows[2:4]] == ["eager", "compiled"]
    assert rows[2]["params"] == "backend=inductor"


def test_imported_fastrnns_lines_land_on_the_native_series():
    from torch_bench.cli.import_ import parse_params
    from torch_bench.config import build_run_config
    from torch_bench.results.schema import benchmark_id
    from torch_bench.runner import plan_cases

    config = build_run_config(suites=["rnns"], cli_options={"variants": "cudnn"})
    (native,) = [p.case for p in plan_cases(config)]
    pairs = [f"{k}={v}" for k, v in native.params.items()]
    line = 'Caffe2Observer {"type": "NET", "metric": "lstm-cudnn", "unit": "ms", "value": "1"}'
    (imported,) = import_aipep(line, suite="rnns", params=parse_params(pairs))
    assert imported.benchmark_id == benchmark_id("rnns", "cudnn", native.params, "forward_time")
