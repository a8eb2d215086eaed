"""Strict decoding of the JSON and YAML documents users hand to torch-bench.

One decoder per syntax, shared by every command and importer: the size and the depth of
nesting are checked before parsing, and a key given twice in one object or mapping is an
error (both standard parsers silently keep the last one). Every failure is an
InvalidDocument naming the source.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

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
_ALL_BUT_QUOTES_AND_BRACKETS = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_CURLY_AS_SQUARE = bytes.maketrans(b"{}", b"[]")


def json_too_deep(text: str) -> bool:
    """Whether JSON `text` nests deeper than MAX_JSON_DEPTH, judged before parsing: strings
    removed, only brackets kept (all of one kind), then innermost pairs peeled one level per
    round (each round a C-speed replace, so a shallow document costs a few passes over its
    brackets)."""
    brackets = _NOT_STRUCTURE.sub("", text).replace("{", "[").replace("}", "]")
    return _nests_too_deep(brackets, "[]")


def _quickly_judged_too_deep(text: str) -> bool:
    """json_too_deep's verdict for any document the parser accepts, in byte passes that
    run at C speed: the escapes that hold a backslash or a quote dropped (pairs of
    backslashes first, as a string reads them), then every byte but quotes and brackets,
    then the strings, which now hold nothing but brackets. For a document the parser
    refuses the two may disagree: parse_json asks json_too_deep then."""
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Dropping `""` drops an empty string or joins two: what lies outside strings is kept.
    kept = data.translate(_CURLY_AS_SQUARE, _ALL_BUT_QUOTES_AND_BRACKETS).replace(b'""', b"")
    return _nests_too_deep(b"".join(kept.split(b'"')[::2]), b"[]")


def _nests_too_deep(brackets, pair) -> bool:
    # One kind of bracket, so a round peels exactly one level: `{[]}` would lose two
    # to a round replacing `[]` and then `{}`.
    for _ in range(MAX_JSON_DEPTH):
        peeled = brackets.replace(pair, pair[:0])
        if peeled == brackets:  # empty, or brackets that do not pair: the parser says so
            return False
        brackets = peeled
    return bool(brackets)


def _too_deep(source: str) -> InvalidDocument:
    return InvalidDocument(f"{source}: JSON nested more than {MAX_JSON_DEPTH} levels deep")


def parse_json(text: str | bytes, source: str) -> Any:
    """Decoded JSON; InvalidDocument for every way that can fail: too large, bad syntax, bad
    encoding, a duplicate key, nesting too deep for the parser, an integer too long to read."""
    if len(text) > MAX_JSON_CHARS:
        raise InvalidDocument(f"{source}: more than {MAX_JSON_CHARS >> 20} MiB of JSON; "
                              "documents are read up to that")
    try:
        decoded = text if isinstance(text, str) else text.decode("utf-8")
        if _quickly_judged_too_deep(decoded) and json_too_deep(decoded):
            raise _too_deep(source)
        try:
            return json.loads(text, object_pairs_hook=_unique_object)
        except (ValueError, RecursionError):
            if json_too_deep(decoded):  # the quick verdict holds only for a valid document
                raise _too_deep(source) from None
            raise
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


@functools.cache
def _strict_loader():
    """PyYAML's safe loader, refusing a key given twice in one mapping. Built at the first
    YAML document: the commands that never read one (`comment` among them) need no PyYAML."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
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
                            None, None,
                            f"the key {str(key)[:60]!r} is given twice in one mapping",
                            key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


def _yaml_depth_problem(text: str) -> str | None:
    """Why the document nests too deeply, read from the parser's events (which build
    nothing and do not recurse), or None."""
    import yaml

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
    import yaml

    if len(text) > MAX_YAML_CHARS:
        raise InvalidDocument(f"{source}: more than {MAX_YAML_CHARS >> 20} MiB of YAML; "
                              "configuration files are read up to that")
    try:
        problem = _yaml_depth_problem(text)
        if problem:
            raise InvalidDocument(f"{source}: {problem}")
        return yaml.load(text, Loader=_strict_loader())  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or ""
        detail = f": {problem}" if "given twice" in problem else ""
        raise InvalidDocument(f"{source}: not valid YAML{line}{detail}") from None
    except RecursionError:
        raise InvalidDocument(f"{source}: YAML nested too deeply to read") from None
    except ValueError as exc:  # a value the constructors refuse: 5,000 digits, 2026-13-45
        reason = str(exc).split("; use sys.")[0]
        raise InvalidDocument(f"{source}: not valid YAML: {reason}") from None
