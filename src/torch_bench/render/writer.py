"""Writing a planned site to disk: templates rendered with Jinja2 (autoescaping on), data
files as compact JSON, the static assets and the vendored partial Plotly bundle
(static/vendor/README.md says which one). The site is built in a temporary folder beside
the target and moved into place, so a failed build leaves the previous site untouched."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from torch_bench.errors import UserError
from torch_bench.render import paths
from torch_bench.render.escape import json_for_html
from torch_bench.render.plan import SitePlan

STATIC_FILES = ("style.css", "dashboard.js")
SITE_MARKER = ".torch-bench-site"  # only folders carrying it are replaced by a build


def template_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("torch_bench.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["json_for_html"] = lambda data: markupsafe.Markup(json_for_html(data))
    return env


VENDORED_PLOTLY = "vendor/plotly-basic.min.js"  # inside static/, copied to paths.PLOTLY_FILE


def plotly_js() -> bytes:
    """The partial Plotly bundle the pages load (scatter traces; see static/vendor/)."""
    return (resources.files("torch_bench.render") / "static" / VENDORED_PLOTLY).read_bytes()


def _write(root: Path, relative: str, text: str) -> None:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8", newline="\n")


def write_site(plan: SitePlan, extra_data: Iterable[tuple[str, Any]], out: str | os.PathLike,
               progress: Callable[[str], None] = lambda message: None,
               keep: Iterable[str] = ()) -> Path:
    """Write the site to `out`, replacing a site there. `keep`: top-level names inside `out`
    that are not the site's (say the data folder) and are carried over untouched."""
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
    try:
        _fill(staging, plan, extra_data, progress)
        _swap(staging, target, keep)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _fill(root: Path, plan: SitePlan, extra_data: Iterable[tuple[str, Any]],
          progress: Callable[[str], None]) -> None:
    env = template_environment()
    for page in plan.pages:
        _write(root, page.path, env.get_template(page.template).render(**page.context))
    progress(f"{len(plan.pages)} pages")
    count = 0
    for relative, payload in [*plan.data_files, *extra_data]:
        _write(root, relative, json.dumps(payload, separators=(",", ":"), allow_nan=False))
        count += 1
    progress(f"{count} data files")
    static = root / paths.STATIC_DIR
    static.mkdir(parents=True, exist_ok=True)
    assets = resources.files("torch_bench.render") / "static"
    for name in STATIC_FILES:
        (static / name).write_bytes((assets / name).read_bytes())
    (root / paths.PLOTLY_FILE).write_bytes(plotly_js())
    (root / ".nojekyll").write_text("")  # GitHub Pages: serve folders as they are
    (root / SITE_MARKER).write_text("built by torch-bench site\n")


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
