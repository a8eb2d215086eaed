"""Writing a planned site to disk: templates rendered with Jinja2 (autoescaping on), data
files as compact JSON or packed bytes (packs.py), every text with the secrets the tool knows
of masked and every file through the safe writer (fileio), the static assets and the
vendored partial Plotly bundle (static/vendor/README.md says which one). The site is built
in a temporary folder beside the target and moved into place, so a failed build leaves the
previous site untouched.

Rebuilding over an existing site never rewrites a file whose bytes did not change: the new
folder gets a hard link to the old file instead (same inode, same mtime), and a benchmark
whose content key (content_key.py) equals the previous build's is not even rendered. The
keys are kept in the site's build cache (paths.RENDER_KEYS). The others are rendered by
one process per core (workers.py). Built to be published over a site whose files are not at
hand (`onto`: previous_site.py), the groups unchanged there are carried instead: neither
rendered nor written, only listed.

A site over its size limit (size_guard.py) fails the build before it replaces anything."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from torch_bench.errors import UserError
from torch_bench.fileio import write_staged
from torch_bench.redact import scrub
from torch_bench.render import paths
from torch_bench.render.escape import breakable, json_for_html
from torch_bench.render.packs import json_bytes
from torch_bench.render.plan import KeyedGroup, Outputs, SitePlan
from torch_bench.render.size_guard import SizeLimit, check_size, folder_size
from torch_bench.render.workers import default_jobs, run_shared
from torch_bench.store.previous_site import PreviousSite, parse_keys

STATIC_FILES = ("style.css", "dashboard.js")
RUN_CELLS_KEPT = 4096  # runs whose table cells are remembered while the pages are rendered
SITE_MARKER = ".torch-bench-site"  # only folders carrying it are replaced by a build


def template_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("torch_bench.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # templates ship with the package: no stat of each per page
    )
    env.filters["json_for_html"] = lambda data: markupsafe.Markup(json_for_html(data))
    env.filters["breakable"] = breakable
    # A run's cells in the benchmark pages' tables: rendered once per run and environment,
    # not once per page (a thousand pages show the same newest runs).
    env.globals["point_run_cells"] = functools.lru_cache(maxsize=RUN_CELLS_KEPT)(
        lambda run: env.get_template("macros.html").module.point_run(run))  # type: ignore
    return env


VENDORED_PLOTLY = "vendor/plotly-basic.min.js"  # inside static/, copied to paths.PLOTLY_FILE


def plotly_js() -> bytes:
    """The partial Plotly bundle the pages load (scatter traces; see static/vendor/)."""
    return (resources.files("torch_bench.render") / "static" / VENDORED_PLOTLY).read_bytes()


class SiteFiles:
    """Puts files into a new site folder, keeping the previous site's unchanged files; with
    `onto`, the site it will be published over, unchanged groups are left there (carried)."""

    def __init__(self, root: Path, previous: Path | None,
                 onto: PreviousSite | None = None) -> None:
        self.root = root
        self.previous = previous
        self.onto = onto
        self.kept = 0  # files carried over from the previous site
        self.written = 0
        self.carried: list[str] = []  # files of `onto` left as they are there
        self._folders: set[Path] = set()  # made already

    def put(self, relative: str, content: bytes) -> None:
        target = self.root / relative
        self._make_folder(target.parent)
        if self.previous is not None and _same_bytes(self.previous / relative, content):
            target.unlink(missing_ok=True)
            if self._link(relative):
                return
        write_staged(target, content)  # never through a link into the previous site
        self.written += 1

    def keep(self, relative: str) -> bool:
        """Carry the previous site's file over untouched; False when it is not there."""
        self._make_folder((self.root / relative).parent)
        return self._link(relative)

    def carry(self, relatives: tuple[str, ...]) -> bool:
        """Leave files of `onto` as they are there; False when any is not there."""
        assert self.onto is not None
        if not all(relative in self.onto.files for relative in relatives):
            return False
        self.carried.extend(relatives)
        self.kept += len(relatives)
        return True

    def carried_size(self) -> tuple[int, int]:
        """(bytes, files) of the carried files, as the site at `onto` has them."""
        sizes = self.onto.files if self.onto is not None else {}
        return sum(sizes[relative] for relative in self.carried), len(self.carried)

    def _make_folder(self, folder: Path) -> None:
        if folder not in self._folders:
            folder.mkdir(parents=True, exist_ok=True)
            self._folders.add(folder)

    def _link(self, relative: str) -> bool:
        assert self.previous is not None
        try:
            os.link(self.previous / relative, self.root / relative)
        except OSError:  # gone, or a file system without hard links: write it instead
            return False
        self.kept += 1
        return True


def _same_bytes(path: Path, content: bytes) -> bool:
    try:
        return path.stat().st_size == len(content) and path.read_bytes() == content
    except OSError:
        return False


def _encoded(payload: Any) -> bytes:
    """A data file's bytes: packed files come as bytes, the others as JSON payloads."""
    return payload if isinstance(payload, bytes) else json_bytes(payload)


def write_site(plan: SitePlan, extra_data: Iterable[tuple[str, Any]], out: str | os.PathLike,
               progress: Callable[[str], None] = lambda message: None,
               keep: Iterable[str] = (), moved: Mapping[str, Path] | None = None,
               carried: Iterable[str] = (), size_limit: SizeLimit | None = None,
               jobs: int | None = None, onto: PreviousSite | None = None,
               on_carried: Callable[[list[str]], None] = lambda paths: None) -> Path:
    """Write the site to `out`, replacing a site there. `keep`: top-level names inside `out`
    that are not the site's (say the data folder) and are carried over untouched. `moved`:
    files made elsewhere (site path -> file, moved in); `carried`: the previous site's files
    that stay as they are (the build cache when it did not change). A site larger than
    `size_limit` (default: GitHub Pages') is refused, the previous one left in place. The
    changed benchmarks, chunks and run tables are made by `jobs` processes (workers.py;
    default: one per core). `onto`: the site this one will be published over, whose
    unchanged groups are left out and given to `on_carried` (counted in the size)."""
    target = Path(out)
    keep = tuple(keep)
    clash = sorted(set(keep) & paths.SITE_NAMES)
    if clash:
        raise UserError(f"{target / clash[0]}: the site writes this path itself; keep the "
                        f"data folder elsewhere")
    if target.exists() and not (target / SITE_MARKER).exists() and any(
            entry.name not in keep for entry in target.iterdir()):
        raise UserError(f"{target}: exists and is not a torch-bench site; choose an empty "
                        f"or new folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    previous = target if (target / SITE_MARKER).is_file() else None
    try:
        files = SiteFiles(staging, previous, onto)
        _fill(files, plan, extra_data, progress, jobs or default_jobs())
        for relative, source in (moved or {}).items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, staging / relative)
        if previous is not None:
            for relative in carried:
                files.keep(relative)
        size, count = folder_size(staging)
        carried_bytes, carried_count = files.carried_size()
        check_size(size + carried_bytes, count + carried_count, size_limit or SizeLimit(),
                   str(target))
        _swap(staging, target, keep)
        on_carried(files.carried)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _fill(files: SiteFiles, plan: SitePlan, extra_data: Iterable[tuple[str, Any]],
          progress: Callable[[str], None], jobs: int) -> None:
    env = template_environment()
    # Jinja's own cache still costs a lookup and globals handling per call (0.25 ms, profiled
    # at a thousand pages); the few templates a build uses are looked up once, and compiled
    # before the workers fork (each would otherwise compile them again: 0.1 s apiece).
    templates = {name: env.get_template(name) for name in env.list_templates()}
    templates["macros.html"].module  # noqa: B018 (made once, shared by the workers)

    def make(outputs_of: Callable[[], Outputs]) -> None:
        outputs = outputs_of()
        for planned in outputs.pages:
            html = templates[planned.template].render(**planned.context)
            files.put(planned.path, scrub(html).encode("utf-8"))
        for relative, payload in outputs.data_files:
            files.put(relative, _encoded(payload))

    previous_keys = files.onto.keys if files.onto is not None else _read_keys(files.previous)
    changed = [group for group in plan.groups
               if previous_keys.get(group.paths[0]) != group.key or not _keep_all(files, group)]
    work = [*(functools.partial(Outputs, (planned,), ()) for planned in plan.pages),
            *(functools.partial(Outputs, (), (data,)) for data in [*plan.data_files,
                                                                    *extra_data]),
            *(group.make for group in changed)]
    written, kept = files.written, files.kept
    for counts in run_shared(work, make, lambda: {"written": files.written - written,
                                                   "kept": files.kept - kept}, jobs):
        files.written += counts["written"]
        files.kept += counts["kept"]
    files.put(paths.RENDER_KEYS, json_bytes({g.paths[0]: g.key for g in plan.groups}))
    progress(f"{len(plan.pages)} pages; {len(plan.groups)} file groups (benchmarks, history "
             f"chunks, runs), {len(plan.groups) - len(changed)} unchanged since the previous "
             f"build")
    assets = resources.files("torch_bench.render") / "static"
    for name in STATIC_FILES:
        files.put(f"{paths.STATIC_DIR}/{name}", (assets / name).read_bytes())
    files.put(paths.PLOTLY_FILE, plotly_js())
    files.put(".nojekyll", b"")  # GitHub Pages: serve folders as they are
    files.put(SITE_MARKER, b"built by torch-bench site\n")
    progress(f"{files.written} files written, {files.kept} kept unchanged")


def _keep_all(files: SiteFiles, group: KeyedGroup) -> bool:
    if files.onto is not None:
        return files.carry(group.paths)
    return all(files.keep(relative) for relative in group.paths)


def _read_keys(site: Path | None) -> dict[str, str]:
    """The content keys the previous build left; empty when missing or unreadable."""
    if site is None:
        return {}
    try:
        return parse_keys((site / paths.RENDER_KEYS).read_bytes())
    except OSError:
        return {}


def _swap(staging: Path, target: Path, keep: tuple[str, ...]) -> None:
    """Move the kept folders into the new site, then the new site into place; on failure
    everything goes back where it was."""
    if not target.exists():
        staging.rename(target)
        return
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    moved: list[str] = []
    swapped = False
    try:
        for name in keep:
            if (target / name).exists():
                (target / name).rename(staging / name)
                moved.append(name)
        target.rename(old)
        swapped = True
        staging.rename(target)
    except BaseException:
        if swapped and not target.exists():
            old.rename(target)
        for name in moved:
            (staging / name).rename(target / name)
        raise
    shutil.rmtree(old, ignore_errors=True)
