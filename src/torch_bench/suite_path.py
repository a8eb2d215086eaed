"""Where a repository's own suites are imported from (the Action's `suite-path` input).

`TORCH_BENCH_SUITE_PATH` holds folders relative to a checkout, separated by commas. Every
process that imports and measures suites from a checkout (a run, an A/B side, a confirming or
bisecting round, an explain worker) puts those folders of *its* checkout first on PYTHONPATH,
so that the base's worktree imports the base's suites and the head's the head's. The variable
is never read by the process that holds a token: only the environment of its children carries
the folders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

VARIABLE = "TORCH_BENCH_SUITE_PATH"


def parse_suite_path(text: str) -> tuple[str, ...]:
    """The folders of `text` (comma-separated, relative to the checkout, `.` its root),
    normalised; ValueError names the first one that is absolute or leaves the checkout."""
    folders = []
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        path = PurePosixPath(entry.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or (path.parts[:1] and ":" in path.parts[0]):
            raise ValueError(f"{entry!r}: expected a folder of the repository, relative to "
                             "its root, without '..' (e.g. '.', 'src' or 'benchmarks')")
        folders.append(str(path))
    return tuple(dict.fromkeys(folders))


def checkout_paths(checkout: Path, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The `TORCH_BENCH_SUITE_PATH` folders of `checkout` that exist, as absolute paths."""
    try:
        folders = parse_suite_path(environ.get(VARIABLE, ""))
    except ValueError:
        return []  # the Action validated it; a hand-set bad value adds nothing
    return [str((checkout / folder).resolve()) for folder in folders
            if (checkout / folder).is_dir()]
