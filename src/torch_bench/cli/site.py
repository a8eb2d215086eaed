"""`torch-bench site`: build the static dashboard from a data folder."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from torch_bench.boundary import number, repository_name
from torch_bench.errors import UserError
from torch_bench.fileio import write_bytes_atomic
from torch_bench.render.build import CHANGE_POINT_WINDOW, build_site_from_data
from torch_bench.render.history_cache import cached_keys
from torch_bench.render.paths import BUILD_CACHE_DIR, RUNS_INDEX
from torch_bench.render.size_guard import PAGES_LIMIT, WARN_SHARE, SizeLimit
from torch_bench.store.access import credentials_for, default_remote
from torch_bench.store.layout import DATA_FOLDER
from torch_bench.store.previous_site import (
    PreviousSite,
    decode_carried,
    decode_previous_site,
    encode_carried,
    encode_previous_site,
)
from torch_bench.store.publish import BuiltSite
from torch_bench.store.reader import RunFilter
from torch_bench.store.remote import Target
from torch_bench.store.retry import display_url
from torch_bench.store.site_branch import publish_dashboard


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "site",
        help="build the static dashboard (HTML, CSS, JS and JSON data) from a data folder",
        description="Build the dashboard: an overview, one page per suite and per benchmark, "
                    "training loss curves and a run comparison, with per-benchmark JSON data "
                    "files fetched on demand. The output is static: serve it with GitHub Pages "
                    "or any web server (browsers do not fetch data files from file:// URLs).",
        epilog="example: torch-bench site --data ./bench-data --out ./public",
    )
    parser.add_argument("--data", metavar="FOLDER",
                        help="data folder (runs/<YYYY>/<MM>/<run_id>.json)")
    parser.add_argument("--out", required=True, metavar="FOLDER",
                        help="where to write the site; an existing site there is replaced "
                             "(with --publish: by the files that changed since the site on the "
                             "branch, the others being taken from there)")
    publishing = parser.add_argument_group(
        "publishing on the data branch (instead of --data)",
        "build from the data branch's history and commit the site to that branch; only "
        "files an earlier publish wrote are ever replaced")
    publishing.add_argument("--publish", action="store_true",
                            help="read the data from the branch and publish the site there")
    publishing.add_argument("--remote", metavar="URL|PATH",
                            help="git remote of the data branch (default: as for store)")
    publishing.add_argument("--branch", default="gh-pages", help="data branch (default gh-pages)")
    publishing.add_argument("--folder", default=DATA_FOLDER,
                            help=f"data folder inside the branch (default {DATA_FOLDER}, as "
                                 "the Action's data-folder)")
    publishing.add_argument("--site-folder", default=".", metavar="FOLDER",
                            help="folder of the branch the site goes in (default: its root)")
    publishing.add_argument("--site-branch", metavar="BRANCH",
                            help="publish the site on this branch instead, as one commit that "
                                 "replaces the branch each time so its history never grows; "
                                 "the data branch is only read (docs/data-branch.md)")
    publishing.add_argument("--token-env", default="GITHUB_TOKEN", metavar="NAME",
                            help="environment variable holding the token for HTTPS remotes")
    parser.add_argument("--baseline-branch", metavar="BRANCH",
                        help="branch the 'vs baseline' columns compare with "
                             "(default: main, else master, else the busiest branch)")
    parser.add_argument("--change-point-window", type=number(0, 1_000_000, integer=True),
                        default=CHANGE_POINT_WINDOW,
                        metavar="N",
                        help=f"search change points in the newest N baseline-branch runs of "
                             f"each benchmark (default {CHANGE_POINT_WINDOW}: the whole "
                             f"history, extending what the previous build into --out found)")
    parser.add_argument("--repository", metavar="OWNER/NAME", type=repository_name,
                        help="only runs of this repository")
    parser.add_argument("--cache", metavar="FOLDER",
                        help="keep the build cache (the rows read from the data folder, the "
                             "change points found) in FOLDER instead of inside --out, so a "
                             "build into a fresh --out (a CI job) still reads only new data "
                             "files; created when missing")
    parser.add_argument("--size-limit", type=number(0.001, 1_000_000),
                        default=PAGES_LIMIT // 1_000_000, metavar="MB",
                        help=f"refuse to write (or publish) a site larger than this (default "
                             f"{PAGES_LIMIT // 1_000_000}: GitHub Pages' limit); warns from "
                             f"{WARN_SHARE * 100:.0f}%% of it")
    parser.add_argument("--jobs", type=number(1, 1024, integer=True), metavar="N",
                        help="processes rendering the pages (default: one per core)")
    parser.add_argument("--previous-site", metavar="FILE",
                        help="the site this one will be published over, its files not at hand "
                             "(JSON: their sizes and the render keys its build left; what "
                             "--publish writes): files unchanged there are not written, only "
                             "listed in --carried-out. Unreadable: a full build")
    parser.add_argument("--carried-out", metavar="FILE",
                        help="with --previous-site: where to list (JSON) the files of that "
                             "site the new one keeps as they are there")
    parser.set_defaults(handler=handle)


def data_inside(data: Path, out: Path) -> tuple[str, ...]:
    """The top-level name of the data folder when it lies inside the output folder (it is
    then carried over, never replaced)."""
    data, out = data.resolve(), out.resolve()
    if data == out:
        raise UserError(f"--out {out}: is the data folder; write the site elsewhere "
                        f"(or around it: --data SITE/data --out SITE)")
    if out in data.parents:
        return (data.relative_to(out).parts[0],)
    return ()


def handle(args: argparse.Namespace) -> int:
    if args.publish:
        return handle_publish(args)
    if not args.data:
        raise UserError("site: say where the data is with --data FOLDER (or use --publish)")
    started = time.perf_counter()
    for flag, folder in (("--out", args.out), ("--cache", getattr(args, "cache", None))):
        if folder and Path(folder).exists() and not Path(folder).is_dir():
            raise UserError(f"{flag} {folder}: is a file, expected a folder")
    if args.change_point_window < 0:
        raise UserError(f"--change-point-window: expected 0 or more, got "
                        f"{args.change_point_window}")
    keep = data_inside(Path(args.data), Path(args.out))
    onto, on_carried = previous_site_options(args)
    try:
        out = build_site_from_data(
            args.data, args.out, where=RunFilter(repository=args.repository),
            baseline_branch=args.baseline_branch,
            change_point_window=args.change_point_window or None, keep=keep,
            cache_dir=Path(args.cache) if getattr(args, "cache", None) else None,
            jobs=getattr(args, "jobs", None), onto=onto, on_carried=on_carried,
            size_limit=SizeLimit(
                int(getattr(args, "size_limit", PAGES_LIMIT // 1_000_000) * 1_000_000),
                warn=lambda message: print(f"torch-bench: warning: {message}",
                                           file=sys.stderr)),
            problem=lambda problem: print(f"torch-bench: warning: skipped {problem}",
                                          file=sys.stderr),
            progress=lambda message: print(f"site: {message}", file=sys.stderr))
    except OSError as exc:
        raise UserError(f"--out {args.out}: cannot write the site ({exc.strerror or exc}"
                        f"{': ' + exc.filename if exc.filename else ''})") from None
    print(f"site: wrote {out} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.baseline_branch:
        _warn_unknown_baseline(Path(out), args.baseline_branch)
    return 0


def previous_site_options(args: argparse.Namespace):
    """The previous site (None when not given or unreadable: a full build) and where the
    carried files are listed."""
    given, listed = getattr(args, "previous_site", None), getattr(args, "carried_out", None)
    if bool(given) != bool(listed):
        raise UserError("--previous-site and --carried-out go together: the files a build "
                        "leaves out must be listed for the publish")
    if not given:
        return None, lambda paths: None
    try:
        onto = decode_previous_site(Path(given).read_bytes())
    except OSError as exc:
        raise UserError(f"--previous-site {given}: cannot read it ({exc.strerror})") from None
    if onto is None:
        print(f"torch-bench: warning: --previous-site {given}: unreadable; building every "
              f"file", file=sys.stderr)
    return onto, lambda paths: write_bytes_atomic(Path(listed), encode_carried(paths))


def previous_site_files(previous: PreviousSite | None, folder: Path) -> tuple[str, str] | None:
    """The --previous-site file describing `previous`, written into `folder`, and the
    --carried-out file the build will write there (None without a previous site)."""
    if previous is None:
        return None
    listing, carried = folder / "previous-site.json", folder / "carried.json"
    carried.unlink(missing_ok=True)
    write_bytes_atomic(listing, encode_previous_site(previous))
    return str(listing), str(carried)


def built_site(folder: Path, files: tuple[str, str] | None) -> BuiltSite:
    """The site a build wrote into `folder`, with the files it carried (as listed in the
    --carried-out file of `files`)."""
    if files is None:
        return BuiltSite(folder)
    try:
        return BuiltSite(folder, decode_carried(Path(files[1]).read_bytes()))
    except (OSError, ValueError):
        raise UserError(f"{files[1]}: the build did not list the files it kept from the "
                        f"previous site; nothing was published") from None


def _warn_unknown_baseline(site: Path, branch: str) -> None:
    """A loud warning when no run of the history is on the baseline branch asked for (a typo
    builds a dashboard with every 'vs baseline' column empty), naming the branches there are."""
    try:
        runs = json.loads((site / RUNS_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    branches = sorted({run.get("branch") for run in runs if run.get("branch")})
    if branch not in branches:
        print(f"torch-bench: warning: --baseline-branch {branch!r}: no run of the history is on "
              f"that branch, so the site has no baseline; branches with runs: "
              f"{', '.join(repr(b) for b in branches) or '(none)'}", file=sys.stderr)


def publish_cache(args: argparse.Namespace) -> Path:
    """The build cache a publish's build reads: --cache, or that of the site at --out (the
    data files it holds are left out of the publish's checkout)."""
    return Path(args.cache) if getattr(args, "cache", None) else Path(args.out) / BUILD_CACHE_DIR


def handle_publish(args: argparse.Namespace) -> int:
    """Build the site from the branch's data and commit it there (store/publish.py), or
    make it the one commit of --site-branch (store/site_branch.py)."""
    if args.data:
        raise UserError("--data: not used with --publish (the data comes from the branch)")
    remote = args.remote or default_remote(os.environ)
    target = Target(remote, args.branch, args.folder)

    def build(data: Path, previous: PreviousSite | None) -> BuiltSite:
        with tempfile.TemporaryDirectory(prefix="torch-bench-site-") as scratch:
            files = previous_site_files(previous, Path(scratch))
            handle(argparse.Namespace(**{**vars(args), "publish": False, "data": str(data),
                                         "previous_site": files and files[0],
                                         "carried_out": files and files[1]}))
            return built_site(Path(args.out), files)

    credentials = credentials_for(remote, os.environ.get(args.token_env))
    report = publish_dashboard(target, credentials, build, site_branch=args.site_branch or "",
                               site_folder=args.site_folder,
                               leave_out=cached_keys(publish_cache(args)),
                               log=lambda line: print(line, file=sys.stderr))
    print(f"site: {'published' if report.commit else 'already up to date'} on "
          f"{display_url(remote)} (branch {args.site_branch or args.branch}, folder "
          f"{args.site_folder})", file=sys.stderr)
    return 0
