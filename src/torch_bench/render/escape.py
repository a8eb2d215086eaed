"""JSON that is safe inside an HTML page: it cannot close its <script> element or start a
comment, and line separators that older JavaScript engines reject are escaped."""

from __future__ import annotations

import json
from typing import Any

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
