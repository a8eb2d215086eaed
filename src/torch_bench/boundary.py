"""Typed, bounded parsers for command-line values, shared by every command.

Each returns an `argparse` type: the value is checked when the command line is read, so
nonsense ("nan", "1e23", 5,000 digits, a control character) ends as one usage line and exit
status 2 before any work starts.
"""

from __future__ import annotations

import argparse
import math
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import urlsplit

MAX_NUMBER_TEXT = 40  # characters: far more than any sensible value, far less than a DoS
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def number(low: float | None = None, high: float | None = None, *, integer: bool = False,
           unit: str = "") -> Callable[[str], float | int]:
    """A finite number (a whole one if `integer`) within [low, high]."""
    kind = "a whole number" if integer else "a number"
    span = _describe_range(low, high, unit)

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
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{shown!r} is out of range: expected {span}")
        return value

    parse.__name__ = kind  # argparse names the type in some messages
    return parse


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


def _describe_range(low: float | None, high: float | None, unit: str) -> str:
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"{plain_number(low)} to {plain_number(high)}{suffix}"
    if low is not None:
        return f">= {plain_number(low)}{suffix}"
    if high is not None:
        return f"<= {plain_number(high)}{suffix}"
    return f"any finite number{suffix}"


def plain_number(value: float) -> str:
    """1000000 rather than 1e+06: a range is read by people."""
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"
