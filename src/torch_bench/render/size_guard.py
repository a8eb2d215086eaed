"""The published size of a site against the limit of its host: GitHub Pages refuses a site
over 1 GB. A build over the limit fails before anything replaces the previous site (so
nothing is published or pushed); one over WARN_SHARE of it warns, while there is room to act.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from torch_bench.errors import UserError

PAGES_LIMIT = 1_000_000_000  # bytes: GitHub Pages' limit on a published site
WARN_SHARE = 0.6
ADVICE = ("shorten the history it is built from: `torch-bench data prune --keep N` (the "
          "newest N results of every benchmark) or `torch-bench data prune --before DATE`, "
          "or build only one repository's runs (--repository)")


@dataclass(frozen=True)
class SizeLimit:
    limit: int = PAGES_LIMIT
    warn: Callable[[str], None] = lambda message: None


def folder_size(root: Path) -> tuple[int, int]:
    """(bytes, files) of every file under `root`; a hard link counts as the file it is."""
    size = files = 0
    for folder, _, names in os.walk(root):
        for name in names:
            size += os.lstat(os.path.join(folder, name)).st_size
            files += 1
    return size, files


def megabytes(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def check_size(size: int, files: int, limit: SizeLimit, where: str) -> None:
    """Raise UserError when `size` is over the limit; warn when it comes near."""
    if size > limit.limit:
        raise UserError(f"{where}: the site would be {megabytes(size)} in {files:,} files, "
                        f"over the {megabytes(limit.limit)} a GitHub Pages site may have; "
                        f"nothing was written. To fit, {ADVICE}")
    if size > WARN_SHARE * limit.limit:
        limit.warn(f"{where}: the site is {megabytes(size)} in {files:,} files, "
                   f"{size / limit.limit:.0%} of the {megabytes(limit.limit)} a GitHub Pages "
                   f"site may have; before it is refused, {ADVICE}")
