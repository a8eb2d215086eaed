"""Which files of the data branch a dashboard publish may change. Pure: no git calls.

The publish owns only the files it wrote, listed in a manifest it keeps beside them
(`<site folder>/.torch-bench-site.json`). Everything else on the branch (a `CNAME`, `docs/`,
the owner's own `index.html`, the data folder) is left as it is: files of the previous
dashboard that the new one no longer has are removed, new ones added, and a new file that
would overwrite one the publish does not own stops the publish with a message saying so.

The manifest also gives each file's size, so that a publish can build only what changed since
the site at the tip and take the rest from there unread (`tip_site`; store/previous_site.py)
while its size guard still counts the whole site.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from torch_bench.errors import UserError
from torch_bench.store.previous_site import BUILD_CACHE_DIR, RENDER_KEYS, PreviousSite, parse_keys

MANIFEST = ".torch-bench-site.json"
MANIFEST_NAME = "torch-bench/site-files"
# 1: {"schema", "files": [path, ...]}
# 2: and "sizes": {path: bytes}. "files" stays a list, so that an older torch-bench still
#    reads which files are its own.
MANIFEST_VERSION = 2
# Dashboards published before the manifest existed are recognised by their footer, so their
# files can be replaced once; from then on the manifest says what is ours.
_LEGACY_FOOTER = re.compile(rb"built by <code>torch-bench site</code>")

Entry = tuple[str, str]  # (git mode, object id)


class ForeignFiles(UserError):
    """The dashboard would overwrite files on the data branch that it did not write."""


@dataclass(frozen=True)
class SiteChange:
    writes: dict[str, Entry]  # path on the branch -> (mode, oid) to put there
    removals: tuple[str, ...]  # paths of the previous dashboard the new one does not have


def site_path(site_folder: str, relative: str) -> str:
    return relative if site_folder in ("", ".") else f"{site_folder}/{relative}"


def normalise_site_folder(text: str) -> str:
    """`.` (the branch root) or a relative folder without `..`."""
    parts = [p for p in text.strip().strip("/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UserError(f"--site-folder: {text!r} must stay inside the branch (no '..')")
    return "/".join(parts) or "."


@dataclass(frozen=True)
class TipSite:
    """The dashboard at a branch's tip, read without its files: what a build is told of it
    (`as_previous`) and where each of its files is (path relative to the site folder ->
    (mode, oid)), for the files the new site carries from it."""

    as_previous: PreviousSite
    entries: Mapping[str, Entry]


def is_published(relative: str) -> bool:
    """Whether a file the build wrote goes on the branch: all of the site, and of its build
    cache only the render keys, which the next publish builds from (the history rows and the
    change-point memo stay with whoever built it)."""
    return relative == RENDER_KEYS or not relative.startswith(f"{BUILD_CACHE_DIR}/")


def encode_manifest(sizes: Mapping[str, int]) -> bytes:
    """The manifest of a site whose files (relative to the site folder) have these sizes."""
    document = {"schema": {"name": MANIFEST_NAME, "version": MANIFEST_VERSION},
                "files": sorted(sizes), "sizes": dict(sorted(sizes.items()))}
    return (json.dumps(document, indent=1) + "\n").encode()


def decode_sizes(data: bytes) -> dict[str, int] | None:
    """The sizes a manifest gives; None when it gives none (version 1) or is unreadable."""
    try:
        sizes = json.loads(data.decode("utf-8")).get("sizes")
    except (ValueError, AttributeError):
        return None
    if not isinstance(sizes, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes.values()):
        return None
    return sizes


def tip_site(tip: Mapping[str, Entry], site_folder: str, manifest: bytes | None,
             keys: bytes | None) -> TipSite | None:
    """The dashboard a branch's files (`tip`, full paths) hold, given its manifest and
    render-keys file (None: not there): the files its manifest lists that are there. None
    when it cannot be trusted to carry anything (no manifest or keys, unreadable ones, no
    sizes): the publish then builds every file."""
    sizes = decode_sizes(manifest) if manifest is not None else None
    owned = decode_manifest(manifest) if manifest is not None else set()
    found = parse_keys(keys) if keys is not None and RENDER_KEYS in owned else {}
    if sizes is None or not found:
        return None
    entries = {path: tip[site_path(site_folder, path)] for path in owned
               if site_path(site_folder, path) in tip and path in sizes}
    return TipSite(PreviousSite(found, {path: sizes[path] for path in entries}), entries)


def decode_manifest(data: bytes) -> set[str]:
    """Paths (relative to the site folder) listed by a manifest; empty when unreadable, so a
    damaged manifest only makes the publish more careful, never less."""
    try:
        files = json.loads(data.decode("utf-8")).get("files")
    except (ValueError, AttributeError):
        return set()
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def is_legacy_dashboard(index_html: bytes | None) -> bool:
    return index_html is not None and bool(_LEGACY_FOOTER.search(index_html))


def _inside(path: str, folder: str) -> bool:
    return bool(folder) and folder != "." and (path == folder or path.startswith(folder + "/"))


def plan_site_change(tip: Mapping[str, Entry], site: Mapping[str, Entry], site_folder: str,
                     data_folder: str, owned: set[str], legacy: bool = False) -> SiteChange:
    """The writes and removals that replace the previous dashboard by `site` (paths relative
    to the site folder) on a branch whose files are `tip` (full paths). `owned` are the
    previous manifest's paths; with `legacy`, files the new site rewrites count as owned."""
    if _inside(site_folder, data_folder):
        raise UserError(f"--site-folder {site_folder!r} is inside the data folder "
                        f"{data_folder!r}; choose a folder beside it")
    writes = {site_path(site_folder, path): entry for path, entry in site.items()}
    owned_full = {site_path(site_folder, path) for path in owned}
    if legacy:
        owned_full |= {path for path in writes if path in tip}
    in_data = sorted(path for path in writes if _inside(path, data_folder))
    if in_data:
        raise UserError(f"the dashboard has {in_data[0]!r}, inside the data folder "
                        f"{data_folder!r}; choose another --site-folder or --folder")
    folders = _folders_of(tip)
    foreign = sorted(path for path in writes
                     if _clashes(path, tip, folders, owned_full) and tip.get(path) != writes[path])
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                          else "")
        where = "the branch root" if site_folder == "." else f"folder {site_folder!r}"
        raise ForeignFiles(
            f"publishing the dashboard at {where} would overwrite {shown}, which torch-bench "
            f"did not write; nothing was changed. Publish it into a sub-folder instead "
            f"(Action input site-folder, e.g. 'dashboard'; CLI --site-folder)")
    removals = tuple(sorted(path for path in owned_full
                            if path in tip and path not in writes
                            and not _inside(path, data_folder)))
    return SiteChange(writes, removals)


def files_outside(tip: Iterable[str], owned: set[str], site_folder: str) -> list[str]:
    """The files of a branch (full paths) that its dashboard's manifest in `site_folder`
    does not list (`owned`: the manifest's paths, relative to the site folder), the manifest
    itself aside: what replacing the branch by a new dashboard alone would delete."""
    listed = {site_path(site_folder, path) for path in owned | {MANIFEST}}
    return sorted(path for path in tip if path not in listed)


def _folders_of(tip: Mapping[str, Entry]) -> set[str]:
    return {str(parent) for path in tip for parent in PurePosixPath(path).parents}


def _clashes(path: str, tip: Mapping[str, Entry], folders: set[str], owned: set[str]) -> bool:
    """The path is a file we do not own, lies under one, or is a folder on the branch (a
    file cannot replace a folder)."""
    if path in tip:
        return path not in owned
    if path in folders:
        return True
    return any(str(parent) in tip and str(parent) not in owned
               for parent in PurePosixPath(path).parents)
