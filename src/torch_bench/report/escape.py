"""Making untrusted text (benchmark and parameter names, branch names, PR titles, error
messages) safe to embed: it can break neither a Markdown table nor a workflow command, inject
no HTML, and mention nobody."""

from __future__ import annotations

import re

from torch_bench.redact import scrub

# Characters with a meaning in GitHub Markdown, written as HTML character references, which
# GitHub renders as the character itself and never interprets. `@` is the exception: GitHub
# may decode references before it links mentions, so a zero-width joiner follows it instead.
_MARKDOWN_REFERENCES = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
    "|": "&#124;", "`": "&#96;", "@": "@\u200d", "#": "&#35;", "*": "&#42;", "_": "&#95;",
    "[": "&#91;", "]": "&#93;", "(": "&#40;", ")": "&#41;", "!": "&#33;", "~": "&#126;",
    "\\": "&#92;", "$": "&#36;", ":": "&#58;",
}
_MARKDOWN_SPECIAL = re.compile("[" + re.escape("".join(_MARKDOWN_REFERENCES)) + "]")
_WHITESPACE = re.compile(r"\s+")


def markdown_text(value: object, limit: int = 200) -> str:
    """`value` as inline Markdown text that renders literally: one line, every Markdown or
    HTML special character as a character reference (`@` as `@` and a zero-width joiner), at
    most `limit` characters shown. Secrets are masked first: once escaped, a token is no
    longer recognisable by any scanner, GitHub's masking included."""
    text = _WHITESPACE.sub(" ", scrub(str(value))).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_REFERENCES[m.group()], text)


def marker_key(value: str) -> str:
    """A configuration name reduced to characters safe inside an HTML comment."""
    return re.sub(r"[^A-Za-z0-9_.=/+-]", "-", value)[:100] or "default"


def annotation_data(value: object) -> str:
    """Escaping for the message of a GitHub workflow command (`::warning::message`)."""
    return str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_property(value: object) -> str:
    """Escaping for a property of a workflow command (`title=...`)."""
    return annotation_data(value).replace(":", "%3A").replace(",", "%2C")
