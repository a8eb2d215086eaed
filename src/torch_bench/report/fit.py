"""Fitting a Markdown report into a size limit (a PR comment, a job summary) by leaving out
whole table rows, never cutting through a row or a `<details>` block.

The report lists the worst results first (the headline, the counts, regressions worst first,
newly failing, then the rest), so rows are kept in document order and dropped from the end:
what survives is the headline and as many of the worst rows as fit. Every table that lost
rows says how many, and one line under the headline says how many rows are left out and
where the full report is. Text that is not such a report (a fork's hand-off file is
untrusted) is still fitted: whole lines are kept while they fit, open `<details>` and code
fences are closed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

COMMENT_LIMIT = 65_536  # characters GitHub accepts in an issue or PR comment body
SUMMARY_LIMIT = 1_048_576  # bytes GitHub accepts in one step's job summary

_SEPARATOR = re.compile(r"^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*(:?-{3,}:?\s*)?$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def utf16_length(text: str) -> int:
    """Characters as GitHub's web stack counts them in the worst case (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Table:
    """Line indexes of one table's body rows (the header and separator are not rows)."""
    rows: tuple[int, ...]


def find_tables(lines: list[str]) -> list[Table]:
    tables, index = [], 0
    while index < len(lines):
        if index > 0 and _SEPARATOR.match(lines[index]) and lines[index - 1].lstrip().startswith(
                "|"):
            end = index + 1
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            if end > index + 1:
                tables.append(Table(tuple(range(index + 1, end))))
            index = end
        else:
            index += 1
    return tables


def fit_report(markdown: str, limit: int, *, measure: Callable[[str], int] = len,
               full_report: str | None = None) -> str:
    """`markdown` unchanged when it fits in `limit` (as counted by `measure`); otherwise the
    longest prefix of its table rows that fits, with notes saying what was left out and where
    `full_report` (a Markdown link or phrase) is."""
    if measure(markdown) <= limit:
        return markdown
    lines = markdown.split("\n")
    tables = find_tables(lines)
    all_rows = [row for table in tables for row in table.rows]
    low, high = 0, len(all_rows)
    if not all_rows or measure(_with_rows(lines, tables, 0, full_report)) > limit:
        return cut_lines(markdown, limit, measure, full_report)
    while low < high:  # the most rows (kept in document order) that still fit
        middle = (low + high + 1) // 2
        if measure(_with_rows(lines, tables, middle, full_report)) <= limit:
            low = middle
        else:
            high = middle - 1
    return _with_rows(lines, tables, low, full_report)


def left_out_note(count: int, total: int, full_report: str | None) -> str:
    where = f" The full report: {full_report}." if full_report else ""
    return (f"**{count} of {total} table rows are not shown here, to stay within GitHub's "
            f"size limit; the worst are shown first.**{where}")


def _with_rows(lines: list[str], tables: list[Table], keep: int, full_report: str | None) -> str:
    """The report with only the first `keep` table rows (in document order)."""
    total = sum(len(t.rows) for t in tables)
    dropped_rows: set[int] = set()
    notes: dict[int, str] = {}  # line index -> note placed after it
    header_lines: set[int] = set()
    remaining = keep
    for table in tables:
        shown = min(remaining, len(table.rows))
        remaining -= shown
        hidden = table.rows[shown:]
        dropped_rows.update(hidden)
        if not hidden:
            continue
        if shown:
            notes[table.rows[shown - 1]] = f"*… and {len(hidden)} more not shown*"
        else:  # nothing left of this table: drop its header too
            header_lines.update({table.rows[0] - 1, table.rows[0] - 2})
            notes[table.rows[0] - 1] = f"*{len(hidden)} rows not shown*"
    out: list[str] = []
    for index, line in enumerate(lines):
        if index not in dropped_rows and index not in header_lines:
            out.append(line)
        if index in notes:
            out += ["", notes[index], ""]
        if index == 0 and total > keep:
            out += ["", left_out_note(total - keep, total, full_report), ""]
    return "\n".join(out)


def cut_lines(text: str, limit: int, measure: Callable[[str], int],
              full_report: str | None) -> str:
    """Whole lines from the start while they fit, open blocks closed, then a note."""
    note = "\n\n**The rest of this report is not shown, to stay within GitHub's size limit.**" + (
        f" The full report: {full_report}." if full_report else "") + "\n"
    closing_reserve = "\n```" + "\n</details>" * 8
    budget = limit - measure(note) - measure(closing_reserve)
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        size = measure(line) + 1
        if used + size > budget:
            if not kept:  # a single overlong first line: keep what fits of it
                kept.append(_prefix(line, budget - 1, measure))
            break
        kept.append(line)
        used += size
    result = "\n".join(kept) + _closing(kept) + note
    while measure(result) > limit and result:  # a tiny limit: the note itself is too long
        result = result[: max(0, len(result) - (measure(result) - limit) - 1)]
    return result


def _closing(kept: list[str]) -> str:
    closing = ""
    if sum(1 for line in kept if _FENCE.match(line)) % 2:
        closing += "\n```"
    opened = sum(len(re.findall(r"<details\b", line, re.I)) for line in kept)
    closed = sum(len(re.findall(r"</details\s*>", line, re.I)) for line in kept)
    return closing + "\n</details>" * max(0, min(8, opened - closed))


def _prefix(line: str, budget: int, measure: Callable[[str], int]) -> str:
    low, high = 0, len(line)
    while low < high:
        middle = (low + high + 1) // 2
        if measure(line[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return line[:low]
