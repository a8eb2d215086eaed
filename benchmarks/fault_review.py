"""A fault catalogue run against the real CLI, by category: what was tried, what ended well,
what did not.

Each fault runs `python -m torch_bench ...` in a folder of its own and is judged by what a
user would see: the exit status, no traceback, one line naming the input for a usage error,
nothing written when the command refused, no token in any output, no process left running,
the GitHub API (a local server) receiving only what it should.

    python benchmarks/fault_review.py [--category NAME] [--only TEXT] [--skip-isolation]

The isolation category runs real cases in real processes (about a minute on a busy machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_github import FakeGitHub  # noqa: E402
from torch_bench.results.document import save_run  # noqa: E402
from torch_bench.results.schema import measured, new_run  # noqa: E402
from torch_bench.store.folder import store_in_folder  # noqa: E402

SOURCE: str | None = None  # another checkout's src/ to run instead of this one
TOKEN = "ghp_" + "Q7" * 18  # the shape of a GitHub token, not a real one


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    folder: Path
    written: set[str] = field(default_factory=set)
    github: FakeGitHub | None = None


@dataclass(frozen=True)
class Fault:
    category: str
    name: str
    argv: tuple[str, ...]
    judge: Callable[[Outcome], str | None]  # None: good; else what was wrong
    env: tuple[tuple[str, str], ...] = ()
    setup: Callable[[Path], None] | None = None
    github: Callable[[FakeGitHub], None] | None = None  # a local GitHub, prepared so
    timeout: float = 300


def plain_github(github: FakeGitHub) -> None:
    pass


def echo_token(github: FakeGitHub) -> None:
    github.write_failures = [(422, {}, {"message": f"bad credentials {TOKEN}"})]


def redirect_writes(github: FakeGitHub) -> None:
    github.write_failures = [(302, {"Location": f"{github.url}/repos/octo/bench/issues/7/"
                                                f"comments"})]


def usage_error(outcome: Outcome) -> str | None:
    """Exit 2, one line, no traceback, nothing written."""
    lines = outcome.err.strip().splitlines()
    if "Traceback" in outcome.err:
        return "traceback"
    if outcome.code != 2:
        return f"exit {outcome.code}, expected 2"
    if len([line for line in lines if not line.startswith("usage:")]) != 1:
        return f"{len(lines)} lines of error"
    if outcome.written:
        return f"wrote {sorted(outcome.written)[:3]} although it refused"
    return None


def clean_end(outcome: Outcome) -> str | None:
    if "Traceback" in outcome.err:
        return "traceback"
    if outcome.code not in (0, 1, 2):
        return f"exit {outcome.code}"
    return None


def no_token(outcome: Outcome) -> str | None:
    texts = [outcome.out, outcome.err]
    texts += [p.read_text(errors="replace") for p in outcome.folder.rglob("*") if p.is_file()]
    if outcome.github:
        texts += [c["body"] for cs in outcome.github.comments.values() for c in cs]
    for text in texts:
        if TOKEN in text or TOKEN.replace("_", "&#95;") in text:
            return "the token reached an output"
    return clean_end(outcome)


def a_run(name: str = "b", value: float = 1.0, day: int = 2):
    return new_run([measured("s", name, "latency", [value, value * 1.01, value * 0.99])],
                   created_at=f"2026-01-{day:02d}T00:00:00Z",
                   git={"branch": "main", "sha": f"{day:040x}"})


def fixture_folder(folder: Path) -> None:
    save_run(a_run(), folder / "r.json")
    save_run(a_run(value=1.1, day=1), folder / "base.json")
    (folder / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (folder / "binary.dat").write_bytes(bytes(range(256)))
    (folder / "latin1.yaml").write_bytes("suites: [caf\xe9]\n".encode("latin-1"))
    (folder / "list.yaml").write_text("- a\n")
    (folder / "report.md").write_text("report\n")
    (folder / "sub").mkdir()
    store_in_folder([a_run(day=d) for d in (1, 2, 3)], folder / "data")


def bad_input_faults() -> list[Fault]:
    long = "n" * 300
    cases = [
        ("export to a folder", ("export", "r.json", "--format", "csv", "--out", "sub")),
        ("export --oss and --aipep to one file", ("export", "r.json", "--oss", "x",
                                                  "--aipep", "./x")),
        ("compare --markdown a folder", ("compare", "base.json", "r.json", "--markdown", "sub")),
        ("compare --json under a file", ("compare", "base.json", "r.json", "--json",
                                         "r.json/x")),
        ("a 300-character output name", ("export", "r.json", "--csv", f"{long}.csv")),
        ("/dev/zero as an input", ("export", "/dev/zero", "--format", "csv")),
        ("a folder as an input", ("export", "sub", "--format", "csv")),
        ("binary input", ("export", "binary.dat", "--format", "csv")),
        ("JSON 5,000 levels deep", ("export", "deep.json", "--format", "csv")),
        ("--cpu-busy-limit nan", ("preflight", "--cpu-busy-limit", "nan")),
        ("--cpu-busy-limit -5", ("preflight", "--cpu-busy-limit", "-5")),
        ("--retry-for 1e300", ("store", "r.json", "--retry-for", "1e300", "--to-folder", "o")),
        ("--attempts 1e23", ("store", "r.json", "--attempts", "1e23", "--to-folder", "o")),
        ("--change-point-window 5,000 digits", ("site", "--data", "data", "--out", "site",
                                                "--change-point-window", "9" * 5000)),
        ("a remote that is a file", ("store", "r.json", "--remote", "r.json")),
        ("a remote that does not exist", ("store", "r.json", "--remote", "/not/a/repo")),
        ("data compact of a 5,000-digit folder", ("data", "compact", "--data", "9" * 5000)),
        ("comment --pr 1e3", ("comment", "report.md", "--pr", "1e3", "--repo", "o/r")),
    ]
    return [Fault("bad inputs", name, argv, usage_error) for name, argv in cases]


def _more_inputs(folder: Path) -> None:
    (folder / "object.txt").write_text(
        'Caffe2Observer {"type": "NET", "metric": {"a": 1}, "unit": "ms", "value": "1.0"}\n')
    (folder / "good.txt").write_text(
        'Caffe2Observer {"type": "NET", "metric": "g-b", "unit": "ms", "value": "1.0"}\n')
    (folder / "huge.yaml").write_text("timing:\n  warmup: " + "9" * 5000 + "\n")


def more_bad_input_faults() -> list[Fault]:
    """The third round's bad inputs: each must be one line naming it, exit 2."""
    cases = [
        ("import of an AI-PEP metric that is an object",
         ("import", "object.txt", "--format", "aipep", "--out", "o.json")),
        ("import --suite ''", ("import", "good.txt", "--format", "aipep", "--suite", "",
                               "--out", "o.json")),
        ("import --branch ''", ("import", "good.txt", "--format", "aipep", "--branch", "",
                                "--out", "o.json")),
        ("run --config with a 5,000-digit number", ("run", "--config", "huge.yaml")),
        ("run --suite ../../etc/passwd", ("run", "--suite", "../../etc/passwd")),
        ("site --repository 'not a repo'", ("site", "--data", "data", "--out", "site",
                                            "--repository", "not a repo")),
        ("site --cache FILE", ("site", "--data", "data", "--out", "site", "--cache",
                               "report.md")),
        ("comment /dev/zero", ("comment", "/dev/zero", "--pr", "1", "--repo", "o/r")),
        ("data export --parquet ''", ("data", "export", "--data", "data", "--parquet", "")),
        ("compare --confirm-run-args with an open quote",
         ("compare", "base.json", "r.json", "--confirm-run-args", "--suite 'rnns")),
        ("explain --threads 0", ("explain", "--base", ".", "--head", ".", "--threads", "0",
                                 "--", "--suite", "rnns")),
        ("explain of no case", ("explain", "--base", ".", "--head", ".", "--", "--suite",
                                "rnns", "--filter", "zzz-none")),
        ("bisect --issue 1 --repository ../x", ("bisect", "--good", "a", "--bad", "b",
                                                "--issue", "1", "--repository", "../x")),
        ("compare --false-alarm-rate 1e-12 on 3 runs",
         ("compare", "auto", "r.json", "--history", "data", "--false-alarm-rate", "1e-12")),
        ("compare --per-pr-level 1e-30 on 3 runs",
         ("compare", "auto", "r.json", "--history", "data", "--per-pr-level", "1e-30")),
    ]
    return [Fault("bad inputs (3rd round)", name, argv, usage_error, setup=_more_inputs)
            for name, argv in cases]


def _foreign_archive(folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "data" / "archive" / "2026").mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2, 3]}), folder / "data/archive/2026/01-foreign.parquet")


def _huge_archive(folder: Path) -> None:
    """1,200,000 valid rows, the same one over and over: about 600 KB on disk."""
    import pyarrow as pa

    from torch_bench.store import columnar

    one = columnar.runs_table([a_run(day=4)], {"month": "2026/01", "samples": "kept"})
    (folder / "data" / "archive" / "2026").mkdir(parents=True)
    table = one.take(pa.array([0] * 1_200_000)).replace_schema_metadata(one.schema.metadata)
    columnar.write_table(table, folder / "data/archive/2026/01-huge.parquet")


def archive_faults() -> list[Fault]:
    """Every history reader beside a Parquet file that is not ours, or claims 1.2 M rows."""
    readers = [
        ("data verify", ("data", "verify", "--data", "data")),
        ("data list", ("data", "list", "--data", "data")),
        ("data export", ("data", "export", "--data", "data", "--parquet", "all.parquet")),
        ("data compact", ("data", "compact", "--data", "data", "--dry-run")),
        ("site", ("site", "--data", "data", "--out", "site")),
        ("compare --history", ("compare", "auto", "r.json", "--history", "data")),
        ("store --to-folder", ("store", "r.json", "--to-folder", "data")),
    ]

    def skipped(file: str, reads: bool) -> Callable[[Outcome], str | None]:
        def judge(outcome: Outcome) -> str | None:
            problem = clean_end(outcome)
            if problem:
                return problem
            if reads and file not in outcome.out + outcome.err:
                return f"{file} not named"
            return None
        return judge

    faults = []
    for what, setup, file in (("a Parquet file without our columns", _foreign_archive,
                               "01-foreign.parquet"),
                              ("an archive of 1.2 M rows in 600 KB", _huge_archive,
                               "01-huge.parquet")):
        for reader, argv in readers:
            faults.append(Fault("archives", f"{reader} beside {what}", argv,
                                skipped(file, reader != "store --to-folder"), setup=setup,
                                timeout=120))
    return faults


def disk_faults() -> list[Fault]:
    if not shutil.which("unshare"):
        return []

    def small_disk(read_only: bool) -> tuple[str, ...]:
        mount = 'mount -t tmpfs -o size=64k tmpfs small'
        if read_only:
            mount += " && mount -o remount,ro small"
        return ("unshare", "-rm", "sh", "-c", f'{mount} && exec "$@"', "sh")

    def full(outcome: Outcome) -> str | None:
        if "Traceback" in outcome.err or outcome.code not in (1, 2):
            return f"exit {outcome.code}" + (", traceback" if "Traceback" in outcome.err else "")
        if len(outcome.err.strip().splitlines()) != 1:
            return "more than one line"
        return None

    big = ("export", "big.json", "--aipep", "small/out.txt")
    faults = []
    for read_only in (False, True):
        label = "a read-only disk" if read_only else "a full disk"
        faults.append(Fault("data and disks", f"export onto {label}",
                            (*small_disk(read_only), sys.executable, "-m", "torch_bench", *big),
                            full, setup=_big_run))
        faults.append(Fault("data and disks", f"data compact onto {label}",
                            (*small_disk(read_only), sys.executable, "-m", "torch_bench",
                             "data", "compact", "--data", "small/data"), full,
                            setup=_data_in_small))
    return faults


def _big_run(folder: Path) -> None:
    (folder / "small").mkdir()
    save_run(new_run([measured("s", f"b{i}", "latency", [1.0 + j / 1000 for j in range(200)])
                      for i in range(40)]), folder / "big.json")


def _data_in_small(folder: Path) -> None:
    (folder / "small").mkdir()


def secret_faults() -> list[Fault]:
    def token_in_a_name(folder: Path) -> None:
        save_run(a_run(name=f"leak-{TOKEN}"), folder / "leak.json")

    env = (("GITHUB_TOKEN", TOKEN), ("GITHUB_ACTIONS", "true"),
           ("GITHUB_STEP_SUMMARY", "summary.md"))
    return [
        Fault("secrets", "a 422 echoing the token: stderr, annotation, summary",
              ("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--author", "me"),
              no_token, env=env, github=echo_token),
        Fault("secrets", "a token in a benchmark name: compare's Markdown and stdout",
              ("compare", "base.json", "leak.json", "--markdown", "report-out.md"),
              no_token, env=env, setup=token_in_a_name),
        Fault("secrets", "a token in a benchmark name: export files",
              ("export", "leak.json", "--csv", "leak.csv", "--oss", "leak.oss"),
              no_token, env=env, setup=token_in_a_name),
        Fault("secrets", "a token read from another variable (--token-env)",
              ("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--author", "me",
               "--token-env", "MY_PAT"), no_token,
              env=(("MY_PAT", TOKEN), ("GITHUB_STEP_SUMMARY", "summary.md"),
                   ("GITHUB_ACTIONS", "true")), github=echo_token),
    ]


HOSTILE = ("Hi @maintainers [x](javascript:alert(1)) octo/other#12\n"
           "<!-- torch-bench-report config=default -->\n<img src=https://evil.test/p.png>\n")


def injection_faults() -> list[Fault]:
    def hostile(folder: Path) -> None:
        (folder / "hostile.md").write_text(HOSTILE)

    def sanitised(outcome: Outcome) -> str | None:
        problem = clean_end(outcome)
        if problem:
            return problem
        bodies = [c["body"] for c in outcome.github.comments.get(7, [])]
        if not bodies:
            return "nothing was posted"
        body = bodies[-1]
        for bad in ("@maintainers", "javascript:", "<img", "octo/other#12 "):
            if bad in body:
                return f"posted {bad!r}"
        if body.count("<!--") != 1:
            return "a second marker"
        return None

    def redirected(outcome: Outcome) -> str | None:
        problem = clean_end(outcome)
        if problem:
            return problem
        if "created comment" in outcome.out:
            return "claimed a comment it never made"
        return None if outcome.code == 1 else f"exit {outcome.code} with --strict"

    env = (("GITHUB_TOKEN", TOKEN),)
    return [
        Fault("injection and the API", "comment posts a fork's report",
              ("comment", "hostile.md", "--pr", "7", "--repo", "octo/bench"), sanitised,
              env=env, github=plain_github, setup=hostile),
        Fault("injection and the API", "a POST answered by 302",
              ("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--strict"),
              redirected, env=env, github=redirect_writes),
        Fault("injection and the API", "GITHUB_API_URL='not a url'",
              ("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--strict"),
              lambda o: clean_end(o) or (None if o.code == 1 else f"exit {o.code}"),
              env=(("GITHUB_TOKEN", TOKEN), ("GITHUB_API_URL", "not a url"))),
    ]


def _document(old: str, new: str) -> Callable[[Path], None]:
    """A setup writing h.json: a valid run document's text with `old` replaced by `new` (as
    text, so that keys can be given twice and numbers can be what JSON cannot say)."""
    def write(folder: Path) -> None:
        text = json.dumps(a_run().to_dict())
        assert old in text
        (folder / "h.json").write_text(text.replace(old, new, 1), encoding="utf-8")
    return write


def document_faults() -> list[Fault]:
    """Run documents with one hostile field, through every command that reads them."""
    name, samples = '"name": "b"', "[1.0, 1.01, 0.99]"
    documents = [
        ("a key given twice", name, '"name": "b", "name": "c"'),
        ("ESC in a name", name, '"name": "b\\u001b[31m"'),
        ("a bidi override in a name", name, '"name": "\\u202eb"'),
        ("a newline in a name", name, '"name": "b\\nc"'),
        ("an empty name", name, '"name": ""'),
        ("a negative time", samples, "[1.0, -1.0, 0.99]"),
        ("NaN", samples, "[1.0, NaN, 0.99]"),
        ("5,000 digits", samples, "[1.0, " + "9" * 5000 + ", 0.99]"),
        ("time in MB", '"unit": "ms"', '"unit": "MB"'),
        ("JSON 1,500 levels deep", '"extra": {}', '"extra": {"x": ' + "[" * 1500
         + "]" * 1500 + "}"),
    ]
    return [Fault("documents", f"{what}: {command[0]}", command, usage_error,
                  setup=_document(old, new))
            for what, old, new in documents
            for command in (("export", "h.json", "--oss", "out.json"),
                            ("compare", "base.json", "h.json", "--markdown", "out.md"),
                            ("store", "h.json", "--to-folder", "out"))]


def import_faults() -> list[Fault]:
    def file(name: str, text: str) -> Callable[[Path], None]:
        return lambda folder: (folder / name).write_text(text, encoding="utf-8")

    aipep = 'Caffe2Observer {"type": "NET", "metric": "g-n", "unit": "ms", "value": "%s"}\n'
    data_js = ('window.BENCHMARK_DATA = {"lastUpdate": 1, "repoUrl": "x", "entries": {"s": '
               '[{"commit": {"id": "%s", "timestamp": "2026-01-02T00:00:00Z"}, "date": 1, '
               '"tool": "customSmallerIsBetter", "benches": [{"name": "b", "value": -3, '
               '"unit": "ms"}]}]}}' % ("a" * 40))
    cases = [
        ("OSS: a negative time", "oss.json", '{"lstm": {"cudnn": -1.5}}', ("--unit", "ms")),
        ("OSS: a key given twice", "oss.json", '{"lstm": {"cudnn": 1, "cudnn": 2}}',
         ("--unit", "ms")),
        ("OSS: ESC in a name", "oss.json", '{"lstm": {"cu\u001bdnn": 1}}', ("--unit", "ms")),
        ("OSS: 150 levels deep", "oss.json", '{"lstm": {"x": ' + "[" * 150 + "]" * 150 + "}}",
         ("--unit", "ms")),
        ("AI-PEP: a negative time", "a.txt", aipep % "-2.5", ()),
        ("AI-PEP: peak_memory in ms", "a.txt", aipep % "1.5", ("--metric", "peak_memory",
                                                              "--unit", "ms")),
        ("github-action-benchmark: a negative time", "data.js", data_js, ()),
    ]
    formats = {"oss.json": "oss", "a.txt": "aipep", "data.js": "github-action-benchmark"}
    return [Fault("imports", name, ("import", path, "--format", formats[path], *flags,
                                    "--out", "out"), usage_error, setup=file(path, text))
            for name, path, text, flags in cases]


def configuration_faults() -> list[Fault]:
    """Configuration files and run's flags, read by `run --dry-run` (which measures nothing),
    and the names site and data are given."""
    def config(text: str) -> Callable[[Path], None]:
        return lambda folder: (folder / "c.yaml").write_text(text, encoding="utf-8")

    dry = ("run", "--dry-run", "--no-preflight")
    files = [
        ("YAML: a key given twice", "suites: [rnns]\nsuites: [cnns]\n"),
        ("YAML: device: 0", "suites: [rnns]\ndevice: 0\n"),
        ("YAML: device: ''", "suites: [rnns]\ndevice: ''\n"),
        ("YAML: warm-up of 10^23", "suites: [rnns]\ntiming: {warmup: 1" + "0" * 23 + "}\n"),
        ("YAML: NaN time budget", "suites: [rnns]\ntiming: {max_time_s: .nan}\n"),
        ("YAML: 10^23 threads", "suites: [rnns]\nthreads: 1" + "0" * 23 + "\n"),
        ("YAML: 5,000 levels deep", "suites: [rnns]\noptions: " + "[" * 5000 + "]" * 5000),
    ]
    faults = [Fault("configuration and flags", name, (*dry, "--config", "c.yaml"), usage_error,
                    setup=config(text)) for name, text in files]
    flags = [
        ("--device ''", ("--suite", "rnns", "--device", "")),
        ("--threads 1e23", ("--suite", "rnns", "--threads", "1e23")),
        ("--threads 10^23", ("--suite", "rnns", "--threads", "1" + "0" * 23)),
        ("--warmup 10^23", ("--suite", "rnns", "--warmup", "1" + "0" * 23)),
        ("--max-time nan", ("--suite", "rnns", "--max-time", "nan")),
        ("--cpu-busy-limit nan", ("--suite", "rnns", "--cpu-busy-limit", "nan")),
        ("--timeout inf", ("--suite", "rnns", "--timeout", "inf")),
    ]
    faults += [Fault("configuration and flags", f"run {name}", (*dry, *argv), usage_error)
               for name, argv in flags]
    faults.append(Fault("configuration and flags", "data rename of a missing benchmark",
                        ("data", "rename", "--data", "data", "--benchmark", "nope", "x"),
                        lambda o: clean_end(o) or (None if o.code != 0 and len(
                            o.err.strip().splitlines()) == 1 and "nope" in o.err
                            else f"exit {o.code}: {o.err.strip()[-80:]}")))

    def names_branches(outcome: Outcome) -> str | None:
        problem = clean_end(outcome)
        if problem:
            return problem
        said = [line for line in outcome.err.splitlines() if "typo" in line]
        if outcome.code == 0 and not (said and "'main'" in said[0]):
            return "built without a baseline, silently"
        return None

    faults.append(Fault("configuration and flags", "site --baseline-branch typo",
                        ("site", "--data", "data", "--out", "site", "--baseline-branch",
                         "typo"), names_branches))
    return faults


INTERRUPT = """
import os, signal, subprocess, sys, time
import psutil
run = subprocess.Popen([sys.executable, "-m", "torch_bench", *sys.argv[1:]],
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
def second_case_running():  # the hanging case has started the child it escapes with
    for child in psutil.Process(run.pid).children(recursive=True):
        try:
            if "os.setsid()" in " ".join(child.cmdline()):
                return True
        except psutil.Error:  # ended meanwhile, or a zombie
            pass
    return False
deadline = time.monotonic() + 600
while run.poll() is None and time.monotonic() < deadline and not second_case_running():
    time.sleep(0.2)
run.send_signal(signal.SIGINT)
sys.exit(run.wait())
"""


def interrupt_faults() -> list[Fault]:
    def config(folder: Path) -> None:
        (folder / "hostile.yaml").write_text(
            "suites: [support.hostile_suite]\n"
            "options:\n  support.hostile_suite: {cases: 'ok,escape~hang'}\n")

    def kept(outcome: Outcome) -> str | None:
        if "Traceback" in outcome.err:
            return "traceback"
        document = outcome.folder / "partial.json"
        if not document.exists():
            return f"exit {outcome.code}; the finished case was thrown away"
        data = json.loads(document.read_text())
        names = {r["name"] for r in data["results"]}
        if names != {"ok"} or not data["config"].get("interrupted"):
            return f"kept {sorted(names)}, interrupted={data['config'].get('interrupted')}"
        left = _leftovers(outcome.folder / "tmp")
        return f"{len(left)} processes outlived the run" if left else None

    return [Fault("isolation", "SIGINT while the second case runs",
                  (sys.executable, "-c", INTERRUPT, "run", "--config", "hostile.yaml",
                   "--no-preflight", "--processes", "1", "--out", "partial.json"), kept,
                  setup=config, timeout=900, env=(("PYTHONPATH", str(ROOT / "tests")),))]


ISOLATION = {  # case of tests/support/hostile_suite.py -> the status it must get
    "linger": "ok", "escape": "ok", "thread": "ok", "sideways": "error", "slash": "error",
    "empty": "error", "huge": "error", "sigkill": "crash", "flood": "crash",
}


def isolation_faults() -> list[Fault]:
    """One run per hostile case, next to a good one: its status, the good one's, what
    outlived the run."""
    faults = []
    for case, status in ISOLATION.items():
        def config(folder: Path, case=case) -> None:
            (folder / "hostile.yaml").write_text(
                "suites: [support.hostile_suite]\n"
                f"options:\n  support.hostile_suite: {{cases: '{case},ok'}}\n")

        def judge(outcome: Outcome, case=case, status=status) -> str | None:
            problem = clean_end(outcome)
            if problem:
                return problem
            document = outcome.folder / "r.json"
            if not document.exists():
                return "the run document was not written"
            results = {r["name"]: r for r in json.loads(document.read_text())["results"]
                       if r["metric"] == "latency"}
            got = {name: results.get(name, {}).get("status") for name in (case, "ok")}
            if got != {case: status, "ok": "ok"}:
                return f"statuses {got}"
            if len(results[case].get("error") or "") > 10_000:
                return "a message of megabytes kept whole"
            left = _leftovers(outcome.folder / "tmp")
            return f"{len(left)} processes outlived the run" if left else None

        faults.append(Fault("isolation", f"a case that does {case!r}",
                            ("run", "--config", "hostile.yaml", "--no-preflight", "--out",
                             "r.json"), judge, setup=config, timeout=900,
                            env=(("PYTHONPATH", str(ROOT / "tests")),)))
    return faults


def _leftovers(scratch: Path) -> list[int]:
    """Processes of the hostile cases still running whose case folder was in `scratch` (the
    run's TMPDIR): never another run's on this machine."""
    import psutil

    from support.hostile_suite import ESCAPE, LINGER

    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if not (ESCAPE in cmdline or LINGER in cmdline) or \
                process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        with contextlib.suppress(psutil.Error):
            if process.environ().get("TORCH_BENCH_CASE_FOLDER", "").startswith(str(scratch)):
                found.append(process.pid)
    return found


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def run_fault(fault: Fault) -> str | None:
    folder = Path(tempfile.mkdtemp(prefix="torch-bench-fault-"))
    github = None
    try:
        fixture_folder(folder)
        if fault.setup:
            fault.setup(folder)
        env = {k: v for k, v in os.environ.items()
               if k not in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
        (folder / "tmp").mkdir()
        env.update({"GITHUB_API_URL": "http://127.0.0.1:9", "TMPDIR": str(folder / "tmp"),
                    **dict(fault.env)})
        if SOURCE:
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (SOURCE, env.get("PYTHONPATH", "")) if p)
        if fault.github:
            github = FakeGitHub().__enter__()
            env["GITHUB_API_URL"] = github.url
            fault.github(github)
        before = _snapshot(folder)
        argv = list(fault.argv)
        if argv[0] not in ("unshare", sys.executable):
            argv = [sys.executable, "-m", "torch_bench", *argv]
        try:
            done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=fault.timeout)
        except subprocess.TimeoutExpired:
            return f"no end within {fault.timeout:g} s"
        after = _snapshot(folder)
        written = {p for p in after if before.get(p) != after[p]}
        return fault.judge(Outcome(done.returncode, done.stdout, done.stderr, folder, written,
                                   github))
    finally:
        if github:
            github.__exit__(None, None, None)
        for pid in _leftovers(folder / "tmp"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", help="run only this category")
    parser.add_argument("--skip-isolation", action="store_true")
    parser.add_argument("--only", metavar="TEXT", help="run only faults whose name has TEXT")
    parser.add_argument("--src", metavar="DIR",
                        help="run the CLI from this source folder (e.g. an older checkout's "
                             "src/) to compare before and after")
    args = parser.parse_args()
    if args.src:
        global SOURCE
        SOURCE = str(Path(args.src).resolve())
    faults = [*bad_input_faults(), *more_bad_input_faults(), *archive_faults(),
              *disk_faults(), *secret_faults(), *injection_faults(), *document_faults(),
              *import_faults(), *configuration_faults()]
    if not args.skip_isolation:
        faults += isolation_faults() + interrupt_faults()
    if args.category:
        faults = [f for f in faults if f.category == args.category]
    if args.only:
        faults = [f for f in faults if args.only in f.name]
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    bad: list[str] = []
    started = time.monotonic()
    for fault in faults:
        problem = run_fault(fault)
        tally[fault.category][0] += 1
        if problem:
            tally[fault.category][1] += 1
            bad.append(f"  {fault.category}: {fault.name}: {problem}")
    print(f"{'category':26} {'tried':>6} {'good':>6} {'bad':>6}")
    for category, (tried, failed) in tally.items():
        print(f"{category:26} {tried:6} {tried - failed:6} {failed:6}")
    total = sum(t for t, _ in tally.values())
    failed = sum(f for _, f in tally.values())
    print(f"{'all':26} {total:6} {total - failed:6} {failed:6}   "
          f"({time.monotonic() - started:.0f} s)")
    if bad:
        print("bad:")
        print("\n".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
