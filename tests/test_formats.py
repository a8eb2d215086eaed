import json

import pytest

from torch_bench.errors import UserError
from torch_bench.formats import exporter, importer
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
    again = exporter(fmt)(new_run(importer(fmt)(text)))
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
        import_oss(text, source="f.json")


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
    assert lines[1].startswith("bert,2,8,2.0000,latency,ms,")
    assert lines[2].startswith("gpt2,64,512,N/A,latency,ms,")
