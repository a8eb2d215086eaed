"""Text made safe for HTML: JSON that cannot close its <script> element or start a comment
(and line separators that older JavaScript engines reject escaped); long names that may wrap
at their separators."""

from __future__ import annotations

import json
import re
from typing import Any

import markupsafe

_HTML_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def json_for_html(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _HTML_UNSAFE.items():
        text = text.replace(raw, escaped)
    return text


_BREAK_AFTER = re.compile(r"([/:._\-(\[,=]+)")


def breakable(name: str) -> markupsafe.Markup:
    """`name` escaped, with a place to wrap (<wbr>) after each run of separators, so that
    a long benchmark name wraps at `/`, `::` or `.` on a narrow screen, not mid-word."""
    parts = _BREAK_AFTER.split(str(name))
    return markupsafe.Markup("").join(
        markupsafe.escape(part) + (markupsafe.Markup("<wbr>") if k % 2 else "")
        for k, part in enumerate(parts))
