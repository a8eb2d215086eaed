"""`torch-bench store` against real git: local bare remotes, hooks, an HTTP server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import load_history
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.retry import RetryPolicy, Verdict, classify_push

FAKE_TOKEN = "ghs_FAKEt0kenDoNotPrint1234567890abcdef"


def git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def bare_remote(tmp_path: Path, name: str = "remote.git") -> Path:
    path = tmp_path / name
    git("init", "-q", "--bare", str(path))
    git("config", "uploadpack.allowFilter", "true", cwd=path)
    return path


def branch_files(remote: Path, branch: str = "gh-pages") -> list[str]:
    return git("ls-tree", "-r", "--name-only", branch, cwd=remote).split()


def checkout(remote: Path, where: Path, branch: str = "gh-pages") -> Path:
    git("clone", "-q", "--branch", branch, str(remote), str(where))
    return where


def a_run(name: str = "a", value: float = 1.0, created_at: str | None = None):
    return new_run([measured("s", name, "latency", [value, value * 1.01])],
                   created_at=created_at, git={"branch": "main", "sha": "abc"})


def save(tmp_path: Path, run, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(run.to_dict()))
    return path


def test_store_creates_the_branch_adds_three_files_per_run_and_nothing_twice(tmp_path, cli):
    remote = bare_remote(tmp_path)
    first = save(tmp_path, a_run(created_at="2026-01-05T10:00:00Z"), "first.json")
    second = save(tmp_path, a_run("b", created_at="2026-02-07T10:00:00Z"), "second.json")
    done = cli("store", str(first), "--remote", str(remote), check=True)
    assert "stored 1 run" in done.stderr and "attempt 1" in done.stderr
    again = cli("store", str(first), str(second), "--remote", str(remote), check=True)
    assert "stored 1 run" in again.stderr and "1 already there" in again.stderr
    cli("store", str(first), str(second), "--remote", str(remote), check=True)
    files = branch_files(remote)
    assert len(files) == 6 and all(f.startswith("benchmarks/") for f in files)
    assert sum(f.startswith("benchmarks/runs/2026/01/") for f in files) == 1
    assert git("rev-list", "--count", "gh-pages", cwd=remote).strip() == "2"  # third added nothing
    assert git("rev-list", "--max-parents=0", "--count", "gh-pages", cwd=remote).strip() == "1"
    history = load_history(checkout(remote, tmp_path / "co") / "benchmarks")
    assert [r.results[0].name for r in history.runs] == ["a", "b"] and not history.problems


def test_other_branch_and_folder_and_plain_folder_target(tmp_path, cli):
    remote = bare_remote(tmp_path)
    git("symbolic-ref", "HEAD", "refs/heads/main", cwd=remote)
    source = save(tmp_path, a_run(), "r.json")
    cli("store", str(source), "--remote", str(remote), "--branch", "bench/data", "--folder",
        "dev/bench", check=True)
    assert all(f.startswith("dev/bench/") for f in branch_files(remote, "bench/data"))
    cli("store", str(source), "--to-folder", "site-data", check=True)
    assert len(load_history(tmp_path / "site-data").runs) == 1
    for name in ("no..dots", "-dash-first"):  # git itself would take the second for an option
        bad = cli("store", str(source), "--remote", str(remote), f"--branch={name}")
        assert bad.returncode == 2 and "not a valid branch name" in bad.stderr


def test_an_invalid_document_is_refused_before_anything_is_pushed(tmp_path, cli):
    remote = bare_remote(tmp_path)
    data = a_run().to_dict()
    data["results"][0]["unit"] = "s"
    source = tmp_path / "bad.json"
    source.write_text(json.dumps(data))
    done = cli("store", str(source), "--remote", str(remote))
    assert done.returncode == 2 and "bad.json" in done.stderr and "results[0].unit" in done.stderr
    assert git("for-each-ref", cwd=remote) == ""


def test_a_remote_refusing_for_another_reason_fails_at_once(tmp_path, cli):
    remote = bare_remote(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho tried >> {tmp_path / 'pushes'}\n"
                    "echo 'gh-pages is protected: pushes need review' >&2\nexit 1\n")
    hook.chmod(0o755)
    done = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote", str(remote))
    assert done.returncode == 2
    assert "refused the push" in done.stderr and "pre-receive hook declined" in done.stderr
    assert "gh-pages is protected" in done.stderr and "not retried" in done.stderr
    assert (tmp_path / "pushes").read_text().count("tried") == 1  # no retry


class _Refusing(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        type(self).seen.append(dict(self.headers))
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


def test_the_token_is_sent_as_a_header_and_never_printed(tmp_path, cli):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/org/repo.git"
        env = {"GITHUB_TOKEN": FAKE_TOKEN, "GIT_TRACE": "1", "GIT_CURL_VERBOSE": "1"}
        done = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote", url, env=env)
    finally:
        server.shutdown()
    assert done.returncode == 2 and "403" in done.stderr and "could not fetch" in done.stderr
    assert FAKE_TOKEN not in done.stdout + done.stderr
    assert _Refusing.seen and len(_Refusing.seen) <= 3  # failed at once, no retry storm
    assert any("Basic" in h.get("Authorization", "") for h in _Refusing.seen)

    local = bare_remote(tmp_path)  # a local remote with the token set: nothing leaks either
    ok = cli("store", str(tmp_path / "r.json"), "--remote", str(local), env=env, check=True)
    assert FAKE_TOKEN not in ok.stdout + ok.stderr
    assert FAKE_TOKEN not in git("log", "--all", "-p", cwd=local)


WRITER = """
import sys
from torch_bench.results.schema import measured, new_run
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.retry import RetryPolicy
remote, writer = sys.argv[1], int(sys.argv[2])
policy = RetryPolicy(budget=300, base_delay=0.05, max_delay=1.0)
for number in range(5):
    run = new_run([measured("s", f"w{writer}", "latency", [float(number + 1)],
                            params={"n": number})])
    store_runs([run], Target(remote), policy=policy)
"""
WRITERS = 8


@pytest.mark.slow
def test_eight_concurrent_writers_lose_nothing(tmp_path):
    # Eight writers at once race for the branch as more would; each more writer only adds
    # lost races for all the others to retry.
    remote = bare_remote(tmp_path)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(remote), str(w)],
                                stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    failures = [p.stderr.read() for p in writers if p.wait(timeout=600) != 0]
    assert not failures, failures[0]
    files = branch_files(remote)
    stored = WRITERS * 5
    assert len(files) == len(set(files)) == stored * 3
    history = load_history(checkout(remote, tmp_path / "co") / "data")
    assert not history.problems and len(history.runs) == stored
    assert len({r.run_id for r in history.runs}) == stored
    assert sorted((r.results[0].name, r.results[0].params["n"]) for r in history.runs) == \
        sorted((f"w{w}", n) for w in range(WRITERS) for n in range(5))
    git("fsck", "--strict", cwd=remote)


def test_a_writer_killed_mid_store_leaves_the_branch_valid(tmp_path):
    remote = bare_remote(tmp_path)
    store_runs([a_run("before", created_at="2026-01-01T00:00:00Z")], Target(str(remote)))
    tip = git("rev-parse", "gh-pages", cwd=remote)
    marker = tmp_path / "receiving"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 60\n")
    hook.chmod(0o755)
    code = (f"from torch_bench.store.remote import Target, store_runs\n"
            f"from torch_bench.results.schema import measured, new_run\n"
            f"store_runs([new_run([measured('s', 'x', 'latency', [1.0])])], "
            f"Target({str(remote)!r}))\n")
    writer = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the writer never reached the push"
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait()
    hook.unlink()
    assert git("rev-parse", "gh-pages", cwd=remote) == tip
    git("fsck", cwd=remote)
    store_runs([a_run("after", created_at="2026-01-02T00:00:00Z")], Target(str(remote)))
    history = load_history(checkout(remote, tmp_path / "co") / "data")
    assert [r.results[0].name for r in history.runs] == ["before", "after"]


def test_push_outcomes_are_read_from_porcelain_output():
    ref = "refs/heads/gh-pages"
    line = "!\tabc:refs/heads/gh-pages\t[rejected] (fetch first)"
    assert classify_push(1, line, "", ref).verdict is Verdict.RACE
    line = "!\tabc:refs/heads/gh-pages\t[remote rejected] (protected branch hook declined)"
    outcome = classify_push(1, line, "remote: Changes must be made through a pull request.", ref)
    assert outcome.verdict is Verdict.REFUSED and "pull request" in outcome.reason
    auth = classify_push(128, "", "fatal: Authentication failed for 'https://x/y.git/'", ref)
    assert auth.verdict is Verdict.REFUSED and "Authentication failed" in auth.reason
    ok = classify_push(0, "*\tabc:refs/heads/gh-pages\t[new branch]", "", ref)
    assert ok.verdict is Verdict.PUSHED


def test_backoff_grows_and_is_bounded():
    import random
    policy, rng = RetryPolicy(budget=60, base_delay=0.2, max_delay=5.0), random.Random(1)
    delays = [policy.delay(n, rng) for n in range(1, 10)]
    assert 0.1 <= delays[0] <= 0.2 and all(2.5 <= d <= 5.0 for d in delays[6:])


def test_retries_are_budgeted_by_time_not_by_count():
    import random
    policy, rng = RetryPolicy(budget=30, base_delay=0.2, max_delay=5.0), random.Random(1)
    assert policy.next_delay(50, elapsed=10.0, rng=rng) is not None  # many failures, time left
    assert policy.next_delay(2, elapsed=30.0, rng=rng) is None  # budget spent
    assert policy.next_delay(9, elapsed=29.0, rng=rng) <= 1.0  # no wait runs past the budget
    capped = RetryPolicy(budget=30, attempts=3)
    assert capped.next_delay(3, elapsed=0.0, rng=rng) is None


def test_an_imported_history_folder_is_stored_in_one_commit(tmp_path, cli):
    fixture = Path(__file__).parent / "fixtures" / "github-action-benchmark-data.js"
    cli("import", str(fixture), "--format", "github-action-benchmark", "--out", "old", check=True)
    remote = bare_remote(tmp_path)
    done = cli("store", "old", "--remote", str(remote), check=True)
    assert "stored 5 runs" in done.stderr
    assert git("rev-list", "--count", "gh-pages", cwd=remote).strip() == "1"
    history = load_history(checkout(remote, tmp_path / "co") / "benchmarks")
    assert len(history.runs) == 5 and history.runs[0].created_at.startswith("2025-01-01")


def test_a_writer_that_keeps_losing_the_race_gives_up_with_status_1(tmp_path, cli):
    """Each time our push arrives, the remote's hook lets a competitor push first."""
    remote = bare_remote(tmp_path)
    store_runs([a_run("seed")], Target(str(remote)))
    competitor = tmp_path / "competitor"
    git("clone", "-q", "--branch", "gh-pages", str(remote), str(competitor))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "[ -n \"$COMPETING\" ] && exit 0\n"
        f"echo raced >> {tmp_path / 'races'}\n"
        "unset GIT_DIR GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY "
        "GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_PUSH_OPTION_COUNT\n"
        f"cd {competitor}\n"
        "git -c user.name=c -c user.email=c@x commit -q --allow-empty -m competitor\n"
        "COMPETING=1 git push -q origin HEAD:gh-pages >/dev/null 2>&1\n"
        "exit 0\n")
    hook.chmod(0o755)
    done = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote", str(remote),
               "--attempts", "3")
    assert done.returncode == 1, done.stderr
    assert "gave up after 3 attempts" in done.stderr and "nothing was stored" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("push lost a race") == 2
    assert (tmp_path / "races").read_text().count("raced") == 3
    git("fsck", cwd=remote)


def _git_http_backend(repositories: Path, seen: list):
    """A real smart-HTTP git server (`git http-backend` as CGI) that records the headers it
    receives."""
    class Backend(BaseHTTPRequestHandler):
        def _serve(self):
            seen.append(dict(self.headers))
            path, _, query = self.path.partition("?")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            env = {"GIT_PROJECT_ROOT": str(repositories), "GIT_HTTP_EXPORT_ALL": "1",
                   "PATH_INFO": path, "QUERY_STRING": query,
                   "REQUEST_METHOD": self.command, "PATH": os.environ["PATH"],
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                   "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": "x",
                   "GIT_HTTP_RECEIVE_PACK": "1"}
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            out = subprocess.run(["git", "http-backend"], input=body, env=env,
                                 capture_output=True).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode().split("\r\n"):
                name, _, value = line.partition(": ")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve  # noqa: N815

        def log_message(self, *args):
            pass
    return Backend


def _redirecting_to(port: int):
    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{port}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass
    return Redirecting


def test_the_token_never_follows_a_redirect_to_another_origin(tmp_path, cli):
    """The remote answers 302 to a working git server on another port: that server must
    never receive the token (the store fails instead)."""
    repositories = tmp_path / "served"
    bare_remote(repositories / "org", "repo.git")
    seen: list[dict] = []
    other = ThreadingHTTPServer(("127.0.0.1", 0), _git_http_backend(repositories, seen))
    remote = ThreadingHTTPServer(("127.0.0.1", 0), _redirecting_to(other.server_port))
    for server in (other, remote):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{remote.server_port}/org/repo.git"
        done = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote", url,
                   env={"GITHUB_TOKEN": FAKE_TOKEN})
        direct = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote",
                     f"http://127.0.0.1:{other.server_port}/org/repo.git")
    finally:
        remote.shutdown()
        other.shutdown()
    assert direct.returncode == 0, direct.stderr  # the server on the other port does work
    assert done.returncode == 2 and FAKE_TOKEN not in done.stdout + done.stderr
    assert not any("Authorization" in headers for headers in seen)


def test_the_header_is_scoped_to_the_exact_remote_url():
    from torch_bench.store.access import credentials_for
    from torch_bench.store.git import auth_env

    env = auth_env(credentials_for("https://user@example.com:8443/org/repo.git", FAKE_TOKEN))
    keys = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
            for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert keys["http.https://example.com:8443/org/repo.git.followRedirects"] == "false"
    assert keys["http.https://example.com:8443/org/repo.git.extraHeader"].startswith(
        "Authorization: Basic ")


def test_a_store_killed_mid_push_leaves_a_scratch_folder_the_next_store_sweeps(tmp_path):
    remote = bare_remote(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    marker = tmp_path / "receiving"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 60\n")
    hook.chmod(0o755)
    code = ("import sys\nfrom torch_bench.store.remote import Target, store_runs\n"
            "from torch_bench.results.schema import measured, new_run\n"
            "store_runs([new_run([measured('s', sys.argv[2], 'latency', [1.0])])], "
            "Target(sys.argv[1]))\n")
    writer = subprocess.Popen([sys.executable, "-c", code, str(remote), "killed"], env=env,
                              start_new_session=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the writer never reached the push"
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait()
    hook.unlink()
    (leaked,) = scratch.glob("torch-bench-store-*")
    live = scratch / "torch-bench-store-of-a-live-process"
    live.mkdir()
    (live / ".torch-bench-owner").write_text(f"{os.getpid()} ")
    subprocess.run([sys.executable, "-c", code, str(remote), "next"], env=env, check=True)
    assert not leaked.exists() and live.exists()
    assert [p.name for p in scratch.iterdir()] == [live.name]


def _flaky(backend, failures: list):
    """`backend`, answering 503 to its first requests while `failures` holds tokens."""
    class Flaky(backend):
        def _serve(self):
            if failures:
                failures.pop()
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super()._serve()

        do_GET = do_POST = _serve  # noqa: N815
    return Flaky


def test_a_fetch_that_fails_for_a_passing_reason_is_retried(tmp_path, cli):
    """The server answers 503 to the first fetches: the store waits and tries again instead
    of losing the run."""
    repositories = tmp_path / "served"
    bare_remote(repositories / "org", "repo.git")
    failures = ["503"] * 3
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 _flaky(_git_http_backend(repositories, []), failures))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/org/repo.git"
        done = cli("store", str(save(tmp_path, a_run(), "r.json")), "--remote", url)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert not failures and "a git step failed" in done.stderr and "503" in done.stderr
    assert len(branch_files(repositories / "org" / "repo.git")) == 3


def test_failures_of_git_steps_are_told_apart():
    from torch_bench.store.retry import classify_failure

    transient = ["fatal: shallow file has changed since we read it",
                 "fatal: unable to access 'https://x/': The requested URL returned error: 503",
                 "error: RPC failed; curl 56 Recv failure: Connection reset by peer",
                 "fatal: the remote end hung up unexpectedly",
                 "fatal: Unable to create '/r/.git/shallow.lock': File exists."]
    refused = ["fatal: Authentication failed for 'https://x/y.git/'",
               "fatal: unable to access 'https://x/': The requested URL returned error: 403",
               "fatal: unable to access 'https://x/': The requested URL returned error: 302",
               "fatal: '/not/a/repo' does not appear to be a git repository",
               "remote: Repository not found.",
               "fatal: invalid gitfile format: /work/r.json\nfatal: Could not read from remote "
               "repository.",
               "fatal: something no one has seen before"]
    assert all(classify_failure(text) is Verdict.TRANSIENT for text in transient)
    assert all(classify_failure(text) is Verdict.REFUSED for text in refused)
