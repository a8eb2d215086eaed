"""Pure decisions of the push loop: what a failed push means, and how long to wait."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit, urlunsplit


class Verdict(str, Enum):
    PUSHED = "pushed"
    RACE = "race"  # another writer moved the branch first: fetch, re-apply, retry
    TRANSIENT = "transient"  # a step failed for a passing reason (network, a lock): retry
    REFUSED = "refused"  # authentication, protection, hooks, no such repository: never retried


# Why a ref update is rejected when someone else pushed first (git's own wording, from
# `git push --porcelain` and from receive-pack's ref transaction on the remote side).
RACE_REASONS = ("fetch first", "non-fast-forward", "stale info", "failed to update ref",
                "failed to lock", "cannot lock ref", "incorrect old value")


# Failures of a git step that a later attempt may not meet: another git process held a lock
# or changed the shallow file under us, the connection broke, the server was briefly unwell.
# Anything else (no such repository, no access, a redirect, a bundle or file given as the
# remote) ends the store at once: retrying it would only wait out the budget.
TRANSIENT_FAILURES = (
    "shallow file has changed", ".lock': file exists", "cannot lock ref",
    "the remote end hung up", "early eof", "rpc failed", "unexpected disconnect",
    "connection reset", "connection timed out", "operation timed out", "timed out after",
    "empty reply from server", "recv failure", "send failure", "transfer closed",
    "gnutls recv error", "ssl_read", "index-pack failed")
PERMANENT_FAILURES = (
    "authentication failed", "could not read username", "could not read password",
    "terminal prompts disabled", "permission denied", "access denied", "repository not found",
    "does not appear to be a git repository", "not a git repository",
    "could not resolve host", "unsupported protocol", "invalid refspec", "not a valid ref",
    "unable to find remote helper", "invalid gitfile format",
    "ssl certificate problem", "server certificate verification failed")
# An HTTP status git reports: 5xx, a timeout or a rate limit may pass; a redirect (never
# followed, so the token stays with its origin) or another 4xx will not.
TRANSIENT_HTTP = re.compile(r"returned error: (?:5\d\d|408|429)\b")


@dataclass(frozen=True)
class PushOutcome:
    verdict: Verdict
    reason: str


def classify_push(returncode: int, stdout: str, stderr: str, ref: str) -> PushOutcome:
    """Read `git push --porcelain` output for `ref` (e.g. refs/heads/gh-pages)."""
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or not parts[1].endswith(":" + ref):
            continue
        flag, summary = parts[0], parts[2]
        if flag in ("*", " ", "+", "="):
            return PushOutcome(Verdict.PUSHED, summary)
        if any(reason in summary for reason in RACE_REASONS):
            return PushOutcome(Verdict.RACE, summary)
        return PushOutcome(Verdict.REFUSED, _with_remote_messages(summary, stderr))
    if returncode == 0:
        return PushOutcome(Verdict.PUSHED, "pushed")
    return PushOutcome(classify_failure(stderr), _last_error(stderr))


def classify_failure(stderr: str) -> Verdict:
    """Whether a failed git step (a fetch, a push that reported no ref) is worth retrying:
    TRANSIENT for a known passing failure, REFUSED for anything else."""
    text = stderr.lower()
    if any(reason in text for reason in PERMANENT_FAILURES):
        return Verdict.REFUSED
    if TRANSIENT_HTTP.search(text) or any(reason in text for reason in TRANSIENT_FAILURES):
        return Verdict.TRANSIENT
    return Verdict.REFUSED


def _remote_lines(stderr: str) -> list[str]:
    return [line[len("remote:"):].strip() for line in stderr.splitlines()
            if line.startswith("remote:") and line[len("remote:"):].strip()]


def _with_remote_messages(summary: str, stderr: str) -> str:
    said = _remote_lines(stderr)
    return summary + (f"; the remote said: {' / '.join(said[-3:])}" if said else "")


def _last_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["git push failed without a message"])[-1]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries within a time budget, with exponential backoff and jitter between them.

    A budget of time rather than a count of attempts: on a busy machine each attempt is slow
    and many writers collide, so a count runs out while a few more seconds would have done."""

    budget: float = 300.0  # seconds from the first attempt after which no retry starts
    attempts: int | None = None  # an optional cap on attempts as well
    base_delay: float = 0.2  # seconds before the second attempt, on average
    max_delay: float = 10.0

    def delay(self, failures: int, rng: random.Random) -> float:
        """Seconds to wait after `failures` failed attempts: half fixed, half random, so
        writers that collided once spread out instead of colliding again."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (min(failures, 60) - 1))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)

    def next_delay(self, failures: int, elapsed: float, rng: random.Random) -> float | None:
        """The wait before attempt `failures + 1`, or None when the budget (or the cap) is
        spent: no retry starts after the budget, and no wait runs past it."""
        if self.attempts is not None and failures >= self.attempts:
            return None
        remaining = self.budget - elapsed
        if remaining <= 0:
            return None
        return min(self.delay(failures, rng), remaining)

    def describe(self) -> str:
        cap = f" or {self.attempts} attempts" if self.attempts is not None else ""
        return f"{self.budget:g} s{cap}"


def display_url(remote: str) -> str:
    """The remote as it may be printed: any user or password in the URL is removed."""
    parts = urlsplit(remote)
    if parts.scheme and "@" in parts.netloc:
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return remote
