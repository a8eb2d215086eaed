import json

from conftest import TINY_RNN
from torch_bench.results.document import load_run


def test_run_writes_a_valid_document_and_every_export(cli, tmp_path):
    done = cli("run", "--suite", "rnns", "--variants", "cudnn,py", *TINY_RNN, "--out", "r.json",
               "--oss", "oss.json", "--aipep", "aipep.txt", "--csv", "r.csv", check=True)
    run = load_run(tmp_path / "r.json")
    assert {(r.group, r.name) for r in run.results if r.metric.endswith("_time")} == {
        ("lstm", "cudnn"), ("lstm", "py"), ("lstm-backward", "cudnn"), ("lstm-backward", "py")}
    assert run.env["fingerprint"] and run.env["torch"]
    assert run.config["options"]["rnns"]["seq_length"] == 5
    assert run.env["threads"] == 1 and run.config["threads"] == 1
    assert all(r.extra["threads"] == 1 for r in run.results if r.metric.endswith("_time"))
    oss = json.loads((tmp_path / "oss.json").read_text())
    assert set(oss["lstm"]) == {"cudnn", "py"}
    assert (tmp_path / "aipep.txt").read_text().startswith("Caffe2Observer ")
    assert (tmp_path / "r.csv").read_text().startswith("model,batch_size,sequence_length,result")
    assert "lstm-backward/py" in done.stdout  # the results table


def test_export_and_import_round_trip_through_the_cli(cli, tmp_path):
    cli("run", "--suite", "rnns", "--variants", "aten", *TINY_RNN, "--out", "r.json", check=True)
    cli("export", "r.json", "--format", "aipep", "--out", "a.txt", check=True)
    cli("import", "a.txt", "--format", "aipep", "--out", "back.json", "--no-env", check=True)
    again = cli("export", "back.json", "--format", "aipep", check=True).stdout
    assert again == (tmp_path / "a.txt").read_text()


def test_dry_run_lists_cases(cli):
    done = cli("run", "--suite", "rnns", "--dry-run", "--filter", "/(jit|py)$", check=True)
    assert done.stdout.splitlines() == [
        "rnns/jit (seq_length=100, num_layers=1, input_size=512, hidden_size=512, mini_batch=64, "
        "dtype=float32)",
        "rnns/py (seq_length=100, num_layers=1, input_size=512, hidden_size=512, mini_batch=64, "
        "dtype=float32)",
    ]


def test_env_prints_the_fingerprint(cli):
    data = json.loads(cli("env", "--json", check=True).stdout)
    assert len(data["fingerprint"]) == 16 and data["python"]


def assert_usage_error(done, *fragments):
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    for fragment in fragments:
        assert fragment in line, line


def test_bad_input_is_one_line_and_status_2(cli, tmp_path):
    assert_usage_error(cli("run", "--suite", "nope"), "unknown suite 'nope'")
    assert_usage_error(cli("run", "--suite", "rnns", "--seq-length", "x"), "seq_length")
    assert_usage_error(cli("run", "--suite", "rnns", "--config", "missing.yaml"), "missing.yaml")
    assert_usage_error(cli("export", "missing.json", "--format", "oss"), "missing.json: no such")
    (tmp_path / "bad.json").write_text('{"schema": {"name": "torch-bench/run", "version": 1}}')
    assert_usage_error(cli("export", "bad.json", "--format", "oss"), "bad.json:")
    (tmp_path / "bad.txt").write_text("Caffe2Observer {oops\n")
    assert_usage_error(cli("import", "bad.txt", "--format", "aipep", "--out", "o.json"),
                       "bad.txt: line 1")
    assert_usage_error(cli("import", "bad.txt", "--format", "aipep", "--metric", "speed"),
                       "unknown metric 'speed'")
    assert not (tmp_path / "o.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "bad.txt"]


def test_help_describes_every_command(cli):
    for command in ("run", "export", "import", "env"):
        done = cli(command, "--help", check=True)
        assert "usage: torch-bench " + command in done.stdout
