import pytest

from torch_bench.config import build_run_config, load_yaml_config
from torch_bench.errors import UserError


def test_yaml_and_flags_merge_with_flags_winning(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text("suites: [rnns]\ntiming: {warmup: 7}\n"
                    "options:\n  rnns: {seq_length: 30, variants: [cudnn, py]}\n")
    config = build_run_config(yaml_data=load_yaml_config(str(path)), yaml_source=str(path),
                              cli_options={"seq_length": "12"})
    assert config.options["rnns"]["seq_length"] == 12
    assert config.options["rnns"]["variants"] == ("cudnn", "py")
    assert config.options["rnns"]["hidden_size"] == 512
    assert config.policy.warmup == 7


@pytest.mark.parametrize("text, message", [
    ("suites: [rnns]\ntimeing: {}\n", "timeing: unknown key"),
    ("suites: [rnns]\noptions:\n  rnns: {seq_lenght: 3}\n", "options.rnns.seq_lenght: suite "
                                                             "'rnns' has no such option"),
    ("suites: [rnns]\noptions:\n  rnns: {seq_length: -3}\n", "options.rnns.seq_length: expected"),
    ("suites: [rnns]\noptions:\n  rnns: {variants: [cudnn, gru]}\n", "unknown variant"),
    ("suites: [rnns]\ntiming: {warmup: lots}\n", "timing.warmup: expected a whole number"),
    ("suites: [nope]\n", "unknown suite 'nope'"),
    ("suites: [rnns]\nprocesses: 0\n", "processes: expected a whole number"),
    ("suites: [rnns]\npreflight: {cpu_busy_limit: -1}\n",
     "preflight.cpu_busy_limit: expected a number from 0 to"),
    ("suites: [rnns]\ntiming: {loops: {a: 1}}\n", "timing.loops: unknown key"),
    ("suites: [rnns]\n  bad: [\n", "not valid YAML"),
])
def test_bad_configuration_names_the_key(tmp_path, text, message):
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        build_run_config(yaml_data=load_yaml_config(str(path)), yaml_source=str(path))


def test_bad_flags_are_named():
    with pytest.raises(UserError, match="--device"):
        build_run_config(suites=["rnns"], device="tpu")
    with pytest.raises(UserError, match="--filter"):
        build_run_config(suites=["rnns"], filter="(")
    with pytest.raises(UserError, match="no suite selected"):
        build_run_config()


def test_processes_preflight_limit_and_nloops_come_from_yaml_or_flags(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text("suites: [rnns]\nprocesses: 5\npreflight: {cpu_busy_limit: 100}\n"
                    "timing: {nloops: 4}\n")
    config = build_run_config(yaml_data=load_yaml_config(str(path)), yaml_source=str(path))
    assert config.processes == 5 and config.policy.nloops == 4
    assert config.preflight.cpu_busy_limit == 100
    assert config.describe()["processes"] == 5
    defaults = build_run_config(suites=["rnns"])
    assert defaults.processes == 3 and defaults.preflight.cpu_busy_limit == 10
    assert build_run_config(suites=["rnns"], processes=1).processes == 1
    with pytest.raises(UserError, match="--processes"):
        build_run_config(suites=["rnns"], processes=0)
