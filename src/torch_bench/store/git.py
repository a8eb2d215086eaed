"""A thin wrapper around the `git` binary: run a command, get its output, or a GitError whose
text never contains a secret.

Authentication is given to git through `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` /
`GIT_CONFIG_VALUE_n` environment variables (an `http.extraHeader`), so the token is never part
of a URL, an argument list (visible in `ps`), a config file or a log line; every text that
leaves this module is scrubbed of it as well.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REDACTED = "***"

# Nothing from the user's global or system git configuration (signing, hooks, credential
# helpers, aliases) should change how the data branch is written.
_QUIET_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "torch-bench",
    "GIT_AUTHOR_EMAIL": "torch-bench@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "torch-bench",
    "GIT_COMMITTER_EMAIL": "torch-bench@users.noreply.github.com",
}


class GitError(Exception):
    """A git command failed; `stderr` is already scrubbed of secrets."""

    def __init__(self, command: str, returncode: int, stderr: str, stdout: str = ""):
        self.command, self.returncode = command, returncode
        self.stderr, self.stdout = stderr, stdout
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {returncode}"
        super().__init__(f"git {command}: {detail}")


def is_branch_name(name: str) -> bool:
    """Whether git accepts `name` as a branch (git check-ref-format). A leading '-' is refused
    as well: git would read such a name as an option."""
    if name.startswith("-"):
        return False
    checked = Git(Path.cwd()).run("check-ref-format", f"refs/heads/{name}", check=False)
    return checked.returncode == 0


@dataclass(frozen=True)
class Credentials:
    """An HTTP token, sent as a Basic authorization header (the form GitHub accepts)."""

    token: str
    scope: str = ""  # the remote's URL: the header goes to that repository only
    user: str = "x-access-token"

    @property
    def header(self) -> str:
        pair = base64.b64encode(f"{self.user}:{self.token}".encode()).decode()
        return f"Authorization: Basic {pair}"

    def secrets(self) -> tuple[str, ...]:
        pair = base64.b64encode(f"{self.user}:{self.token}".encode()).decode()
        return (self.token, pair)


def auth_env(credentials: Credentials | None) -> dict[str, str]:
    """Environment variables that hand git the token as configuration, not as an argument.

    The header is scoped to the remote's URL, and redirects are not followed: git matches
    `http.<url>.*` against the URL it started with and keeps sending the header after a
    redirect, so a 302 to another host or port would otherwise receive the token."""
    if credentials is None:
        return {}
    section = f"http.{credentials.scope}" if credentials.scope else "http"
    return {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": f"{section}.extraHeader",
        "GIT_CONFIG_VALUE_0": credentials.header,
        "GIT_CONFIG_KEY_1": f"{section}.followRedirects",
        "GIT_CONFIG_VALUE_1": "false",
    }


def scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


@dataclass(frozen=True)
class Git:
    """Runs git in one repository directory with a fixed environment."""

    directory: Path
    credentials: Credentials | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)

    def env(self, **overrides: str) -> dict[str, str]:
        inherited = {k: v for k, v in os.environ.items()
                     if not k.startswith(("GIT_CONFIG_", "GIT_DIR", "GIT_WORK_TREE",
                                          "GIT_INDEX_FILE"))}
        return {**inherited, **_QUIET_ENV, **auth_env(self.credentials), **self.extra_env,
                **overrides}

    def run(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        secrets = self.credentials.secrets() if self.credentials else ()
        done = subprocess.run(["git", *args], cwd=self.directory, input=input,
                              capture_output=True, env=self.env(**(env or {})), check=False)
        stdout = scrub(done.stdout.decode("utf-8", "replace"), secrets)
        stderr = scrub(done.stderr.decode("utf-8", "replace"), secrets)
        result = subprocess.CompletedProcess(done.args[:2], done.returncode, stdout, stderr)
        if check and done.returncode != 0:
            raise GitError(args[0], done.returncode, stderr, stdout)
        return result

    def raw(self, *args: str, input: bytes | None = None,
            env: Mapping[str, str] | None = None) -> bytes:
        """Standard output as bytes (object contents), for commands whose output holds no
        secret; errors are scrubbed as usual."""
        secrets = self.credentials.secrets() if self.credentials else ()
        done = subprocess.run(["git", *args], cwd=self.directory, input=input,
                              capture_output=True, env=self.env(**(env or {})), check=False)
        if done.returncode != 0:
            stderr = scrub(done.stderr.decode("utf-8", "replace"), secrets)
            raise GitError(args[0], done.returncode, stderr)
        return done.stdout

    def out(self, *args: str, input: bytes | None = None,
            env: Mapping[str, str] | None = None) -> str:
        return self.run(*args, input=input, env=env).stdout.strip()
