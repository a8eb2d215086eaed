"""The site a build will be published over, when its files are not at hand (a branch's tip,
fetched without its files: store/publish.py): which files it has, their sizes, and the
content keys its build left (RENDER_KEYS). A group of files whose key there equals the
new one and whose files are all there is carried: not rendered, not written, and listed for
the publish, which takes those files from the tip as they are (writer.py).

Handed to `torch-bench site --previous-site FILE` as one JSON file, the carried paths coming
back in another (`--carried-out FILE`). Anything unreadable reads as no previous site: a
full build, never a wrong one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# What earlier builds learned, so the next build only extends it (render/build.py), and the
# content key of each benchmark's files there, which the publish compares (store/publish.py).
BUILD_CACHE_DIR = ".torch-bench-cache"
RENDER_KEYS = f"{BUILD_CACHE_DIR}/render-keys.json"

SCHEMA = "torch-bench/previous-site"
# 1: {"schema", "keys": {first path of a group: key}, "files": {path: size in bytes}}
VERSION = 1


@dataclass(frozen=True)
class PreviousSite:
    keys: Mapping[str, str]  # the render keys its build left
    files: Mapping[str, int]  # path relative to the site -> size in bytes


def parse_keys(data: bytes) -> dict[str, str]:
    """A render-keys file's keys; empty when it is not a JSON object (nothing matches)."""
    try:
        keys = json.loads(data.decode("utf-8"))
    except ValueError:
        return {}
    if not isinstance(keys, dict):
        return {}
    return {path: key for path, key in keys.items() if isinstance(key, str)}


def encode_previous_site(site: PreviousSite) -> bytes:
    document = {"schema": {"name": SCHEMA, "version": VERSION}, "keys": dict(site.keys),
                "files": dict(site.files)}
    return json.dumps(document, sort_keys=True).encode()


def decode_previous_site(data: bytes) -> PreviousSite | None:
    """None when the document is unreadable or of another version."""
    try:
        document = json.loads(data.decode("utf-8"))
        schema, keys, files = document["schema"], document["keys"], document["files"]
    except (ValueError, KeyError, TypeError):
        return None
    if schema != {"name": SCHEMA, "version": VERSION} or not isinstance(keys, dict) or \
            not isinstance(files, dict):
        return None
    sizes = {path: size for path, size in files.items()
             if isinstance(size, int) and not isinstance(size, bool) and size >= 0}
    if len(sizes) != len(files):
        return None
    return PreviousSite({path: key for path, key in keys.items() if isinstance(key, str)},
                        sizes)


def encode_carried(paths: Iterable[str]) -> bytes:
    return json.dumps(sorted(paths)).encode()


def decode_carried(data: bytes) -> frozenset[str]:
    """The carried paths a build listed; ValueError when that is not a list of paths (the
    publish then cannot tell which files its site has)."""
    paths = json.loads(data.decode("utf-8"))
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("not a list of paths")
    return frozenset(paths)
