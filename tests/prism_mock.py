"""A validating mock of the GitHub REST API: Stoplight Prism (npm `@stoplight/prism-cli`)
serving GitHub's own OpenAPI description (npm `@octokit/openapi`), cut to the operations the
comment flow uses, on 127.0.0.1. Prism answers from the description's examples and refuses
requests that do not match it, so a test passing against it shows every request we make is
well-formed by GitHub's published contract. `scripts/setup-prism` installs the packages."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
from pathlib import Path

PRISM_DIR = Path(__file__).resolve().parent / "prism"
PRISM = PRISM_DIR / "node_modules" / ".bin" / "prism"
DESCRIPTION = PRISM_DIR / "node_modules" / "@octokit" / "openapi" / "generated" / \
    "api.github.com.deref.json"
CUT = PRISM_DIR / "node_modules" / ".torch-bench-comment-api.json"
OPERATIONS = {  # every call report/github.py and the fork hand-off make
    "/user": ("get",),
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": ("get", "post"),
    "/repos/{owner}/{repo}/issues/comments/{comment_id}": ("patch",),
    "/repos/{owner}/{repo}/pulls/{pull_number}": ("get",),
}


def unavailable() -> str | None:
    """Why the mock cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not PRISM.exists() or not DESCRIPTION.exists():
        return "the Prism packages are missing: run scripts/setup-prism"
    return None


def cut_description() -> Path:
    """GitHub's description reduced to OPERATIONS (already dereferenced: self-contained)."""
    if CUT.exists() and CUT.stat().st_mtime >= DESCRIPTION.stat().st_mtime:
        return CUT
    full = json.loads(DESCRIPTION.read_text(encoding="utf-8"))
    paths = {path: {method: full["paths"][path][method] for method in methods}
             for path, methods in OPERATIONS.items()}
    for responses in (op["responses"] for ops in paths.values() for op in ops.values()):
        for answer in responses.values():
            # The example Link points at api.github.com: a pagination link to another origin
            # than the mock's, which the client rightly refuses to follow.
            answer.get("headers", {}).pop("Link", None)
            for content in answer.get("content", {}).values():
                for example in content.get("examples", {}).values():
                    repair_example(example.get("value"))
    cut = {"openapi": full["openapi"], "info": full["info"], "servers": full["servers"],
           "paths": paths}
    CUT.write_text(json.dumps(cut), encoding="utf-8")
    return CUT


def repair_example(value: object) -> None:
    """GitHub's example pull request lacks a field its own schema requires (each requested
    team's `type`); Prism, checking its answers too, would refuse to send it."""
    if isinstance(value, dict):
        for team in value.get("requested_teams") or []:
            if isinstance(team, dict):
                team.setdefault("type", "organization")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrismMock:
    def __init__(self, timeout_s: float = 120.0) -> None:
        self.port = free_port()
        self.timeout_s = timeout_s
        self.process: subprocess.Popen | None = None
        self.output: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> PrismMock:
        self.process = subprocess.Popen(
            [str(PRISM), "mock", "--errors", "-h", "127.0.0.1", "-p", str(self.port),
             str(cut_description())],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()

        def read() -> None:
            for line in self.process.stdout:
                self.output.append(line)
                if "listening on" in line.lower():
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(self.timeout_s) or self.process.poll() is not None:
            self.__exit__()
            raise RuntimeError("Prism did not start:\n" + "".join(self.output[-20:]))
        return self

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
