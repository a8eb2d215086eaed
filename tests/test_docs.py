"""The README and the pages under docs/ agree with the code: every `torch-bench` command and
flag they name exists in the CLI, every relative link between them resolves, the sub-actions'
tables match their action.yml, and the front page keeps one command for the demo and one for
the tests."""

from __future__ import annotations

import argparse
import os
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from torch_bench.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# fastrnns' flags are camelCase, Hugging Face's snake_case
FLAG = re.compile(r"(?<![\w-])--[a-z][a-zA-Z0-9_-]*")
COMMAND = re.compile(r"(?<![\w/-])torch-bench (?=\S)")
SCRIPT = re.compile(r"[\w/]+\.py\b")  # a script of benchmarks/ or scripts/: its own flags
# Flags of other tools the pages mention: git, pip, venv, zizmor, fastrnns, dynamo, docker.
OTHER_TOOLS = {"--depth", "--no-deps", "--system-site-packages", "--persona", "--print-json",
               "--accuracy", "--performance", "--pid"}


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def flags_of(parser: argparse.ArgumentParser) -> set[str]:
    return {s for s in parser._option_string_actions if s.startswith("--")}


@cache
def cli() -> argparse.ArgumentParser:
    return build_parser(None)


@cache
def every_flag() -> frozenset[str]:
    found = set(flags_of(cli()))
    for command in subparsers(cli()).values():
        found |= flags_of(command)
        for action in subparsers(command).values():
            found |= flags_of(action)
    return frozenset(found)


def code_chunks(text: str) -> list[str]:
    """Code spans, and code-block lines with their continuation lines joined."""
    chunks, block, fence = [], [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            if fence:
                chunks.extend(_joined(block))
                block = []
            fence = not fence
            continue
        if fence:
            block.append(line)
        else:
            chunks.extend(re.findall(r"`([^`\n]+)`", line))
    return chunks


def _joined(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        continues = out and (out[-1].rstrip().endswith("\\") or re.match(r"\s{4,}[\[-]", line))
        if continues:
            out[-1] = out[-1].rstrip().rstrip("\\") + " " + line.strip()
        else:
            out.append(line)
    return out


def commands_in(chunk: str) -> list[tuple[list[str], str]]:
    """(command words, the rest) of every `torch-bench ...` in a chunk, comments dropped."""
    chunk = re.split(r"\s#\s", chunk)[0]
    found = []
    matches = list(COMMAND.finditer(chunk))
    if not matches:
        return []
    ends = [m.start() for m in matches[1:]] + [len(chunk)]
    for start, end in zip([m.end() for m in matches], ends, strict=True):
        words = chunk[start:end].replace("`", " ").split()
        found.append((words, " ".join(words)))
    return found


def check_command(words: list[str], where: str) -> list[str]:
    """Problems with one mentioned command: an unknown command or flag."""
    line = " ".join(words)
    if not words or words[0].startswith("-"):
        parsers = [cli()]
    elif words[0] not in subparsers(cli()):
        return [f"{where}: unknown command `torch-bench {words[0]}`"]
    else:
        parsers = [subparsers(cli())[words[0]]]
        actions = subparsers(parsers[0])
        if actions and len(words) > 1 and not words[1].startswith("-"):
            named = [a for a in re.split(r"[|\[\]]", words[1]) if a]
            unknown = [a for a in named if a not in actions]
            if unknown and named not in (["ACTION"], ["..."]):
                return [f"{where}: unknown `torch-bench {words[0]} {words[1]}`"]
            parsers = [actions[a] for a in named if a in actions] or parsers
    head, _, after = f" {line} ".partition(" -- ")  # `ab ... -- RUN ARGS`
    problems = [f"{where}: `torch-bench {words[0]}` has no {flag}"
                for flag in FLAG.findall(head)
                if not any(flag in flags_of(p) for p in parsers)]
    run = flags_of(subparsers(cli())["run"])
    problems += [f"{where}: `torch-bench run` has no {flag} (after `--`)"
                 for flag in FLAG.findall(after) if flag not in run]
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_and_flag_named_exists_in_the_cli(page):
    problems = []
    for chunk in code_chunks(page.read_text()):
        for words, _ in commands_in(chunk):
            problems += check_command(words, page.name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_flag_in_code_is_a_flag_of_the_cli_or_of_a_named_tool(page):
    known = every_flag() | OTHER_TOOLS
    unknown = {flag for chunk in code_chunks(page.read_text()) for flag in FLAG.findall(chunk)
               if flag not in known and not SCRIPT.search(chunk)}
    assert not unknown, f"{page.name}: {sorted(unknown)}"


def test_a_made_up_flag_or_command_is_caught():
    assert check_command(["store", "x.json", "--no-such-flag"], "t")
    assert check_command(["frobnicate"], "t")
    assert check_command(["data", "list", "--keep", "3"], "t")  # --keep is prune's
    assert not check_command(["data", "prune", "--keep", "3"], "t")
    assert check_command(["ab", "--rounds", "3", "--", "--suite", "rnns", "--bogus"], "t")
    assert not check_command(["ab", "--rounds", "3", "--", "--suite", "rnns"], "t")


def test_the_cli_page_lists_every_command():
    from torch_bench.cli import COMMANDS

    listed = re.findall(r"^\| `torch-bench (\w+)` \|", (ROOT / "docs" / "cli.md").read_text(),
                        flags=re.M)
    assert sorted(listed) == sorted(c.name for c in COMMANDS)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text, fence, found = page.read_text(), False, set()
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"^#{1,6} (.*)$", line)):
            found.add(slug(m.group(1)))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    broken = []
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(target)
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


def test_every_page_is_linked_from_the_front_page():
    readme = (ROOT / "README.md").read_text()
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in readme or f"(docs/{page.name}#" in readme, page.name


def readme_table(header: str) -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


@pytest.mark.parametrize("folder", ["dashboard", "comment"])
def test_the_sub_actions_inputs_and_outputs_are_documented(folder):
    meta = yaml.safe_load((ROOT / folder / "action.yml").read_text())
    rows = readme_table(f"| {folder} input | default | description |")
    assert [r[0].strip("`") for r in rows] == list(meta["inputs"])
    for name, default, description in rows:
        spec = meta["inputs"][name.strip("`")]
        expected = "(required)" if spec.get("required") else (
            f"`{spec['default']}`" if spec.get("default") else "(empty)")
        assert (default, description) == (expected, spec["description"]), name
    outputs = readme_table(f"| {folder} output | description |")
    assert {r[0].strip("`"): r[1] for r in outputs} == {
        k: v["description"] for k, v in meta["outputs"].items()}


def test_the_front_page_gives_one_command_for_the_demo_and_one_for_the_tests():
    rows = readme_table("| what | command |")
    commands = {row[1].strip("`") for row in rows}
    assert commands == {"./scripts/demo", "./scripts/test"}
    for command in commands:
        assert os.access(ROOT / command, os.X_OK), command
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().splitlines()[-1] == "./scripts/test"


def workflow_blocks(page: Path) -> list[dict]:
    blocks = re.findall(r"```ya?ml\n(.*?)```", page.read_text(), flags=re.S)
    documents = [yaml.safe_load(b) for b in blocks]
    return [d for d in documents if isinstance(d, dict) and "jobs" in d]


def test_the_quick_start_never_runs_a_fork_pr_on_a_self_hosted_runner():
    same = "github.event.pull_request.head.repo.full_name == github.repository"
    workflows = [w for page in PAGES for w in workflow_blocks(page)]
    assert workflows, "the quick start workflow is missing"
    for workflow in workflows:
        events = workflow.get("on", workflow.get(True)) or {}
        for name, job in workflow["jobs"].items():
            condition = " ".join(str(job.get("if", "")).split())
            if "pull_request" in events and "self-hosted" in str(job.get("runs-on")) \
                    and condition != "github.event_name == 'push'":  # pushes only: no PR
                assert same in condition, name
