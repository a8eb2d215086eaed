"""Git tree objects, built in Python: the new root tree of a commit that adds files, rewriting
only the trees on the paths to those files. Pure: the caller reads the old trees from git and
writes the new ones (their ids are computed here, as git computes them)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import PurePosixPath

FILE_MODE = b"100644"
TREE_MODE = b"40000"

Entries = dict[bytes, tuple[bytes, bytes]]  # name -> (mode, 20-byte object id)


def parse_tree(content: bytes) -> Entries:
    entries: Entries = {}
    position = 0
    while position < len(content):
        space = content.index(b" ", position)
        nul = content.index(b"\0", space)
        entries[content[space + 1:nul]] = (content[position:space], content[nul + 1:nul + 21])
        position = nul + 21
    return entries


def encode_tree(entries: Entries) -> bytes:
    """Entries in git's order: names compared as bytes, a directory as if ending in '/'."""
    def key(name: bytes) -> bytes:
        return name + b"/" if entries[name][0] == TREE_MODE else name
    return b"".join(entries[name][0] + b" " + name + b"\0" + entries[name][1]
                    for name in sorted(entries, key=key))


def object_id(kind: bytes, content: bytes) -> bytes:
    return hashlib.sha1(kind + b" %d\0" % len(content) + content).digest()


def directories_of(paths: list[str]) -> list[str]:
    """Every directory on the way to `paths`, root ("") included, deepest first."""
    found = {""}
    for path in paths:
        found.update(str(parent) for parent in PurePosixPath(path).parents if str(parent) != ".")
    return sorted(found, key=lambda d: (-(d.count("/") + 1 if d else 0), d))


def add_files(old: Mapping[str, Entries], files: Mapping[str, str]
              ) -> tuple[str, dict[str, bytes], set[str]]:
    """The new root tree id, the new tree objects (hex id -> content), and which of `files`
    (path -> blob hex id) were already present, and so not added. `old` holds the current
    entries of every directory on the way (empty for directories that do not exist yet)."""
    trees = {directory: dict(old.get(directory, {})) for directory in directories_of([*files])}
    present = set()
    for path, blob in files.items():
        parent, name = _split(path)
        if name in trees[parent]:
            present.add(path)
        else:
            trees[parent][name] = (FILE_MODE, bytes.fromhex(blob))
    written: dict[str, bytes] = {}
    for directory in directories_of([*files]):
        content = encode_tree(trees[directory])
        oid = object_id(b"tree", content)
        written[oid.hex()] = content
        if directory:
            parent, name = _split(directory)
            trees[parent][name] = (TREE_MODE, oid)
    root = object_id(b"tree", encode_tree(trees[""])).hex()
    return root, written, present


def _split(path: str) -> tuple[str, bytes]:
    parent, _, name = path.rpartition("/")
    return parent, name.encode()
