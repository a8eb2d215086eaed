"""Which remote holds the data branch, and the credentials to send it. Pure, no git calls
except reading the checkout's own `origin` as the last resort."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from urllib.parse import urlsplit

from torch_bench.errors import UserError
from torch_bench.store.git import Credentials
from torch_bench.store.retry import display_url


def credentials_for(remote: str, token: str | None) -> Credentials | None:
    """The token for an HTTP(S) remote, sent to that exact remote only (its scheme, host, port
    and repository path), never to a server it redirects to."""
    parts = urlsplit(remote)
    if not token or parts.scheme not in ("http", "https"):
        return None
    return Credentials(token, scope=display_url(remote))


def github_remote(repository: str, environ: Mapping[str, str]) -> str:
    server = environ.get("GITHUB_SERVER_URL", "https://github.com")
    return f"{server}/{repository}.git"


def default_remote(environ: Mapping[str, str]) -> str:
    repository = environ.get("GITHUB_REPOSITORY")
    if repository:
        return github_remote(repository, environ)
    done = subprocess.run(["git", "remote", "get-url", "origin"], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise UserError("--remote: no remote given and no 'origin' remote here; name one with "
                        "--remote, or use --to-folder DIR")
    return done.stdout.strip()
