"""A bisection's result as text: the one-line conclusion, a progress line per step, the
Markdown report (job summary, issue comment) and the JSON document. Commit subjects and
authors are untrusted: escaped in Markdown."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from torch_bench.analyze.bisect import Bisection, Ending, Grade, Step
from torch_bench.report.escape import markdown_text


class Commit(Protocol):
    sha: str
    subject: str
    author: str


def short(sha: str | None) -> str:
    return (sha or "-")[:10]


def conclusion(result: Bisection, quoted: Callable[[str], str] = str) -> str:
    """One line: what the search found, and why steps whose runs were untrusted said
    nothing (their runs' pre-flight findings, passed through `quoted`)."""
    steps = f"{len(result.steps)} step(s)"
    if result.ending is Ending.FOUND:
        return f"first bad commit {short(result.bad)} (found in {steps})"
    if result.ending is Ending.UNTRUSTED:
        return (f"no commit named: {short(result.good)} (good) and {short(result.bad)} (bad) "
                f"could not be judged ({steps}): {quoted(result.steps[0].detail)}; measure on a "
                "quieter machine, or pass the run --no-preflight (or a higher "
                "--cpu-busy-limit)")
    untrusted = [step for step in result.steps if step.grade is Grade.UNTRUSTED]
    also = (f"; {len(untrusted)} step(s) untrusted ({quoted(untrusted[0].detail)})"
            if untrusted else "")
    if result.ending is Ending.AMBIGUOUS:
        return (f"ambiguous: noise made the search undecidable between {short(result.good)} "
                f"(good) and {short(result.bad)} (bad); {len(result.ambiguous)} commit(s) in "
                f"between measured as ambiguous, after {steps}{also}")
    if result.ending is Ending.BUDGET:
        return (f"step budget spent ({steps}): the first bad commit is after "
                f"{short(result.good)} and at or before {short(result.bad)} "
                f"({result.between + 1} candidate(s) left){also}")
    return (f"no single commit found: {short(result.good)} and {short(result.bad)} do not "
            f"differ beyond noise ({steps})")


def step_line(step: Step) -> str:
    measured = short(step.candidate) if step.candidate else "the endpoints"
    detail = f" ({step.detail})" if step.detail else ""
    return f"step {step.number}: {measured}: {step.grade.value} in {step.seconds:.0f} s{detail}"


def text_lines(result: Bisection, commits: Mapping[str, Commit]) -> list[str]:
    lines = [conclusion(result)]
    found = commits.get(result.first_bad or "")
    if found:
        lines += [f"  {found.sha}", f"  {found.subject}", f"  by {found.author}"]
    return lines


def _commit_cell(sha: str, commits: Mapping[str, Commit]) -> str:
    info = commits.get(sha)
    subject = f" {markdown_text(info.subject, 120)}" if info and info.subject else ""
    return f"`{short(sha)}`{subject}"


def markdown(result: Bisection, commits: Mapping[str, Commit],
             title: str = "torch-bench bisect") -> str:
    # the conclusion is this module's own words, hexadecimal commit names and, escaped, the
    # runs' pre-flight findings
    said = conclusion(result, lambda detail: markdown_text(detail, 300))
    lines = [f"## {markdown_text(title)}", "", f"**{said}**", ""]
    found = commits.get(result.first_bad or "")
    if found:
        lines += [f"- commit: `{found.sha}`",
                  f"- subject: {markdown_text(found.subject, 200)}",
                  f"- author: {markdown_text(found.author, 120)}", ""]
    else:
        lines += [f"- last good: {_commit_cell(result.good, commits)}",
                  f"- first bad: {_commit_cell(result.bad, commits)}", ""]
    lines += [f"{result.commits} commits in the range, {len(result.steps)} step(s) of at most "
              f"{result.max_steps}.", "",
              "| step | commit | grade | time | measured |", "| ---: | --- | --- | ---: | --- |"]
    for step in result.steps:
        commit = _commit_cell(step.candidate, commits) if step.candidate else "the endpoints"
        lines.append(f"| {step.number} | {commit} | {step.grade.value} | {step.seconds:.0f} s "
                     f"| {markdown_text(step.detail, 300)} |")
    return "\n".join(lines) + "\n"


def document(result: Bisection, commits: Mapping[str, Commit]) -> dict[str, Any]:
    found = commits.get(result.first_bad or "")
    return {**result.to_dict(), "conclusion": conclusion(result),
            "first_bad_commit": {"sha": found.sha, "subject": found.subject,
                                 "author": found.author} if found else None}
