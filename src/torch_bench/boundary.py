"""Typed, bounded parsers for command-line values, shared by every command.

Each returns an `argparse` type: the value is checked when the command line is read, so
nonsense ("nan", "1e23", 5,000 digits, a control character) ends as one usage line and exit
status 2 before any work starts.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_NUMBER_TEXT = 40  # characters: far more than any sensible value, far less than a DoS
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def number(low: float | None = None, high: float | None = None, *, integer: bool = False,
           unit: str = "", below_high: bool = False) -> Callable[[str], float | int]:
    """A finite number (a whole one if `integer`) within [low, high] (below `high` if
    `below_high`)."""
    kind = "a whole number" if integer else "a number"
    span = _describe_range(low, high, unit, below_high)

    def parse(text: str) -> float | int:
        shown = text.strip()
        if len(shown) > MAX_NUMBER_TEXT:
            raise argparse.ArgumentTypeError(f"{shown[:20]!r}...: too long for {kind}")
        try:
            value = int(shown) if integer else float(shown)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown!r} is not {kind}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{shown!r} is not a finite number")
        if (low is not None and value < low) or (high is not None and (
                value >= high if below_high else value > high)):
            raise argparse.ArgumentTypeError(f"{shown!r} is out of range: expected {span}")
        return value

    parse.__name__ = kind  # argparse names the type in some messages
    return parse


@dataclass(frozen=True)
class Limit:
    low: float
    high: float
    unit: str = ""
    below_high: bool = False  # high itself is out
    integer: bool = False


# The rule's rates and the time and step budgets, the same for every command's flags and the
# Action's inputs. Below 1e-6, a rate asks a short history for a t quantile in the millions,
# and the threshold that follows overflows (e**710); a budget past a week is a typo.
LIMITS = {
    "false-alarm-rate": Limit(1e-6, 0.5, below_high=True),
    "per-pr-level": Limit(1e-6, 1),
    "budget": Limit(0, 7 * 86_400, "s"),
    "max-steps": Limit(1, 1_000, "steps", integer=True),  # bisect's
}


def limited(name: str) -> Callable[[str], float | int]:
    """The argparse type of the rate or budget `name` (a key of LIMITS)."""
    limit = LIMITS[name]
    return number(limit.low, limit.high, integer=limit.integer, unit=limit.unit,
                  below_high=limit.below_high)


def plain_text(max_length: int = 200) -> Callable[[str], str]:
    """A non-empty single-line text without control characters, at most `max_length`."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError("must not be empty")
        if _CONTROL.search(text) or any(unicodedata.category(c) == "Cf" and c != "\u200d"
                                        for c in text):
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: control characters are not "
                                             f"allowed")
        if len(text) > max_length:
            raise argparse.ArgumentTypeError(f"{text[:20]!r}...: longer than {max_length} "
                                             f"characters")
        return text

    parse.__name__ = "text"
    return parse


# GitHub's: an owner of letters, digits and inner hyphens; a name of letters, digits, '.', '_'
# and '-', other than '.' and '..' (so `../x` is no repository, and no path either).
_REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")


def repository_name(text: str) -> str:
    """A GitHub repository as OWNER/NAME."""
    if not _REPOSITORY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a repository as OWNER/NAME")
    return text


def shell_words(text: str) -> str:
    """Arguments as one string a POSIX shell would split (quotes closed), kept as given."""
    try:
        shlex.split(text)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise argparse.ArgumentTypeError(f"{text[:60]!r}: {str(exc).lower()}") from None
    return text


def http_url(text: str) -> str:
    """An absolute http(s) URL with a host, on one line (no `javascript:`, no `data:`)."""
    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname \
            or _CONTROL.search(text) or len(text) > 2000:
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not an http(s) URL")
    return text.strip()


def _describe_range(low: float | None, high: float | None, unit: str,
                    below_high: bool = False) -> str:
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        upto = "to below" if below_high else "to"
        return f"{plain_number(low)} {upto} {plain_number(high)}{suffix}"
    if low is not None:
        return f">= {plain_number(low)}{suffix}"
    if high is not None:
        return f"<= {plain_number(high)}{suffix}"
    return f"any finite number{suffix}"


def plain_number(value: float) -> str:
    """1000000 rather than 1e+06: a range is read by people."""
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"
