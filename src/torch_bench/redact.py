"""Keeping tokens out of case processes and out of every text we capture.

Pure functions over an environment mapping and a text: which variables hold secrets, an
environment without them, and a text with their values (and anything shaped like a GitHub
token) replaced by a mask.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

MASK = "***"
ALWAYS_SECRET = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN"})
# Action inputs arrive as INPUT_<NAME>; these words in the name mark a secret one.
SECRET_INPUT_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PAT", "KEY", "CREDENTIAL")
ACTIONS_TOKEN = re.compile(r"ACTIONS_\w*TOKEN\Z")
GITHUB_TOKEN_SHAPES = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
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
    extra = frozenset(extra_names)
    values = {value.strip() for name, value in environ.items()
              if is_secret_name(name, extra) and len(value.strip()) >= MIN_MASKED_LENGTH}
    return sorted(values, key=len, reverse=True)


def scrub_secrets(text: str, environ: Mapping[str, str] | None = None,
                  extra_names: Iterable[str] = ()) -> str:
    """`text` with secret values of `environ` (default: this process's) and anything shaped
    like a GitHub token replaced by a mask."""
    for value in secret_values(os.environ if environ is None else environ, extra_names):
        text = text.replace(value, MASK)
    return GITHUB_TOKEN_SHAPES.sub(MASK, text)
