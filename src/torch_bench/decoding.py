"""Strict decoding of the JSON and YAML documents users hand to torch-bench.

One decoder per syntax, shared by every command and importer: the size and the depth of
nesting are checked before parsing, and a key given twice in one object or mapping is an
error (both standard parsers silently keep the last one). Every failure is an
InvalidDocument naming the source.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from torch_bench.errors import InvalidDocument

MAX_JSON_CHARS = 512 << 20  # a run document with every sample kept stays far below this
MAX_JSON_DEPTH = 100  # a run document nests 4 levels, other tools' files under 10
MAX_YAML_CHARS = 4 << 20  # configuration files: a few kilobytes in practice
MAX_YAML_DEPTH = 64  # a configuration nests 3 or 4 levels


class DuplicateKey(ValueError):
    def __init__(self, key: object) -> None:
        super().__init__(f"the key {str(key)[:60]!r} is given twice in one object")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj


# one pass: a string (whatever brackets it holds) or a run of anything but brackets
_NOT_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\[\]{}"]+')


def json_too_deep(text: str) -> bool:
    """Whether JSON `text` nests deeper than MAX_JSON_DEPTH, judged before parsing: strings
    removed, only brackets kept, then innermost pairs peeled one level per round (each round
    a C-speed replace, so a shallow document costs a few passes over its brackets)."""
    brackets = _NOT_STRUCTURE.sub("", text)
    for _ in range(MAX_JSON_DEPTH):
        peeled = brackets.replace("[]", "").replace("{}", "")
        if peeled == brackets:  # empty, or brackets that do not pair: the parser says so
            return False
        brackets = peeled
    return bool(brackets)


def parse_json(text: str | bytes, source: str) -> Any:
    """Decoded JSON; InvalidDocument for every way that can fail: too large, bad syntax, bad
    encoding, a duplicate key, nesting too deep for the parser, an integer too long to read."""
    if len(text) > MAX_JSON_CHARS:
        raise InvalidDocument(f"{source}: more than {MAX_JSON_CHARS >> 20} MiB of JSON; "
                              "documents are read up to that")
    try:
        if json_too_deep(text if isinstance(text, str) else text.decode("utf-8")):
            raise InvalidDocument(f"{source}: JSON nested more than {MAX_JSON_DEPTH} levels "
                                  "deep")
        return json.loads(text, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        raise InvalidDocument(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") \
            from None
    except DuplicateKey as exc:
        raise InvalidDocument(f"{source}: {exc}") from None
    except UnicodeDecodeError:
        raise InvalidDocument(f"{source}: not UTF-8 text") from None
    except RecursionError:
        raise InvalidDocument(f"{source}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise InvalidDocument(f"{source}: not readable JSON ({exc})") from None


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: the base class says so
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {str(key)[:60]!r} is given twice in one mapping",
                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _yaml_depth_problem(text: str) -> str | None:
    """Why the document nests too deeply, read from the parser's events (which build
    nothing and do not recurse), or None."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return f"nested more than {MAX_YAML_DEPTH} levels deep (line " \
                       f"{event.start_mark.line + 1})"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


def parse_yaml(text: str, source: str) -> Any:
    """The decoded YAML document (None when empty); InvalidDocument naming `source` for a
    document too large or too deep, bad syntax, or a duplicate key."""
    if len(text) > MAX_YAML_CHARS:
        raise InvalidDocument(f"{source}: more than {MAX_YAML_CHARS >> 20} MiB of YAML; "
                              "configuration files are read up to that")
    try:
        problem = _yaml_depth_problem(text)
        if problem:
            raise InvalidDocument(f"{source}: {problem}")
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or ""
        detail = f": {problem}" if "given twice" in problem else ""
        raise InvalidDocument(f"{source}: not valid YAML{line}{detail}") from None
    except RecursionError:
        raise InvalidDocument(f"{source}: YAML nested too deeply to read") from None
