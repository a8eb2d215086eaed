"""Whether an export carries anything its consumer would read, and if not, why: an empty OSS
object, no AI-PEP line, or a CSV with its header alone is a file that silently says nothing.
"""

from __future__ import annotations

import json

# format -> why an empty rendering is empty, in the run's terms
REASONS = {
    "oss": "no time result to write (fastrnns' consumers read every value as a time; "
           "--export-all-metrics writes the others)",
    "aipep": "no time result to write (AI-PEP consumers read every value as a time; "
             "--export-all-metrics writes the others)",
    "csv": "the run has no results",
    "pytorch-v3": "the run has no results (v3 has one record per result)",
    "dynamo-csv": "no compile-suite result (dynamo's CSV has one row per model of "
                  "`--suite compile`)",
}


def is_empty(name: str, text: str) -> bool:
    """Whether `text`, the rendering of format `name`, holds no value."""
    if name == "oss":
        return not json.loads(text)
    if name in ("csv", "dynamo-csv"):
        return len(text.strip().splitlines()) <= 1  # the header alone
    return not text.strip()


def empty_reason(name: str, text: str) -> str | None:
    """Why the rendering `text` of format `name` says nothing, or None when it says something."""
    return REASONS.get(name, "nothing to write") if is_empty(name, text) else None
