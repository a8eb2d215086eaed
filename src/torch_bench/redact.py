"""Keeping tokens out of case processes and out of every text that leaves the process.

Pure functions over an environment mapping and a text: which variables hold secrets, an
environment without them, and a text with their values (and anything shaped like a GitHub
token) replaced by a mask. `scrub` is the one scrubber of the exit: it knows the secret
variables of the environment, the values registered with `register_secret` (a token read from
a variable named by a flag) and the shapes of GitHub's tokens. The command line wraps its
standard output and error in `ScrubbingStream`s, files are scrubbed by the safe writer, API
bodies by the GitHub client. Text that is escaped later (Markdown, HTML) is scrubbed before
the escaping: `ghp&#95;...` is no longer a token to any scanner, GitHub's masking included.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

MASK = "***"
ALWAYS_SECRET = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN"})
# Action inputs arrive as INPUT_<NAME>; these words in the name mark a secret one.
SECRET_INPUT_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PAT", "KEY", "CREDENTIAL")
ACTIONS_TOKEN = re.compile(r"ACTIONS_\w*TOKEN\Z")
GITHUB_TOKEN_SHAPES = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
# Every token shape starts with one of these: a text without them needs no search for the
# shapes (a hundred times slower on a large page). One search for all the prefixes costs a
# sixth of six substring searches on a dashboard page (27 against 177 us for 37 KB).
TOKEN_PREFIXES = re.compile(r"gh[pousr]_|github_pat_")
# Shorter values are not masked: hiding every "1" or "cpu" in a text would garble it.
MIN_MASKED_LENGTH = 4


def is_secret_name(name: str, extra_names: Iterable[str] = ()) -> bool:
    """Whether the environment variable `name` holds a secret."""
    upper = name.upper()
    if name in extra_names or upper in ALWAYS_SECRET or ACTIONS_TOKEN.match(upper):
        return True
    if upper.startswith("INPUT_"):
        words = re.split(r"[^A-Z0-9]+", upper[len("INPUT_"):])
        return any(word in SECRET_INPUT_WORDS for word in words)
    return False


def token_free_environment(environ: Mapping[str, str],
                           extra_names: Iterable[str] = ()) -> dict[str, str]:
    """A copy of `environ` without the variables that hold secrets."""
    extra = frozenset(extra_names)
    return {name: value for name, value in environ.items() if not is_secret_name(name, extra)}


def secret_values(environ: Mapping[str, str], extra_names: Iterable[str] = ()) -> list[str]:
    """The values of `environ`'s secret variables worth masking, longest first."""
    return list(_secret_values(_snapshot(environ), frozenset(extra_names)))


def _snapshot(environ: Mapping[str, str]) -> tuple[tuple[Any, Any], ...]:
    """The variables of `environ` as a key of the memo below. For os.environ, its raw
    (encoded) table: reading the decoded items costs more than a page's scrubbing."""
    raw = getattr(environ, "_data", None) if environ is os.environ else None
    return tuple(raw.items()) if isinstance(raw, dict) else tuple(environ.items())


def _decoded(item: tuple[Any, Any]) -> tuple[str, str]:
    return tuple(os.fsdecode(part) if isinstance(part, bytes) else part  # type: ignore
                 for part in item)


@functools.lru_cache(maxsize=8)
def _secret_values(environ: tuple[tuple[Any, Any], ...], extra: frozenset[str]
                   ) -> tuple[str, ...]:
    """Remembered per environment: a build scrubs thousands of files in the same one."""
    values = {value.strip() for name, value in map(_decoded, environ)
              if is_secret_name(name, extra) and len(value.strip()) >= MIN_MASKED_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def scrub_secrets(text: str, environ: Mapping[str, str] | None = None,
                  extra_names: Iterable[str] = ()) -> str:
    """`text` with secret values of `environ` (default: this process's) and anything shaped
    like a GitHub token replaced by a mask."""
    for value in secret_values(os.environ if environ is None else environ, extra_names):
        text = text.replace(value, MASK)
    if TOKEN_PREFIXES.search(text) is None:
        return text
    return GITHUB_TOKEN_SHAPES.sub(MASK, text)


_REGISTERED: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask `value` in every text that leaves this process from now on."""
    if value and len(value.strip()) >= MIN_MASKED_LENGTH:
        _REGISTERED.add(value.strip())


def scrub(text: str) -> str:
    """`text` without the environment's secrets, the registered ones or token shapes."""
    if not isinstance(text, str) or not text:
        return text
    for value in sorted(_REGISTERED, key=len, reverse=True):
        text = text.replace(value, MASK)
    return scrub_secrets(text)


class ScrubbingStream:
    """A text stream that scrubs every write before passing it on; anything else (isatty,
    fileno, encoding, flush) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def scrubbed_standard_streams() -> Iterator[None]:
    """Standard output and error scrubbed for the duration (the command line's exit)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = saved
