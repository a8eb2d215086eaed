"""Fuzzing the whole command line with Hypothesis: every command that measures nothing is
driven with flags read from its own parser, values from a pool of valid and hostile ones
(NaN, 1e23, 5,000 digits, control characters, folders where files belong, binary and deeply
nested files), in a folder of its own. Whatever the command line:
- the exit status is 0, 1 or 2, and nothing but SystemExit leaves `main`;
- no traceback is printed;
- it ends within a time limit;
- on exit status 2 (a usage error) no file in the folder was created or changed.

Bounded and derandomised: the whole file takes well under a minute. `run`, `ab`, `env` and
`preflight` measure the machine (seconds per call) and are left to their own tests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_bench.cli import build_parser, main
from torch_bench.results.document import save_run
from torch_bench.results.schema import measured, new_run
from torch_bench.store.folder import store_in_folder

FUZZED = ("export", "import", "compare", "comment", "store", "site", "data")
# Flags that run a command of the user's or wait on the network by design.
LEFT_OUT = {"--rerun-command", "--help", "-h", "--version"}
TIME_LIMIT_S = 60

VALUES = [
    # files of the fixture folder
    "r.json", "base.json", "bad.json", "deep.json", "digits.json", "binary.dat",
    "latin1.yaml", "list.yaml", "report.md", "data", "pr.txt", "empty",
    # hostile or odd values
    # (never a system file: an output value reaches the writer as it is)
    "", " ", "-", ".", "..", "/", "nan", "inf", "-inf", "-1", "0",
    "1", "7", "1e23", "9" * 5000, "0.5", "a\x1bb", "a\nb", "x" * 300, "../../etc/passwd",
    "javascript:alert(1)", "http://127.0.0.1:9/", "octo/bench", "main", "2026-01",
    "2026-13", "yesterday", "latency", "ms", "MB", "cpu", "oss", "aipep", "csv", "out",
    "out/x.json", "r.json/x", "@team", "<img src=x>",
]
value = st.sampled_from(VALUES)


def _options(parser: argparse.ArgumentParser) -> tuple[list[argparse.Action], dict]:
    """The optional actions of `parser` and its sub-commands (e.g. `data prune`)."""
    options, subcommands = [], {}
    for action in parser._actions:  # argparse keeps no public list of them
        if isinstance(action, argparse._SubParsersAction):
            subcommands.update(action.choices)
        elif action.option_strings and not set(action.option_strings) & LEFT_OUT:
            options.append(action)
    return options, subcommands


def _command_parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    _, top = _options(build_parser())
    found = {}
    for name in FUZZED:
        _, nested = _options(top[name])
        if nested:
            found.update({(name, sub): parser for sub, parser in nested.items()})
        else:
            found[(name,)] = top[name]
    return found


PARSERS = _command_parsers()


@st.composite
def command_lines(draw) -> list[str]:
    words = draw(st.sampled_from(sorted(PARSERS)))
    parser = PARSERS[words]
    options, _ = _options(parser)
    positionals = [a for a in parser._actions if not a.option_strings
                   and not isinstance(a, argparse._SubParsersAction)]
    argv = list(words)
    argv += draw(st.lists(value, min_size=0, max_size=len(positionals) + 1))
    for action in draw(st.lists(st.sampled_from(options), max_size=4, unique_by=id)):
        argv.append(draw(st.sampled_from(action.option_strings)))
        count = action.nargs if isinstance(action.nargs, int) else (
            0 if action.nargs == 0 else 1)
        argv += draw(st.lists(value, min_size=count, max_size=count))
    return argv


def _a_run(name: str, value: float, day: int):
    return new_run([measured("s", name, "latency", [value, value * 1.01, value * 0.99])],
                   created_at=f"2026-01-{day:02d}T00:00:00Z",
                   git={"branch": "main", "sha": f"{day:040x}"})


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("template")
    save_run(_a_run("b", 1.0, 2), folder / "r.json")
    save_run(_a_run("b", 1.1, 1), folder / "base.json")
    (folder / "bad.json").write_text('{"schema": {"name": "torch-bench-run"}, "results": 3}')
    (folder / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (folder / "digits.json").write_text("9" * 5000)
    (folder / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (folder / "latin1.yaml").write_bytes("suites: [caf\xe9]\n".encode("latin-1"))
    (folder / "list.yaml").write_text("- a\n- b\n")
    (folder / "report.md").write_text("### report\n@team <!-- x --> [a](javascript:x)\n")
    (folder / "pr.txt").write_text("7\n")
    (folder / "empty").mkdir()
    store_in_folder([_a_run("b", 1.0 + i / 10, i + 1) for i in range(3)], folder / "data")
    return folder


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


@contextlib.contextmanager
def _in_folder(folder: Path):
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _call(argv: list[str]) -> tuple[int, str]:
    """`main(argv)` within the time limit: (exit status, everything printed)."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except _Hang:
        pytest.fail(f"no end within {TIME_LIMIT_S} s: {argv!r}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue() + out.getvalue()


@pytest.fixture
def quiet_environment(monkeypatch):
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY",
                 "GITHUB_OUTPUT", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # refused at once


@settings(max_examples=int(os.environ.get("TORCH_BENCH_FUZZ_EXAMPLES", "120")), deadline=None,
          derandomize=not os.environ.get("TORCH_BENCH_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
@given(argv=command_lines())
def test_any_command_line_ends_cleanly(argv, template, tmp_path, quiet_environment):
    folder = tmp_path / "case"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(template, folder)
    before = _snapshot(folder)
    with _in_folder(folder):
        code, printed = _call(argv)
    assert code in (0, 1, 2), (argv, code, printed[-2000:])
    assert "Traceback" not in printed, (argv, printed[-2000:])
    if code == 2:
        assert _snapshot(folder) == before, (argv, printed[-500:])


def test_the_fuzzer_reaches_every_command():
    assert {words[0] for words in PARSERS} == set(FUZZED)
    assert ("data", "prune") in PARSERS and len(PARSERS) >= 10
    assert json.dumps(VALUES)  # the pool itself is plain data


# Hostile documents: a valid run document with one thing wrong in it, written as text so
# that what json.dumps cannot say (a key given twice, 5,000 digits) can be said too. Every
# command that reads documents must refuse each one: exit 2, one line, nothing written.
CONTROL = st.sampled_from(["\x00", "\x07", "\x1b", "\x1b[31m", "\n", "\r", "\x7f", "\x85",
                           "\u202e", "\u2066", "\u2028"])
NAME_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def hostile_names(draw) -> str:
    left, right = draw(NAME_TEXT), draw(NAME_TEXT)
    return draw(st.sampled_from([left + draw(CONTROL) + right, "", " " * draw(
        st.integers(1, 4)), "n" * draw(st.integers(501, 3000))]))


HOSTILE_NUMBERS = st.one_of(
    st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),  # negative time
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000]))
# units the metric `latency` (ms) cannot be in
WRONG_UNITS = st.sampled_from(["MB", "ratio", "samples/s", "tokens/s", "count", "1"])


def _document_text(result: dict) -> str:
    doc = new_run([measured("s", "b", "latency", [1.0, 1.01, 0.99])],
                  created_at="2026-01-03T00:00:00Z",
                  git={"branch": "main", "sha": "3" * 40}).to_dict()
    doc["results"][0].update(result)
    return json.dumps(doc)


@st.composite
def hostile_documents(draw) -> tuple[str, str]:
    """(what is wrong, the document's text)."""
    kind = draw(st.sampled_from(["duplicate key", "deep", "name", "number", "unit"]))
    if kind == "duplicate key":
        key = draw(st.sampled_from(["name", "unit", "suite", "metric"]))
        text = _document_text({})
        first = text.index(f'"{key}": ')
        return kind, text[:first] + f'"{key}": "x", ' + text[first:]
    if kind == "deep":
        depth = draw(st.integers(1_100, 20_000))
        return kind, _document_text({}).replace('"extra": {}', '"extra": {"x": ' + "[" * depth
                                                + "]" * depth + "}")
    if kind == "name":
        field = draw(st.sampled_from(["name", "suite", "group", "metric"]))
        return kind, _document_text({field: draw(hostile_names())})
    if kind == "number":
        number = draw(HOSTILE_NUMBERS)
        text = _document_text({"samples": [1.0, 1.0, 1.0]})
        where = text.index("[1.0, 1.0, 1.0]")
        shown = number if isinstance(number, str) else repr(number)
        return kind, text[:where] + f"[1.0, {shown}, 1.0]" + text[where + len("[1.0, 1.0, 1.0]"):]
    return kind, _document_text({"unit": draw(WRONG_UNITS)})


READERS = (
    ["export", "h.json", "--oss", "out.json"],
    ["compare", "base.json", "h.json", "--markdown", "out.md", "--no-github"],
    ["store", "h.json", "--to-folder", "out"],
)


def _refused_without_writing(folder: Path, argv: list[str]) -> str:
    before = _snapshot(folder)
    with _in_folder(folder):
        code, printed = _call(argv)
    assert code == 2, (argv, code, printed[-800:])
    assert "Traceback" not in printed, (argv, printed[-2000:])
    assert printed.strip().count("\n") == 0, (argv, printed[-800:])  # one line
    assert _snapshot(folder) == before, argv
    return printed


@settings(max_examples=int(os.environ.get("TORCH_BENCH_FUZZ_EXAMPLES", "120")) // 2,
          deadline=None, derandomize=not os.environ.get("TORCH_BENCH_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hostile=hostile_documents(), reader=st.sampled_from(READERS))
def test_every_reader_refuses_a_hostile_document(hostile, reader, template, tmp_path,
                                                  quiet_environment):
    kind, text = hostile
    folder = tmp_path / "case"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(template, folder)
    (folder / "h.json").write_text(text, encoding="utf-8")
    printed = _refused_without_writing(folder, reader)
    assert "h.json" in printed, (kind, printed)


@settings(max_examples=int(os.environ.get("TORCH_BENCH_FUZZ_EXAMPLES", "120")) // 3,
          deadline=None, derandomize=not os.environ.get("TORCH_BENCH_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hostile=hostile_documents())
def test_a_hostile_document_in_a_data_folder_is_skipped_not_shown(hostile, tmp_path):
    """A data folder is history: a bad file in it is skipped with a warning naming it, and
    nothing of it reaches the listing."""
    kind, text = hostile
    runs = tmp_path / "data" / "runs" / "2026" / "01"
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "h.json").write_text(text, encoding="utf-8")
    with _in_folder(tmp_path):
        code, printed = _call(["data", "list", "--data", "data", "--benchmarks"])
    assert code in (0, 1, 2) and "Traceback" not in printed, printed[-2000:]
    assert "\x1b" not in printed and "\u202e" not in printed
    assert "skipped" in printed and "h.json" in printed, (kind, printed[-800:])


# The same faults in another tool's output, through `import`.
@st.composite
def hostile_oss(draw) -> tuple[str, str]:
    kind = draw(st.sampled_from(["duplicate key", "deep", "name", "number", "unit"]))
    if kind == "duplicate key":
        return kind, '{"lstm": {"cudnn": 1.5, "cudnn": 2.5}}'
    if kind == "deep":
        depth = draw(st.integers(1_100, 20_000))
        return kind, '{"lstm": {"x": ' + "[" * depth + "]" * depth + "}}"
    if kind == "name":
        return kind, json.dumps({"lstm": {draw(hostile_names()): 1.5}})
    if kind == "number":
        number = draw(HOSTILE_NUMBERS)
        return kind, '{"lstm": {"cudnn": ' + (number if isinstance(number, str)
                                              else repr(number)) + "}}"
    return kind, '{"lstm": {"cudnn": 1.5}}'  # with a memory metric and a time unit


@settings(max_examples=int(os.environ.get("TORCH_BENCH_FUZZ_EXAMPLES", "120")) // 3,
          deadline=None, derandomize=not os.environ.get("TORCH_BENCH_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile=hostile_oss())
def test_import_refuses_hostile_values(hostile, tmp_path, quiet_environment):
    kind, text = hostile
    (tmp_path / "oss.json").write_text(text, encoding="utf-8")
    metric = ["--metric", "peak_memory"] if kind == "unit" else []
    printed = _refused_without_writing(tmp_path, ["import", "oss.json", "--format", "oss",
                                                  "--unit", "ms", *metric, "--out", "r.json"])
    assert "oss.json" in printed, (kind, printed)


# Hostile configuration files, through `run --dry-run` (which reads and checks the file,
# plans the cases and measures nothing).
HOSTILE_CONFIGS = st.one_of(
    st.sampled_from([
        "suites: [rnns]\nsuites: [cnns]\n",  # a key given twice
        "suites: [rnns]\ntiming: {warmup: 1, warmup: 2}\n",
        "suites: [rnns]\ndevice: 0\n",
        "suites: [rnns]\ndevice: ''\n",
        "suites: [rnns]\nthreads: 100000000000000000000000\n",
        "suites: [rnns]\ntiming: {max_time_s: .nan}\n",
        "suites: [rnns]\ntiming: {warmup: 100000000000000000000000}\n",
        "suites: [rnns]\ntiming: {min_repeats: -3}\n",
        "suites: [rnns]\npreflight: {cpu_busy_limit: .inf}\n",
        "suites: [rnns]\nisolation: {timeout_s: '30'}\n",
    ]),
    st.integers(65, 3000).map(lambda depth: "suites: [rnns]\noptions: " + "[" * depth
                              + "]" * depth + "\n"),
)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=HOSTILE_CONFIGS)
def test_run_refuses_a_hostile_configuration_before_any_work(text, tmp_path,
                                                              quiet_environment):
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    printed = _refused_without_writing(tmp_path, ["run", "--config", "c.yaml", "--dry-run",
                                                  "--no-preflight"])
    assert "c.yaml" in printed or "--device" in printed, printed
