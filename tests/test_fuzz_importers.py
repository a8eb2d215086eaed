"""Fuzzing every importer and the run-document loader with Hypothesis: whatever the bytes,
the result is results (or a run) or a UserError, never another exception; through the CLI,
one line on stderr and exit status 2, never a traceback.

Examples are bounded (and derandomised) so the whole file takes seconds; inputs are built
from arbitrary bytes and from mutations of real, valid inputs, which reach much deeper into
each parser than random bytes do.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from torch_bench.errors import UserError
from torch_bench.fileio import decode_text
from torch_bench.formats import IMPORTERS, importer
from torch_bench.formats.github_action_benchmark import HISTORY_IMPORTERS
from torch_bench.formats.safety import guarded
from torch_bench.results.document import loads_run
from torch_bench.results.schema import measured, new_run

FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

# One small valid input per format: the seeds that mutations start from.
VALID = {
    "oss": '{"lstm": {"cudnn": 1.23, "jit": 1.1}, "lstm-backward": {"cudnn": 2.5}}',
    "aipep": 'Caffe2Observer {"type": "NET", "metric": "lstm-cudnn", "unit": "ms", '
             '"value": "1.23"}\n',
    "pytest-benchmark": json.dumps({"benchmarks": [{
        "group": None, "name": "test_x", "fullname": "t.py::test_x", "params": None,
        "stats": {"min": 0.1, "max": 0.2, "mean": 0.15, "stddev": 0.01, "rounds": 3,
                  "median": 0.15, "iqr": 0.02, "q1": 0.14, "q3": 0.16, "ops": 6.6,
                  "data": [0.1, 0.15, 0.2]}}]}),
    "asv": json.dumps({"version": 2, "commit_hash": "abc", "env_name": "e", "params": {},
                       "result_columns": ["result", "params", "version", "started_at",
                                          "duration", "stats_ci_99_a", "stats_ci_99_b",
                                          "stats_q_25", "stats_q_75", "stats_number",
                                          "stats_repeat", "samples", "profile"],
                       "results": {"bench.time_x": [[0.5], [], "v", 1, 2, [0.4], [0.6],
                                                    [0.45], [0.55], [1], [3], [[0.5, 0.5]],
                                                    None]}}),
    "github-action-benchmark": "window.BENCHMARK_DATA = " + json.dumps({
        "lastUpdate": 1, "repoUrl": "https://github.com/o/r", "entries": {"Bench": [{
            "commit": {"id": "abc", "message": "m", "timestamp": "2025-01-01T00:00:00Z",
                       "url": "https://github.com/o/r/commit/abc"},
            "date": 1735689600000, "tool": "customSmallerIsBetter",
            "benches": [{"name": "x", "value": 1.5, "unit": "ms"}]}]}}),
}
FORMATS = sorted([*IMPORTERS, *HISTORY_IMPORTERS])
RUN_TEXT = json.dumps(new_run([measured("s", "b", "latency", [1.0, 1.1])],
                              created_at="2026-01-01T00:00:00Z").to_dict())


def read_with(fmt: str):
    if fmt in HISTORY_IMPORTERS:
        return guarded(HISTORY_IMPORTERS[fmt], fmt)
    return importer(fmt)


@st.composite
def mutated(draw, text: str) -> bytes:
    """A valid input with a few bytes replaced, inserted or deleted, or cut short."""
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["replace", "insert", "delete", "cut"]))
        chunk = draw(st.sampled_from([b"", b"\xff", b"\x00", b"[", b"{", b"}", b"\"", b"-",
                                      b"1e999", b"NaN", b"Infinity", b"null", b"[]", b"{}",
                                      b"9" * 400, b"true", b"\"x\"", b",", b":"]))
        if action == "replace":
            data[position:position + len(chunk)] = chunk
        elif action == "insert":
            data[position:position] = chunk
        elif action == "delete":
            del data[position:position + draw(st.integers(1, 8))]
        else:
            del data[position:]
    return bytes(data)


def any_input(fmt_text: str):
    return st.one_of(st.binary(max_size=300), mutated(fmt_text),
                     st.recursive(st.none() | st.booleans() | st.floats() | st.integers()
                                  | st.text(max_size=8),
                                  lambda inner: st.lists(inner, max_size=4)
                                  | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                                  max_leaves=12).map(lambda v: json.dumps(v).encode()))


# formats whose files do not say their unit: the CLI needs --unit for them
UNIT_LESS = {"oss": "ms"}


def import_bytes(fmt: str, data: bytes):
    """What the CLI does with a file's bytes: decode, then import."""
    text = decode_text(data, "fuzz.txt")
    unit = {"unit": UNIT_LESS[fmt]} if fmt in UNIT_LESS else {}
    return read_with(fmt)(text, source="fuzz.txt", **unit)


@pytest.mark.parametrize("fmt", FORMATS)
def test_valid_seed_inputs_import(fmt):
    assert import_bytes(fmt, VALID[fmt].encode())


@pytest.mark.parametrize("fmt", FORMATS)
def test_any_bytes_give_results_or_a_user_error(fmt):
    @FUZZ
    @given(data=any_input(VALID[fmt]))
    @example(data=b"[" * 50_000)
    @example(data=b"1" + b"0" * 400)
    @example(data=("{\"a\": {\"b\": 1" + "0" * 400 + "}}").encode())
    def check(data):
        try:
            import_bytes(fmt, data)
        except UserError as exc:
            assert "\n" not in str(exc).strip()
    check()


@FUZZ
@given(data=st.one_of(st.binary(max_size=300), mutated(RUN_TEXT)))
@example(data=b"[" * 50_000)
@example(data=RUN_TEXT.replace('"samples": [1.0', '"samples": [1' + "0" * 400).encode())
@example(data=RUN_TEXT.replace('"median": 1.05', '"median": NaN').encode())
def test_the_run_document_loader_gives_a_run_or_a_user_error(data):
    try:
        loads_run(data, "fuzz.json")
    except UserError as exc:
        assert "\n" not in str(exc).strip()


@pytest.mark.slow
def test_a_sample_through_the_cli_is_one_line_and_exit_2(tmp_path):
    """A few hostile files through the real command line, one process each."""
    cases = [("import", "oss", b"\xff\xfe\x00binary"), ("import", "asv", b"[" * 50_000),
             ("store", None, b"{" * 50_000)]
    for number, (command, fmt, data) in enumerate(cases):
        source = tmp_path / f"in{number}"
        source.write_bytes(data)
        argv = ["import", str(source), "--format", fmt, "--no-env", "--out",
                str(tmp_path / "o")] if command == "import" else \
            ["store", str(source), "--to-folder", str(tmp_path / "d")]
        done = subprocess.run([sys.executable, "-m", "torch_bench", *argv],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, (command, fmt, done.stderr)
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
