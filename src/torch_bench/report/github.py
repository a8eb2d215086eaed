"""A small GitHub REST client for the one PR comment a report keeps up to date.

One comment per PR and configuration, found again by a hidden marker
(`<!-- torch-bench-report config=KEY -->`), updated in place, created when missing. Calls go
to `GITHUB_API_URL` (https://api.github.com by default) with the token from the environment;
the token is sent in a header and never printed. 5xx answers, 429 and rate-limit 403s are
retried with exponential backoff, honouring `Retry-After` (and `x-ratelimit-reset`).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from torch_bench.report.escape import marker_key

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "torch-bench"
MAX_WAIT_S = 120.0


class GitHubError(Exception):
    """A call that failed after its retries; the message names the call, never the token."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: Any


def comment_marker(config: str) -> str:
    return f"<!-- torch-bench-report config={marker_key(config)} -->"


def next_link(link_header: str | None) -> str | None:
    """The rel="next" URL of a Link header, if any."""
    for part in (link_header or "").split(","):
        match = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', part)
        if match:
            return match.group(1)
    return None


class GitHubClient:
    def __init__(self, token: str, api_url: str = DEFAULT_API_URL, *, retries: int = 4,
                 backoff_s: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                 timeout_s: float = 30.0) -> None:
        self._token = token
        self.api_url = api_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.timeout_s = timeout_s

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient(api_url={self.api_url!r})"

    def request(self, method: str, url: str, body: Any = None) -> Response:
        target = url if url.startswith(("http://", "https://")) else self.api_url + url
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(target, data=data, method=method, headers={
                "Authorization": f"Bearer {self._token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": USER_AGENT,
                **({"Content-Type": "application/json"} if data is not None else {}),
            })
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as answer:
                    raw = answer.read()
                    return Response(answer.status, dict(answer.headers),
                                    json.loads(raw) if raw else None)
            except urllib.error.HTTPError as exc:
                wait = retry_wait(exc.code, exc.headers, attempt, self.backoff_s)
                if wait is None or attempt == self.retries:
                    raise GitHubError(f"{method} {_path(target)}: HTTP {exc.code} "
                                      f"{_message(exc)}") from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                if attempt == self.retries:
                    reason = getattr(exc, "reason", exc)
                    raise GitHubError(f"{method} {_path(target)}: {reason}") from None
                wait = self.backoff_s * 2**attempt
            self.sleep(min(wait, MAX_WAIT_S))
        raise AssertionError("unreachable")

    def list_comments(self, repo: str, pr: int) -> list[dict]:
        url: str | None = f"/repos/{repo}/issues/{int(pr)}/comments?per_page=100"
        comments: list[dict] = []
        while url:
            answer = self.request("GET", url)
            comments.extend(answer.body or [])
            url = next_link(answer.headers.get("Link") or answer.headers.get("link"))
        return comments

    def create_comment(self, repo: str, pr: int, body: str) -> dict:
        return self.request("POST", f"/repos/{repo}/issues/{int(pr)}/comments",
                            {"body": body}).body

    def update_comment(self, repo: str, comment_id: int, body: str) -> dict:
        return self.request("PATCH", f"/repos/{repo}/issues/comments/{int(comment_id)}",
                            {"body": body}).body


def upsert_comment(client: GitHubClient, repo: str, pr: int, report: str,
                   config: str) -> tuple[str, dict]:
    """Update the PR's comment for `config` in place, or create it. Returns ("updated" or
    "created", the comment)."""
    marker = comment_marker(config)
    body = f"{marker}\n{report}"
    for comment in client.list_comments(repo, pr):
        if marker in (comment.get("body") or ""):
            return "updated", client.update_comment(repo, comment["id"], body)
    return "created", client.create_comment(repo, pr, body)


def retry_wait(status: int, headers: Mapping[str, str] | None, attempt: int,
               backoff_s: float) -> float | None:
    """Seconds to wait before retrying an HTTP error, or None when retrying cannot help."""
    headers = headers or {}
    retry_after = headers.get("Retry-After")
    limited = status == 429 or (status == 403 and (
        retry_after is not None or headers.get("x-ratelimit-remaining") == "0"))
    if not (status >= 500 or limited):
        return None
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            pass
    reset = headers.get("x-ratelimit-reset")
    if limited and reset and reset.isdigit():
        return max(0.0, int(reset) - time.time())
    return backoff_s * 2**attempt


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url).split("?")[0]


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read()).get("message", ""))[:200]
    except Exception:
        return ""


def client_from_env(environ: Mapping[str, str] = os.environ,
                    token_variable: str = "GITHUB_TOKEN") -> GitHubClient:
    token = environ.get(token_variable)
    if not token:
        raise GitHubError(f"no token: set {token_variable}")
    return GitHubClient(token, environ.get("GITHUB_API_URL") or DEFAULT_API_URL)
