"""What a benchmark page fetches for its whole history in idle time, against the bytes of the
points it shows; and what the site costs on disk and per one-run update at a larger history.

Each history is built into a site, served from 127.0.0.1 (single byte ranges honoured, as
GitHub Pages does) and its benchmark page visited in a fresh headless Chromium (Debian's
/usr/bin/chromium through Playwright) until the whole history is loaded (the page fetches it
when idle after the first paint). Printed per history:

  points        how many points the series has (its whole history)
  own KB        the points' own bytes: their values as JSON columns (run, env, median, q1,
                q3, n at six significant digits), as a series' head file stores them; the
                same figure on every revision
  idle KB       every byte the page fetched after itself, its script and style: the history
                (head file, packed chunks) and whatever it needed to draw it
  gzip KB       the same, gzip-compressed (level 6) as GitHub Pages sends JSON; a part of a
                packed file read by range request counted as sent
  ratio         idle KB / own KB (target <= 2)
  run KB        of idle KB, the run tables (json/runs/)

Histories (synthetic, made as columns; runs an hour apart with up to ten minutes of jitter,
one run in ten on a pull request's own branch):

  demo          the demo's shape (scripts/demo): 6 runs of 8 benchmarks, the last a PR's
  demo-300      the same suite grown to 301 runs
  sparse-1832   1,832 runs (the size of github-action-benchmark's own imported history), the
                benchmark measured in every 6th run: 306 points
  dense-1832    the same runs, the benchmark measured in every one: 1,832 points (three
                packed chunks and a head)

Then, with --scale RUNSxBENCHMARKS (default 2000x200 5000x200): the site of that many runs
built from columns (site_build.synthetic_columns: runs exactly an hour apart, one in ten on
a branch of its own, which no default data branch holds: pull requests are never stored;
--one-branch puts them all on main), its size, then one more run added into the same
folder: how many files and bytes the update wrote (files kept as they were are hard links
to the previous build's, so they are not counted).

    .venv/bin/python benchmarks/history_fetch.py [--scale 2000x200] [--skip-browser]
                                                 [--one-branch]

Run it with PYTHONPATH pointing at another revision's src/ to compare (the figures above do
not depend on the revision's own data contract).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from site_build import CHROMIUM, CHROMIUM_ARGS, serve, synthetic_columns  # noqa: E402
from torch_bench.render import data, paths  # noqa: E402
from torch_bench.render.build import build_site  # noqa: E402
from torch_bench.render.columns import Columns, Descriptor  # noqa: E402
from torch_bench.render.model import build_model, no_change_points  # noqa: E402

DEMO_NAMES = ("mlp", "lstm", "cnn", "attention")
DEMO_METRICS = ("forward_time", "peak_memory")
OWN_COLUMNS = ("run", "env", "median", "q1", "q3", "n")


def run_facts(i: int, rng: np.random.Generator) -> dict:
    sha = f"{int(rng.integers(2**62)):016x}" + f"{i:024x}"
    moment = 1.7e9 + i * 3600 + int(rng.integers(0, 600))
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    return {"run_id": f"{created.replace('-', '').replace(':', '')[:15]}-{i:010d}",
            "created_at": created, "repository": "octo/net", "sha": sha,
            "branch": f"pr-{i}" if i % 10 == 9 else "main",
            "message": f"Change {i}: tune the kernels of layer {i % 7}",
            "url": f"https://github.com/octo/net/commit/{sha}", "pr_number": None,
            "pr_title": "", "gpu": "CPU", "torch": "2.13.0", "cuda": "", "driver": "",
            "fingerprint": "f00d", "fingerprint_filter": "f00d", "results": 1, "failures": 0,
            "training": []}


def history_columns(runs: int, measured: dict[str, np.ndarray], seed: int = 0) -> Columns:
    """`runs` runs; benchmark `name` measured in the runs `measured[name]` (positions)."""
    rng = np.random.default_rng(seed)
    facts = [run_facts(i, rng) for i in range(runs)]
    descriptors, rows = [], {k: [] for k in ("run", "desc", "median", "q1", "q3", "n")}
    for d, (name, positions) in enumerate(sorted(measured.items())):
        model, metric = name.split(":")
        unit = "ms" if metric == "forward_time" else "MB"
        params = {"model": model, "threads": 1}
        descriptors.append(Descriptor("tinynet", model, metric, unit, "lower", params,
                                      f"tinynet/{model}[threads=1]:{metric}"))
        level = float(rng.uniform(0.5, 50.0))
        median = level * (1 + rng.normal(0, 0.01, len(positions)))
        rows["run"].append(positions)
        rows["desc"].append(np.full(len(positions), d))
        rows["median"].append(median)
        rows["q1"].append(median * 0.99)
        rows["q3"].append(median * 1.01)
        rows["n"].append(np.full(len(positions), 20))
    order = np.lexsort((np.concatenate(rows["desc"]), np.concatenate(rows["run"])))
    joined = {k: np.concatenate(v)[order] for k, v in rows.items()}
    count = len(order)
    typed = {"run": joined["run"].astype(np.int32), "desc": joined["desc"].astype(np.int32),
             "status": np.zeros(count, np.int32), "median": joined["median"],
             "q1": joined["q1"], "q3": joined["q3"], "n": joined["n"].astype(np.int32),
             "error": np.full(count, -1, np.int32)}
    return Columns(facts, descriptors, ["ok"], [], typed)


def histories() -> dict[str, tuple[Columns, str]]:
    """name -> (columns, the model:metric whose page is visited)."""
    demo = [f"{m}:{metric}" for m in DEMO_NAMES for metric in DEMO_METRICS]
    every = {runs: np.arange(runs) for runs in (6, 301, 1832)}
    return {
        "demo": (history_columns(6, {name: every[6] for name in demo}), "mlp:forward_time"),
        "demo-300": (history_columns(301, {name: every[301] for name in demo}),
                     "mlp:forward_time"),
        "sparse-1832": (history_columns(1832, {
            "mlp:forward_time": np.arange(0, 1832, 6), "lstm:forward_time": every[1832]}),
            "mlp:forward_time"),
        "dense-1832": (history_columns(1832, {
            "mlp:forward_time": every[1832], "lstm:forward_time": np.arange(0, 1832, 6)}),
            "mlp:forward_time"),
    }


def own_bytes(columns: Columns, model_metric: str) -> tuple[int, int]:
    """(points, bytes of their values as the head file's JSON columns)."""
    model = build_model(columns)
    name, metric = model_metric.split(":")
    series = next(s for s in model.series if s.name == name and s.metric == metric)
    pts = series.points
    env = data.environment_index(pts)[0]
    values = {"run": pts.run.tolist(), "env": env.tolist(),
              "median": data.rounded_list(pts.median), "q1": data.rounded_list(pts.q1),
              "q3": data.rounded_list(pts.q3), "n": pts.n.tolist()}
    assert tuple(values) == OWN_COLUMNS
    text = json.dumps(values, separators=(",", ":"))
    return len(pts), len(text.encode())


def page_of(site: Path, model_metric: str) -> str:
    name, metric = model_metric.split(":")
    for page in sorted((site / paths.BENCHMARK_DIR).glob("*.html")):
        if name in page.stem and metric in page.stem:
            return page.relative_to(site).as_posix()
    raise LookupError(f"no page for {model_metric}")


def sent_gzip(site: Path, url: str, sent: int) -> int:
    path = site / urlparse(url).path.lstrip("/")
    body = path.read_bytes() if path.is_file() else b""
    return sent if sent < len(body) else len(gzip.compress(body, compresslevel=6))


def idle_fetch(playwright, site: Path, page_path: str) -> list[tuple[str, int, int]]:
    """(url, bytes sent, gzip bytes) of every request after the page, its script and style,
    until the whole history is loaded."""
    server, base = serve(site)
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1366, "height": 800})
        seen: list[tuple[str, int]] = []
        page.on("requestfinished", lambda request: seen.append(
            (request.url, request.sizes()["responseBodySize"])))
        page.goto(base + page_path)
        page.wait_for_selector("#trend[data-interactive='1']", timeout=60_000)
        page.wait_for_load_state("networkidle")
    finally:
        browser.close()
        server.shutdown()
        server.server_close()
    return [(url, sent, sent_gzip(site, url, sent)) for url, sent in seen
            if f"/{paths.JSON_DIR}/" in url]


def print_fetches(work: Path) -> None:
    from playwright.sync_api import sync_playwright

    print(f"{'history':>12} {'points':>6} {'own KB':>7} {'idle KB':>8} {'gzip KB':>8} "
          f"{'ratio':>6} {'run KB':>7} {'files':>5}")
    with sync_playwright() as playwright:
        for name, (columns, shown) in histories().items():
            site = build_site(columns, work / name, finder=no_change_points)
            count, own = own_bytes(columns, shown)
            fetched = idle_fetch(playwright, site, page_of(site, shown))
            idle = sum(sent for _, sent, _ in fetched)
            runs = sum(sent for url, sent, _ in fetched if "/json/runs/" in url)
            print(f"{name:>12} {count:>6} {own / 1024:>7.1f} {idle / 1024:>8.1f} "
                  f"{sum(g for _, _, g in fetched) / 1024:>8.1f} {idle / own:>6.2f} "
                  f"{runs / 1024:>7.1f} {len(fetched):>5}", flush=True)


def files_of(root: Path) -> dict[str, tuple[int, int]]:
    """path -> (inode, size) of every file of a site, its build cache included."""
    return {p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_size)
            for p in root.rglob("*") if p.is_file()}


def print_scale(sizes: list[str], work: Path, one_branch: bool = False) -> None:
    for size in sizes:
        runs, benchmarks = (int(part) for part in size.lower().split("x"))
        columns = synthetic_columns(runs + 1, benchmarks)
        if one_branch:
            columns = dataclasses.replace(
                columns, runs=[{**facts, "branch": "main"} for facts in columns.runs])
        older = dataclasses.replace(
            columns, runs=columns.runs[:runs],
            rows={k: v[:runs * benchmarks] for k, v in columns.rows.items()})
        site = work / f"scale-{size}"
        started = time.perf_counter()
        build_site(older, site, finder=no_change_points)
        full_s = time.perf_counter() - started
        before = files_of(site)
        started = time.perf_counter()
        build_site(columns, site, finder=no_change_points)
        update_s = time.perf_counter() - started
        after = files_of(site)
        written = {p: size for p, (inode, size) in after.items()
                   if p not in before or before[p][0] != inode}
        packs = sum(s for p, (_, s) in after.items() if p.startswith("json/packs/"))
        tables = sum(s for p, (_, s) in after.items() if p.startswith("json/runs/table-"))
        heads = sum(s for p, (_, s) in after.items() if p.startswith("json/series/"))
        total = sum(s for _, s in after.values())
        which = " on one branch" if one_branch else ""
        print(f"{runs} runs x {benchmarks} benchmarks (+1){which}: site {total / 2**20:.1f} MB in "
              f"{len(after)} files (packed chunks {packs / 2**20:.1f} MB, head files "
              f"{heads / 2**20:.1f} MB, run tables {tables / 2**20:.2f} MB); full build "
              f"{full_s:.0f} s; one-run update {update_s:.1f} s wrote {len(written)} files, "
              f"{sum(written.values()) / 2**20:.1f} MB", flush=True)
        shutil.rmtree(site, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scale", nargs="*", default=["2000x200", "5000x200"],
                        help="larger histories as RUNSxBENCHMARKS for the site's size and a "
                             "one-run update's writes (none: skip)")
    parser.add_argument("--skip-browser", action="store_true",
                        help="only the site sizes, no page visits")
    parser.add_argument("--one-branch", action="store_true",
                        help="every run of the larger histories on main (synthetic_columns puts "
                             "one run in ten on a branch of its own)")
    args = parser.parse_args()
    import torch_bench
    print(f"torch_bench from {Path(torch_bench.__file__).parent}; load average "
          f"{os.getloadavg()[0]:.2f} (1 min)")
    work = Path(tempfile.mkdtemp(prefix="history-fetch-"))
    try:
        if not args.skip_browser:
            print_fetches(work)
        print_scale(args.scale, work, args.one_branch)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
