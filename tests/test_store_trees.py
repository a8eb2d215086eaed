"""Tree objects built in Python must be exactly the ones git builds."""

from __future__ import annotations

import subprocess

from torch_bench.store.trees import add_files, parse_tree


def git(*args, cwd, input=None):
    return subprocess.run(["git", *args], cwd=cwd, input=input, check=True,
                          capture_output=True).stdout


def test_new_trees_match_gits_own_for_awkward_names(tmp_path):
    git("init", "-q", ".", cwd=tmp_path)
    blob = git("hash-object", "-w", "--stdin", cwd=tmp_path, input=b"x").decode().strip()
    first = {"d/a.b": blob, "d/a/x": blob, "d/a-b": blob, "top": blob}
    second = {"d/a/y": blob, "d/a0": blob, "e/new": blob, "top": blob}
    root, trees, present = add_files({}, first)
    assert present == set()
    _write(tmp_path, trees)
    old = {d: parse_tree(git("cat-file", "tree", f"{root}:{d}" if d else root, cwd=tmp_path))
           for d in ("", "d", "d/a")}
    root2, trees2, present2 = add_files(old, second)
    _write(tmp_path, trees2)
    assert present2 == {"top"}
    index = {"GIT_INDEX_FILE": str(tmp_path / "idx")}
    for path in sorted({*first, *second}):
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"],
                       cwd=tmp_path, check=True, env={**index, "PATH": "/usr/bin:/bin"})
    expected = subprocess.run(["git", "write-tree"], cwd=tmp_path, check=True, text=True,
                              capture_output=True, env={**index, "PATH": "/usr/bin:/bin"})
    assert root2 == expected.stdout.strip()


def _write(repo, trees) -> None:
    for oid, content in trees.items():
        written = git("hash-object", "-w", "-t", "tree", "--stdin", cwd=repo, input=content)
        assert written.decode().strip() == oid
