"""A small GitHub REST client for the one PR comment a report keeps up to date.

One comment per PR and configuration, found again by a hidden marker
(`<!-- torch-bench-report config=KEY -->`) in a comment written by the token's own identity,
updated in place, created when missing. Calls go to `GITHUB_API_URL` (https://api.github.com
by default) with the token from the environment; the token is sent in a header, never printed,
and never sent to another origin (not on a redirect, not to a pagination link).

Retries follow GitHub's rules: 5xx answers and network errors are retried with exponential
backoff; a rate limit honours `Retry-After`, or waits for `x-ratelimit-reset` when that is near
and gives up at once when it is far; a secondary rate limit without either waits a minute,
once. A POST is never blindly repeated: one that failed may have been stored, so the comments
are listed again first and the one that landed is updated.
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
from urllib.parse import urlsplit

from torch_bench.redact import register_secret, scrub
from torch_bench.report.escape import marker_key
from torch_bench.report.fit import COMMENT_LIMIT, fit_report, utf16_length

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "torch-bench"
MAX_WAIT_S = 120.0  # a rate limit that resets later than this is given up on at once
SECONDARY_LIMIT_WAIT_S = 60.0  # GitHub: "wait for at least one minute before retrying"
# Comments made with a workflow's GITHUB_TOKEN (an installation token, for which GET /user is
# refused) are written by this bot account.
ACTIONS_BOT = "github-actions[bot]"


class GitHubError(Exception):
    """A call that failed after its retries; the message names the call, never the token."""

    def __init__(self, message: str, status: int | None = None,
                 maybe_stored: bool = False) -> None:
        super().__init__(scrub(message))  # GitHub's messages may echo what we sent
        self.status = status
        self.maybe_stored = maybe_stored  # a write that may have reached GitHub anyway


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


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows the redirects of reads, dropping the token when one leads to another origin.
    A write is never redirected: urllib would turn a POST answered by 302 into a GET of the
    new place, and the comment would silently not be made."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        method = req.get_method()
        if method not in ("GET", "HEAD"):
            raise GitHubError(f"{method} {_path(req.full_url)}: the API answered {code} (a "
                              f"redirect to {origin(newurl)[1] or newurl[:80]}); a write is "
                              f"never redirected, nothing was posted (is GITHUB_API_URL the "
                              f"REST API?)", code)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and origin(newurl) != origin(req.full_url):
            for name in list(new.headers):
                if name.lower() == "authorization":
                    del new.headers[name]
        return new


class GitHubClient:
    def __init__(self, token: str, api_url: str = DEFAULT_API_URL, *, retries: int = 4,
                 backoff_s: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                 timeout_s: float = 30.0, clock: Callable[[], float] = time.time) -> None:
        register_secret(token)
        self._token = token
        self.api_url = api_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.clock = clock
        self.timeout_s = timeout_s
        self._opener = urllib.request.build_opener(_SameOriginRedirects())

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient(api_url={self.api_url!r})"

    def _headers(self, target: str, has_body: bool) -> dict[str, str]:
        # GitHub's media type first; plain JSON is what its OpenAPI description declares.
        headers = {"Accept": "application/vnd.github+json, application/json;q=0.9",
                   "X-GitHub-Api-Version": "2022-11-28", "User-Agent": USER_AGENT}
        if origin(target) == origin(self.api_url):
            headers["Authorization"] = f"Bearer {self._token}"
        if has_body:
            headers["Content-Type"] = "application/json"
        return headers

    def request(self, method: str, url: str, body: Any = None) -> Response:
        """One call with GitHub's retry rules. A failed POST is not repeated here (it may have
        been stored): the GitHubError says so and the caller decides."""
        target = url if url.startswith(("http://", "https://")) else self.api_url + url
        data = scrub(json.dumps(body)).encode() if body is not None else None
        waited_secondary = False
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(target, data=data, method=method,
                                         headers=self._headers(target, data is not None))
            try:
                with self._opener.open(req, timeout=self.timeout_s) as answer:
                    return Response(answer.status, dict(answer.headers),
                                    _json_body(answer.read(), answer.headers, method, target))
            except urllib.error.HTTPError as exc:
                text = _read_error(exc)
                failure = f"{method} {_path(target)}: HTTP {exc.code}{_message(text)}"
                decision = retry_decision(exc.code, exc.headers, text, attempt,
                                          self.backoff_s, self.clock())
                if decision.give_up_reason:
                    raise GitHubError(f"{failure} ({decision.give_up_reason})",
                                      exc.code) from None
                if decision.secondary:
                    if waited_secondary:
                        raise GitHubError(f"{failure} (secondary rate limit again after "
                                          "waiting; giving up)", exc.code) from None
                    waited_secondary = True
                stored = method == "POST" and exc.code >= 500  # may have landed: not repeated
                if decision.wait is None or attempt == self.retries or stored:
                    raise GitHubError(failure, exc.code, maybe_stored=stored) from None
                wait = decision.wait
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if attempt == self.retries or method == "POST":
                    raise GitHubError(f"{method} {_path(target)}: {reason}",
                                      maybe_stored=method == "POST") from None
                wait = self.backoff_s * 2**attempt
            self.sleep(wait)
        raise AssertionError("unreachable")

    def list_comments(self, repo: str, pr: int) -> list[dict]:
        url: str | None = f"/repos/{repo}/issues/{int(pr)}/comments?per_page=100"
        comments: list[dict] = []
        while url:
            answer = self.request("GET", url)
            if not isinstance(answer.body, list):
                raise GitHubError(f"GET {_path(url)}: expected a list of comments")
            comments.extend(answer.body)
            url = next_link(answer.headers.get("Link") or answer.headers.get("link"))
            if url and origin(url) != origin(self.api_url):
                raise GitHubError(f"GET {_path(url)}: the next page is on another host "
                                  f"({origin(url)[1]}); not following it")
        return comments

    def identity(self) -> str:
        """The login comments made with this token are written under: the user of a personal
        token, or the Actions bot for an installation token (GET /user answers 403 to it)."""
        try:
            login = (self.request("GET", "/user").body or {}).get("login")
        except GitHubError as exc:
            if exc.status == 403:  # "Resource not accessible by integration"
                return ACTIONS_BOT
            raise
        if not login:
            raise GitHubError("GET /user: no login in the answer")
        return str(login)

    def create_comment(self, repo: str, pr: int, body: str) -> dict:
        path = f"/repos/{repo}/issues/{int(pr)}/comments"
        return _comment(self.request("POST", path, {"body": body}), "POST", path)

    def update_comment(self, repo: str, comment_id: int, body: str) -> dict:
        path = f"/repos/{repo}/issues/comments/{int(comment_id)}"
        return _comment(self.request("PATCH", path, {"body": body}), "PATCH", path)


def _comment(answer: Response, method: str, path: str) -> dict:
    """The comment a write answered with; a GitHubError when the answer is not one."""
    body = answer.body
    if not isinstance(body, dict) or not isinstance(body.get("id"), int):
        kind = type(body).__name__ if body is not None else "an empty answer"
        raise GitHubError(f"{method} {path}: HTTP {answer.status} answered with {kind}, not "
                          f"the comment (is GITHUB_API_URL the REST API?)", answer.status)
    return body


def comment_body(report: str, config: str, full_report: str | None = None) -> str:
    """The marker and the report, fitted under GitHub's comment size limit."""
    marker = comment_marker(config) + "\n"
    return marker + fit_report(report, COMMENT_LIMIT - utf16_length(marker) - 16,
                               measure=utf16_length, full_report=full_report)


def find_own_comment(comments: list[dict], marker: str, author: str) -> dict | None:
    for comment in comments:
        login = (comment.get("user") or {}).get("login")
        if login == author and marker in (comment.get("body") or ""):
            return comment
    return None


def upsert_comment(client: GitHubClient, repo: str, pr: int, report: str, config: str, *,
                   full_report: str | None = None, author: str | None = None,
                   create: bool = True) -> tuple[str, dict | None]:
    """Update the PR's comment for `config` in place, or create it (unless `create` is
    False). Only a comment written by `author` (default: the token's identity) is updated.
    Returns ("updated", "created" or "none", the comment)."""
    marker = comment_marker(config)
    body = comment_body(report, config, full_report)
    author = author or client.identity()
    for attempt in range(client.retries + 1):
        existing = find_own_comment(client.list_comments(repo, pr), marker, author)
        if existing:
            return "updated", client.update_comment(repo, existing["id"], body)
        if not create:
            return "none", None
        try:
            return "created", client.create_comment(repo, pr, body)
        except GitHubError as exc:
            if not exc.maybe_stored or attempt == client.retries:
                raise
            client.sleep(client.backoff_s * 2**attempt)  # then look for the one that landed
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class RetryDecision:
    wait: float | None = None  # seconds before the next attempt; None: do not retry
    secondary: bool = False  # a secondary rate limit waited on without a hint
    give_up_reason: str | None = None


def retry_decision(status: int, headers: Mapping[str, str] | None, body: str, attempt: int,
                   backoff_s: float, now: float) -> RetryDecision:
    """What to do about an HTTP error, by GitHub's documented rules."""
    headers = headers or {}
    retry_after = headers.get("Retry-After") or headers.get("retry-after")
    remaining = headers.get("x-ratelimit-remaining")
    secondary = "secondary rate limit" in body.lower()
    limited = status == 429 or (status == 403 and (
        retry_after is not None or remaining == "0" or secondary))
    if status < 500 and not limited:
        return RetryDecision()
    if retry_after is not None:
        try:
            wait = max(0.0, float(retry_after))
        except ValueError:
            wait = None
        if wait is not None and wait > MAX_WAIT_S:
            return RetryDecision(give_up_reason=f"asked to wait {wait:.0f} s; not waiting "
                                                "that long")
        if wait is not None:
            return RetryDecision(wait=wait)
    reset = headers.get("x-ratelimit-reset")
    if limited and remaining == "0" and reset and reset.isdigit():
        wait = max(0.0, int(reset) - now)
        if wait > MAX_WAIT_S:
            when = time.strftime("%H:%M UTC", time.gmtime(int(reset)))
            return RetryDecision(give_up_reason=f"rate limit exhausted until {when}; "
                                                "not waiting that long")
        return RetryDecision(wait=wait)
    if limited:
        return RetryDecision(wait=max(SECONDARY_LIMIT_WAIT_S, backoff_s * 2**attempt),
                             secondary=True)
    return RetryDecision(wait=backoff_s * 2**attempt)


def _json_body(raw: bytes, headers, method: str, target: str) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        kind = (headers.get("Content-Type") or "no content type").split(";")[0]
        raise GitHubError(f"{method} {_path(target)}: the API answered {kind}, not JSON "
                          "(is GITHUB_API_URL the REST API?)") from None


def _read_error(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", "replace")
    except Exception:
        return ""


def _message(text: str) -> str:
    """GitHub's message and, for a 422, each `errors[].message`, on one line."""
    try:
        answer = json.loads(text)
    except ValueError:
        return ""
    if not isinstance(answer, dict):
        return ""
    parts = [str(answer.get("message") or "")]
    for error in answer.get("errors") or []:
        detail = error.get("message") or error.get("code") if isinstance(error, dict) else error
        if detail:
            parts.append(str(detail))
    shown = re.sub(r"\s+", " ", ": ".join(p for p in parts if p)).strip()
    return f" {shown[:300]}" if shown else ""


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url).split("?")[0]


def client_from_env(environ: Mapping[str, str] = os.environ,
                    token_variable: str = "GITHUB_TOKEN") -> GitHubClient:
    token = environ.get(token_variable)
    if not token:
        raise GitHubError(f"no token: set {token_variable}")
    register_secret(token)
    api_url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    if not valid_api_url(api_url):
        raise GitHubError(f"GITHUB_API_URL: {api_url[:80]!r} is not an http(s) URL")
    return GitHubClient(token, api_url)


def valid_api_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname)
            and not any(c.isspace() or ord(c) < 32 for c in url))
