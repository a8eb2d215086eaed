"""How the dashboard scales with history: build time, output size, what a first visit costs.

A synthetic history of N runs x 200 benchmarks (built in memory; optionally also written as
run files and read back with the data-folder reader), built into a site, served on 127.0.0.1
and opened in headless Chromium. Side by side, the same history as one whole-history data
file (github-action-benchmark's `window.BENCHMARK_DATA = {...}` in data.js) loaded at once by
a page that then draws one chart. Prints per history length:

  build s        model + plan + write of the whole site (from runs already in memory),
                 change points included (the analysis module's finder, newest 60 runs)
  no-cp s        the same build without searching change points
  read s         reading the data folder (only with --from-disk)
  site MB/files  total output, all files
  first visit    bytes the overview page transfers on a cold visit, without Plotly's JS
                 (one cacheable asset, printed once)
  chart page KB  bytes a cold visit of one benchmark page transfers, without Plotly
  chart ms       cold visit of a benchmark page until its trend chart is drawn
  whole-file     size of the one-file history, and a cold visit until its first chart

Targets: build in seconds at 1,000 runs; first visit under 1 MB plus Plotly, the same at
100 and 1,000 runs.

With --update: per history length, from a data folder of run files (as `torch-bench site`
reads it, with its build cache), a full build of N - 1 runs, the update with the Nth run
into the same folder (reusing the change-point memo kept there), a full build of N runs into
a fresh folder, whether update and full build are byte-identical, and the process's peak
RSS. Target: the update at most a quarter of the full build. Also the update with a newest
run that measured only a tenth of the benchmarks, with how many benchmarks and files the
build kept from the previous site.
With --growth: the data folder's size per run as run files and after monthly compaction.
With --git-growth: the data branch as a git repository (compacted data and the published
site), then --commits runs each stored, built and committed: the packed history's growth
per run, the files each commit changes, the site's size and the update's time; then the same
runs published as the Action publishes them (action/stages.py::publish, a fresh job folder
each time, onto a bare remote): the whole publish's time and its build's. With
--site-branch as well, the same history again as the Action's site-branch input keeps it: the
data alone on its branch of a bare remote and the dashboard published by the Action's stage
as the one commit of gh-pages, replaced each time: both branches' packed sizes and growth per
run, the repository's after gc, the site branch's commit count and the publish's time.
With --keep as well, the publishes start from the history --scale kept in FOLDER (its data
folder copied onto the remote; the runs published after it are its newest run and copies of
it an hour apart), and the site committed beside the data is left out.
With --scale: per RUNSxBENCHMARKS size, one process per size: a data folder on disk as a
busy repository has it (every month but the newest compacted into an archive, samples kept),
`torch-bench site` building it in full into a fresh folder, the update after one new run
file into the same folder, and the same build again with nothing new; each with its time
and its own peak RSS. --window N searches change points in the newest N runs only; the
default 0 searches every whole history, as the CLI does. The site's size and file count leave
out its build cache, printed apart (what the Action keeps in its cache entry).

    .venv/bin/python benchmarks/site_build.py [--runs 100 1000] [--from-disk]
    .venv/bin/python benchmarks/site_build.py --update --runs 300 [--benchmarks 200]
    .venv/bin/python benchmarks/site_build.py --growth --runs 1000 10000 [--benchmarks 200]
    .venv/bin/python benchmarks/site_build.py --git-growth 300x1000 [--commits 10]
        [--site-branch] [--keep FOLDER]
    .venv/bin/python benchmarks/site_build.py --change-points --runs 1000 10000
    .venv/bin/python benchmarks/site_build.py --scale 1000x1000 10000x1000 [--window 0]
        [--keep FOLDER]
    .venv/bin/python benchmarks/site_build.py --layout 10000x1000
    .venv/bin/python benchmarks/site_build.py --page-cost 2000x1000
    .venv/bin/python benchmarks/site_build.py --cache-rows 1000x1000
With --cache-rows: the build cache's rows (history_cache.py) as the earlier .npz and as
Parquet, raw and as tar + zstd (what actions/cache stores), with the synthetic history's
quartiles and with a spread drawn per result.
With --layout: the site's size by kind of file (pages, packed chunks, run tables and values,
head and trend files) and the time to write it and to update it with one run, from a history
made directly as columns in memory and without change points: what the layout costs apart
from reading the data folder and searching change points.
With --page-cost: the CPU time per benchmark of each stage of making its page, head file
and trend file (what a one-run update does for every benchmark the run measured).
"""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import functools
import hashlib
import http.server
import io
import itertools
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from history_size import git, packed_bytes  # the sibling script (its folder is on sys.path)
from torch_bench.metrics import get_metric
from torch_bench.render import paths
from torch_bench.render.build import build_site, build_site_from_data
from torch_bench.render.columns import Columns, Descriptor
from torch_bench.render.model import no_change_points
from torch_bench.render.paths import BUILD_CACHE_DIR
from torch_bench.render.writer import plotly_js
from torch_bench.results.schema import Result, Run
from torch_bench.results.stats import Summary
from torch_bench.store import layout
from torch_bench.store.archive import Archive, encode_archive
from torch_bench.store.archive import digest as archive_digest
from torch_bench.store.layout import run_path
from torch_bench.store.plan import apply_plan, plan_compact
from torch_bench.store.reader import History, load_history
from torch_bench.store.scan import scan_folder

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
SAMPLES = 5


# -- synthetic history --------------------------------------------------------------------------

def benchmark_specs(count: int = 200) -> list[tuple[str, str, str, dict]]:
    """`count` (suite, name, metric, params): the 200 below, then copies of them that differ
    in a `variant` param."""
    base = base_specs()
    return [(suite, name, metric, {**params, **({"variant": k // len(base)} if k >= len(base)
                                                 else {})})
            for k, (suite, name, metric, params) in
            ((k, base[k % len(base)]) for k in range(count))]


def base_specs() -> list[tuple[str, str, str, dict]]:
    """200 (suite, name, metric, params)."""
    specs = []
    models = ("bert", "gpt2", "t5", "roberta", "distilbert")
    for model, dtype, batch, seq in itertools.product(models, ("float32", "float16"),
                                                      (1, 4, 8, 16), (128, 512)):
        specs.append(("transformers", model, "latency",
                      {"model": model, "dtype": dtype, "batch_size": batch, "seq_length": seq,
                       "device": "cuda", "mode": "inference"}))
    for model, dtype, batch in itertools.product(models, ("float32", "float16"), (1, 4, 8, 16)):
        specs.append(("transformers", model, "peak_memory",
                      {"model": model, "dtype": dtype, "batch_size": batch, "seq_length": 512,
                       "device": "cuda", "mode": "training"}))
    for variant, hidden in itertools.product(
            ("cudnn", "aten", "jit", "jit_premul", "jit_premul_bias", "jit_simple",
             "jit_multilayer", "py"), (128, 256, 512, 1024, 2048)):
        specs.append(("rnns", variant, "forward_time",
                      {"hidden_size": hidden, "device": "cuda", "dtype": "float32"}))
    for i in range(38):
        specs.append(("compile", f"model_{i:02d}", "speedup",
                      {"backend": "inductor", "device": "cuda", "mode": "training"}))
    specs.append(("compile", "summary", "speedup", {"device": "cuda"}))
    specs.append(("compile", "summary", "pass_rate", {"device": "cuda"}))
    assert len(specs) == 200, len(specs)
    return specs


def synthetic_result(spec, level: float, rng: random.Random) -> Result:
    suite, name, metric, params = spec
    unit_spec = get_metric(metric)
    spread = level * 0.02
    median = level * (1 + rng.gauss(0, 0.01))
    summary = Summary(n=SAMPLES, median=median, mean=median, std=spread / 1.35, iqr=spread,
                      min=median - spread, max=median + spread, p90=median + spread * 0.8)
    samples = tuple(median + spread * (k - 2) / 2 for k in range(SAMPLES))
    return Result(suite=suite, name=name, metric=metric, unit=unit_spec.unit,
                  direction=unit_spec.direction.value, params=params, samples=samples,
                  summary=summary)


def synthetic_history(runs: int, seed: int = 0, benchmarks: int = 200) -> History:
    return History(tuple(synthetic_runs(runs, seed, benchmarks)))


def synthetic_runs(runs: int, seed: int = 0, benchmarks: int = 200) -> Iterator[Run]:
    """The runs of a synthetic history, oldest first, made one at a time."""
    rng = random.Random(seed)
    specs = benchmark_specs(benchmarks)
    levels = [rng.uniform(0.5, 200.0) for _ in specs]
    for i in range(runs):
        branch = "main" if i % 10 else f"pr-{i}"
        sha = f"{rng.getrandbits(160):040x}"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + i * 3600))
        step = 1.08 if i >= runs * 2 // 3 else 1.0  # one real slowdown, two thirds in
        results = tuple(synthetic_result(spec, level * (step if spec[0] == "rnns" else 1), rng)
                        for spec, level in zip(specs, levels, strict=True))
        yield Run(
            run_id=f"{created.replace('-', '').replace(':', '')[:15]}-{i:010d}",
            created_at=created, results=results,
            git={"repository": "octo/net", "sha": sha, "branch": branch,
                 "message": f"Change {i}: tune kernels", "url":
                 f"https://github.com/octo/net/commit/{sha}"},
            ci={"provider": "github-actions"},
            env={"torch": f"2.{4 + i // 400}.0", "cuda": "12.4", "driver": "550.54",
                 "gpu_name": "NVIDIA A100-SXM4-80GB", "fingerprint": "f00d"},
        )


def write_data_folder(history: History, root: Path) -> None:
    """Run documents written directly (they are valid by construction)."""
    for run in history.runs:
        path = root / run_path(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(run.to_dict()), encoding="utf-8")


# -- the one-file history of the common tool ----------------------------------------------------

def whole_history_file(history: History) -> str:
    """`window.BENCHMARK_DATA` as github-action-benchmark writes it: every run, every bench."""
    entries: dict[str, list] = {}
    for run in history.runs:
        by_suite: dict[str, list] = {}
        for r in run.results:
            label = f"{r.name}[{','.join(f'{k}={v}' for k, v in sorted(r.params.items()))}]"
            by_suite.setdefault(r.suite, []).append(
                {"name": f"{label} {r.metric}", "value": r.summary.median, "unit": r.unit,
                 "range": f"± {r.summary.iqr:.4f}", "extra": f"{r.summary.n} samples"})
        for suite, benches in by_suite.items():
            entries.setdefault(suite, []).append({
                "commit": {"id": run.git["sha"], "message": run.git["message"],
                           "timestamp": run.created_at, "url": run.git["url"],
                           "author": {"name": "dev"}, "committer": {"name": "dev"}},
                "date": 0, "tool": "customSmallerIsBetter", "benches": benches})
    data = {"lastUpdate": 0, "repoUrl": "https://github.com/octo/net", "entries": entries}
    return "window.BENCHMARK_DATA = " + json.dumps(data, indent=2)


def write_single_file_page(site: Path, history: History, page: str) -> Path:
    """The whole history as one `data.js` beside `page` in `site/whole/`, as the common tool
    publishes it; `page`'s PLOTLY placeholder names the site's Plotly bundle."""
    whole = site / "whole"
    whole.mkdir()
    (whole / "data.js").write_text(whole_history_file(history), encoding="utf-8")
    (whole / "index.html").write_text(page.replace("PLOTLY", paths.PLOTLY_FILE), encoding="utf-8")
    return whole


WHOLE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script src="../PLOTLY"></script><script src="data.js"></script></head>
<body><div id="chart" style="width:900px;height:400px"></div><script>
const runs = window.BENCHMARK_DATA.entries.transformers;
const name = runs[0].benches[0].name;
const points = runs.map(r => [r.commit.id.slice(0, 7), r.benches.find(b => b.name === name)]);
Plotly.newPlot("chart", [{x: points.map(p => p[0]), y: points.map(p => p[1].value),
  mode: "lines+markers"}]).then(() => document.body.setAttribute("data-rendered", "1"));
</script></body></html>"""


# -- measuring in Chromium ----------------------------------------------------------------------

class Quiet(http.server.SimpleHTTPRequestHandler):
    """A static server honouring single byte ranges, as GitHub Pages does (the dashboard reads
    parts of its packed files so)."""

    def log_message(self, format, *args):  # noqa: A002
        pass

    def send_head(self):
        asked = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if asked is None or not Path(path).is_file():
            return super().send_head()
        body = Path(path).read_bytes()
        start, end = int(asked[1]), min(int(asked[2]), len(body) - 1)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        return io.BytesIO(body[start:end + 1])


def serve(root: Path):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


def cold_visit(browser, url: str, rendered: str) -> tuple[int, int, float]:
    """(bytes without Plotly, Plotly bytes, ms until `rendered` exists) on a cold cache."""
    context = browser.new_context()
    page = context.new_page()
    sizes: dict[str, int] = {}
    page.on("requestfinished", lambda request: sizes.__setitem__(
        request.url, request.sizes()["responseBodySize"]))
    page.goto(url)
    page.wait_for_selector(rendered, timeout=120_000)
    elapsed = page.evaluate("() => performance.now()")
    page.wait_for_load_state("networkidle")
    context.close()
    plotly = sum(v for k, v in sizes.items() if k.endswith(paths.PLOTLY_FILE))
    return sum(sizes.values()) - plotly, plotly, elapsed


def folder_size(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    return sum(p.stat().st_size for p in files), len(files)


def measure(runs: int, work: Path, browser, from_disk: bool) -> dict:
    history = synthetic_history(runs)
    read_s = None
    if from_disk:
        write_data_folder(history, work / "data")
        started = time.perf_counter()
        history = load_history(work / "data")
        read_s = time.perf_counter() - started
    started = time.perf_counter()
    build_site(history, work / "plain", finder=no_change_points)
    plain_s = time.perf_counter() - started
    shutil.rmtree(work / "plain")
    started = time.perf_counter()
    site = build_site(history, work / "site")
    build_s = time.perf_counter() - started
    size, files = folder_size(site)
    write_single_file_page(site, history, WHOLE_PAGE)
    server, base = serve(site)
    try:
        first_bytes, plotly_bytes, _ = cold_visit(browser, base + "index.html",
                                                  "[data-summary-chart='0'][data-rendered='1']")
        page = sorted((site / "bench").glob("rnns-*.html"))[0].relative_to(site)
        chart_bytes, _, chart_ms = cold_visit(browser, base + page.as_posix(),
                                              "#trend[data-rendered='1']")
        whole_bytes, _, whole_ms = cold_visit(browser, base + "whole/index.html",
                                              "body[data-rendered='1']")
    finally:
        server.shutdown()
        server.server_close()
    return {"runs": runs, "build_s": build_s, "plain_s": plain_s, "read_s": read_s,
            "site_mb": size / 2**20,
            "files": files, "first_kb": first_bytes / 1024, "plotly_kb": plotly_bytes / 1024,
            "chart_ms": chart_ms, "chart_kb": chart_bytes / 1024,
            "whole_mb": whole_bytes / 2**20, "whole_ms": whole_ms}


# -- incremental update -------------------------------------------------------------------------

def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def measure_update(runs: int, benchmarks: int, work: Path) -> dict:
    """From a data folder of run files, as `torch-bench site` builds: a full build of runs - 1,
    then the update with the newest run file into the same folder, then a full build of all
    runs into a fresh folder; the two results compared byte by byte. Also the update with a
    newest run that measured a tenth of the benchmarks (into a copy)."""
    history = synthetic_history(runs, benchmarks=benchmarks)
    data = work / "data"
    write_data_folder(History(history.runs[:-1]), data)
    started = time.perf_counter()
    build_site_from_data(data, work / "site")
    before_s = time.perf_counter() - started
    shutil.copytree(work / "site", work / "partial")
    shutil.copytree(data, work / "partial-data")
    newest = history.runs[-1]
    partial = dataclasses.replace(newest, results=newest.results[:max(benchmarks // 10, 1)])
    write_data_folder(History((partial,)), work / "partial-data")
    messages: list[str] = []
    started = time.perf_counter()
    build_site_from_data(work / "partial-data", work / "partial", progress=messages.append)
    partial_s = time.perf_counter() - started
    write_data_folder(History((newest,)), data)
    started = time.perf_counter()
    build_site_from_data(data, work / "site")
    update_s = time.perf_counter() - started
    started = time.perf_counter()
    build_site_from_data(data, work / "fresh")
    full_s = time.perf_counter() - started
    return {"before_s": before_s, "update_s": update_s, "full_s": full_s,
            "partial_s": partial_s, "partial_files": "; ".join(
                [m for m in messages if "unchanged since" in m] + messages[-1:]),
            "identical": tree_digest(work / "site") == tree_digest(work / "fresh"),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def print_updates(sizes: list[int], benchmarks: int) -> None:
    print(f"synthetic history x {benchmarks} benchmarks; change points over the whole history; "
          f"'10% run': the newest run measured a tenth of the benchmarks")
    print(f"{'runs':>6} {'full N-1 s':>10} {'update +1 s':>11} {'full N s':>9} "
          f"{'update/full':>11} {'identical':>9} {'peak RSS MB':>11} {'10% run s':>9}  files")
    for runs in sizes:
        work = Path(tempfile.mkdtemp(prefix="site-update-"))
        try:
            row = measure_update(runs, benchmarks, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"{runs:>6} {row['before_s']:>10.1f} {row['update_s']:>11.1f} "
              f"{row['full_s']:>9.1f} {row['update_s'] / row['full_s']:>11.2f} "
              f"{str(row['identical']):>9} {row['peak_mb']:>11.0f} {row['partial_s']:>9.1f}  "
              f"{row['partial_files']}", flush=True)


# -- scale: large histories, one process per size ------------------------------------------------

def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_compacted_folder(runs: Iterable[Run], root: Path) -> None:
    """A data folder as a busy repository has it after monthly compaction: every month but
    the newest in one archive (samples kept), the newest month as run files."""
    month: list[Run] = []
    for run in runs:
        if month and layout.month_of(run) != layout.month_of(month[0]):
            write_archive(month, root)
            month = []
        month.append(run)
    for run in month:
        path = root / run_path(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(run.to_dict()), encoding="utf-8")


def write_archive(runs: list[Run], root: Path) -> None:
    month = layout.month_of(runs[0])
    path = root / layout.archive_path(month, archive_digest(r.run_id for r in runs))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_archive(Archive(month, tuple(runs), summarised=False)))


def site_cli(data: Path, out: Path, window: int) -> tuple[float, float]:
    """`torch-bench site` in a process of its own: (seconds, its peak RSS in MB)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", SITE_WITH_PEAK, "site", "--data", str(data),
                           "--out", str(out), "--change-point-window", str(window)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"site failed: {done.stderr[-2000:]}")
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak-rss-kb ")]
    return seconds, int(peak[-1].split()[1]) / 1024


SITE_WITH_PEAK = """
import atexit, resource, sys
atexit.register(lambda: print("peak-rss-kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                              file=sys.stderr))
from torch_bench.cli import main
sys.argv[0] = "torch-bench"
sys.exit(main())
"""


def scale_row(runs: int, benchmarks: int, window: int, keep: str = "") -> str:
    """A runs x benchmarks data folder (monthly archives and the newest month's run files),
    `torch-bench site` building it in full into a fresh folder, then the update with one new
    run file into the same folder; each with its time and the largest peak RSS so far. With
    `keep`, the data folder and the new run are made in (or reused from) `keep`."""
    work = Path(tempfile.mkdtemp(prefix="site-scale-"))
    kept = Path(keep) / f"data-{runs}x{benchmarks}" if keep else None
    data = kept / "data" if kept else work / "data"
    try:
        started = time.perf_counter()
        if kept is None or not (kept / "newest.json").is_file():
            made = synthetic_runs(runs + 1, benchmarks=benchmarks)
            write_compacted_folder(itertools.islice(made, runs), data)
            (data.parent / "newest.json").write_text(json.dumps(next(made).to_dict()),
                                                     encoding="utf-8")
        newest = Run.from_dict(json.loads((data.parent / "newest.json").read_text()))
        made_s = time.perf_counter() - started
        path = data / run_path(newest)
        path.unlink(missing_ok=True)  # a kept folder: as it was before the update
        data_mb = folder_size(data)[0] / 2**20
        full_s, full_mb = site_cli(data, work / "site", window)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(newest.to_dict()), encoding="utf-8")
        update_s, update_mb = site_cli(data, work / "site", window)
        again_s, _ = site_cli(data, work / "site", window)
        path.unlink()
        site_bytes, files = folder_size(work / "site")
        cache_bytes, cache_files = folder_size(work / "site" / BUILD_CACHE_DIR)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return (f"{runs:>6} {benchmarks:>6} {made_s:>8.0f} {data_mb:>8.0f} {full_s:>7.0f} "
            f"{full_mb:>12.0f} {update_s:>9.1f} {update_mb:>12.0f} {again_s:>8.1f} "
            f"{(site_bytes - cache_bytes) / 2**20:>8.0f} {files - cache_files:>8} "
            f"{cache_bytes / 2**20:>8.0f}")


def print_scale(sizes: list[str], window: int, keep: str = "") -> None:
    print(f"synthetic history, {SAMPLES} samples per result, past months compacted; "
          f"`torch-bench site` from the data folder; change points in the newest "
          f"{window or 'all'} runs; 'again': the same build with nothing new; site: what "
          f"GitHub Pages serves (the build cache apart: 'cache', what CI keeps between jobs)")
    print(f"{'runs':>6} {'bench':>6} {'make s':>8} {'data MB':>8} {'full s':>7} "
          f"{'full peak MB':>12} {'update s':>9} {'update peak':>12} {'again s':>8} "
          f"{'site MB':>8} {'files':>8} {'cache MB':>8}", flush=True)
    for size in sizes:
        runs, benchmarks = (int(part) for part in size.lower().split("x"))
        done = subprocess.run([sys.executable, __file__, "--scale-row", str(runs),
                               str(benchmarks), str(window), keep], capture_output=True,
                              text=True)
        print(done.stdout.rstrip() or f"{runs:>6} {benchmarks:>6} failed: "
              f"{done.stderr.strip().splitlines()[-1:]}", flush=True)


# -- layout: what the site is made of at scale, without reading or change points ---------------

def synthetic_columns(runs: int, benchmarks: int, seed: int = 0) -> Columns:
    """The Columns a read of `synthetic_runs` would give (same benchmarks, runs and levels
    drawn alike), made directly as arrays: ten million results in seconds."""
    rng = np.random.default_rng(seed)
    specs = benchmark_specs(benchmarks)
    descriptors = [Descriptor(suite, name, metric, get_metric(metric).unit,
                              get_metric(metric).direction.value, params,
                              f"{suite}/{name}[{params}]:{metric}")
                   for suite, name, metric, params in specs]
    facts = []
    for i in range(runs):
        sha = f"{int(rng.integers(2**62)):040x}"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + i * 3600))
        facts.append({"run_id": f"{created.replace('-', '').replace(':', '')[:15]}-{i:010d}",
                      "created_at": created, "repository": "octo/net", "sha": sha,
                      "branch": "main" if i % 10 else f"pr-{i}",
                      "message": f"Change {i}: tune kernels",
                      "url": f"https://github.com/octo/net/commit/{sha}", "pr_number": None,
                      "pr_title": "", "gpu": "NVIDIA A100-SXM4-80GB",
                      "torch": f"2.{4 + i // 400}.0", "cuda": "12.4", "driver": "550.54",
                      "fingerprint": "f00d", "fingerprint_filter": "f00d",
                      "results": benchmarks, "failures": 0, "training": []})
    levels = rng.uniform(0.5, 200.0, benchmarks)
    median = (levels[None, :] * (1 + rng.normal(0, 0.01, (runs, benchmarks)))).ravel()
    spread = np.tile(levels * 0.02, runs)
    rows = {"run": np.repeat(np.arange(runs, dtype=np.int32), benchmarks),
            "desc": np.tile(np.arange(benchmarks, dtype=np.int32), runs),
            "status": np.zeros(runs * benchmarks, np.int32), "median": median,
            "q1": median - spread / 2, "q3": median + spread / 2,
            "n": np.full(runs * benchmarks, SAMPLES, np.int32),
            "error": np.full(runs * benchmarks, -1, np.int32)}
    return Columns(facts, descriptors, ["ok"], [], rows)


def print_layout(sizes: list[str]) -> None:
    """Per RUNSxBENCHMARKS: the site built from columns made in memory, without change
    points, then updated with one more run (the writing cost alone), and its size by kind."""
    for size in sizes:
        runs, benchmarks = (int(part) for part in size.lower().split("x"))
        columns = synthetic_columns(runs + 1, benchmarks)
        work = Path(tempfile.mkdtemp(prefix="site-layout-"))
        try:
            older = dataclasses.replace(
                columns, runs=columns.runs[:runs],
                rows={k: v[:runs * benchmarks] for k, v in columns.rows.items()})
            started = time.perf_counter()
            build_site(older, work / "site", finder=no_change_points)
            full_s = time.perf_counter() - started
            started = time.perf_counter()
            build_site(columns, work / "site", finder=no_change_points)
            update_s = time.perf_counter() - started
            kinds: dict[str, list[int]] = {}
            for path in (work / "site").rglob("*"):
                if path.is_file():
                    parts = path.relative_to(work / "site").parts
                    kind = "/".join(parts[:2]) if parts[0] == "json" and len(parts) > 2 \
                        else parts[0]
                    entry = kinds.setdefault(kind, [0, 0])
                    entry[0] += path.stat().st_size
                    entry[1] += 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
        total = sum(b for b, _ in kinds.values())
        print(f"{runs} runs x {benchmarks} benchmarks, no change points: full build "
              f"{full_s:.0f} s, one-run update {update_s:.1f} s, peak RSS "
              f"{peak_rss_mb():.0f} MB; site {total / 2**20:.0f} MB in "
              f"{sum(n for _, n in kinds.values())} files:")
        for kind, (size_b, count) in sorted(kinds.items(), key=lambda item: -item[1][0]):
            print(f"  {kind:<24} {size_b / 2**20:>8.1f} MB {count:>6} files")


# -- page cost: what one benchmark's files cost to make, by stage --------------------------------

def print_page_cost(sizes: list[str]) -> None:
    """Per RUNSxBENCHMARKS (columns made in memory, no change points): the CPU time per
    benchmark of each stage of making its page, head file and trend file, as an update that
    measured every benchmark makes them all; CPU time, so that a loaded machine changes it
    less than wall time. The second of two passes is timed."""
    from torch_bench.render.model import build_model

    for size in sizes:
        runs, benchmarks = (int(part) for part in size.lower().split("x"))
        model = build_model(synthetic_columns(runs, benchmarks))
        page_stage_costs(model)
        spent = page_stage_costs(model)
        print(f"{runs} runs x {benchmarks} benchmarks: CPU ms per benchmark")
        for name, seconds in spent.items():
            print(f"  {name:<32} {seconds / len(model.series) * 1000:6.2f}")
        print(f"  {'total':<32} {sum(spent.values()) / len(model.series) * 1000:6.2f}")


def page_stage_costs(model) -> dict[str, float]:
    """CPU seconds of each stage of making every benchmark's page and data files."""
    from torch_bench.redact import scrub
    from torch_bench.render import data as site_data
    from torch_bench.render import pages, plan, trends, writer
    from torch_bench.render.chunk_memo import ChunkMemo, all_chunks
    from torch_bench.render.content_key import run_digests
    from torch_bench.render.markers import env_changes
    from torch_bench.render.noise_band import noise_band

    spent: dict[str, float] = {}

    def timed(name: str, make):
        started = time.process_time()
        made = make()
        spent[name] = spent.get(name, 0.0) + time.process_time() - started
        return made

    env = writer.template_environment()
    nav = {"suites": [], "baseline_branch": model.baseline_branch}
    base = model.baseline_branch
    memo = ChunkMemo(None, run_digests(model.runs))
    chunks = plan.pack_layout(model.series, all_chunks(model.series, memo,
                                                       plan.environment_codes))[1]
    for s in model.series:
        band = timed("noise band", lambda s=s: noise_band(s, base, []))
        context = timed("page context (chart included)", lambda s=s, band=band:
                        pages.benchmark_context(model, s, [], ["gpu", "torch"], band))
        page = plan.page_of(paths.benchmark_page(s), "benchmark.html", context, nav)
        html = timed("page template", lambda page=page:
                     env.get_template("benchmark.html").render(**page.context))
        timed("page masked and encoded", lambda html=html: scrub(html).encode("utf-8"))
        timed("head file", lambda s=s: writer._encoded(site_data.series_payload(
            s, env_changes(s.points), [], {}, chunks.get(s.key, []))))
        timed("trend file", lambda s=s, band=band: writer._encoded(
            trends.trend_payload(s, [], band, base)))
    return spent


# -- the build cache's rows: the earlier .npz against Parquet --------------------------------------

def zstd_size(path: Path) -> int | None:
    """Bytes of `path` as tar + zstd (level 3, as actions/cache stores a folder), or None
    without the zstd command."""
    if shutil.which("zstd") is None:
        return None
    tar = subprocess.run(["tar", "-C", str(path.parent), "-cf", "-", path.name],
                         capture_output=True, check=True).stdout
    return len(subprocess.run(["zstd", "-q", "-3", "-c"], input=tar, capture_output=True,
                              check=True).stdout)


def print_cache_rows(sizes: list[str]) -> None:
    """Per RUNSxBENCHMARKS: the rows the build cache keeps (history_cache.py) written as the
    earlier NumPy .npz (zlib) and as Parquet, raw and as the Action's cache stores them; with
    the synthetic history's quartiles (one spread per benchmark) and with a spread drawn for
    every result, as real timings have it."""
    from torch_bench.render.columns import ROW_FIELDS
    from torch_bench.render.history_cache import rows_of_parquet, rows_parquet

    def npz(rows: dict) -> bytes:
        out = io.BytesIO()
        np.savez_compressed(out, **{name: rows[name].astype(dtype) for name, dtype in ROW_FIELDS})
        return out.getvalue()

    def parquet(rows: dict) -> bytes:
        return rows_parquet({name: rows[name].astype(dtype) for name, dtype in ROW_FIELDS})

    print(f"{'size':>11} {'quartiles':>12} {'format':>8} {'write s':>8} {'read s':>7} "
          f"{'MB':>7} {'tar+zstd MB':>11} {'bytes/row':>9}")
    for size in sizes:
        runs, benchmarks = (int(part) for part in size.lower().split("x"))
        rows = synthetic_columns(runs, benchmarks).rows
        rng = np.random.default_rng(1)
        spread = (rows["q3"] - rows["q1"]) * rng.lognormal(0, 0.5, len(rows["median"]))
        varied = {**rows, "q1": rows["median"] - spread / 2, "q3": rows["median"] + spread / 2}
        for label, made in (("per bench", rows), ("per result", varied)):
            for name, encode, decode in (
                    ("npz", npz, lambda path: dict(np.load(path))),
                    ("parquet", parquet, rows_of_parquet)):
                work = Path(tempfile.mkdtemp(prefix="cache-rows-"))
                try:
                    started = time.perf_counter()
                    (work / "rows").write_bytes(encode(made))
                    write_s = time.perf_counter() - started
                    started = time.perf_counter()
                    decode(work / "rows")
                    read_s = time.perf_counter() - started
                    raw = (work / "rows").stat().st_size
                    packed = zstd_size(work / "rows")
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                shown = "—" if packed is None else f"{packed / 2**20:.1f}"
                print(f"{size:>11} {label:>12} {name:>8} {write_s:>8.1f} {read_s:>7.1f} "
                      f"{raw / 2**20:>7.1f} {shown:>11} {raw / len(made['median']):>9.1f}",
                      flush=True)


# -- change points over a whole history ----------------------------------------------------------

def print_change_point_costs(sizes: list[int]) -> None:
    """Cold search of a whole history, then one more point with the memo the first left."""
    import numpy as np

    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    print("one benchmark's history, 1% noise, a +8% step a third of the way in")
    print(f"{'points':>7} {'cold s':>7} {'+1 point ms':>11} {'searches':>8} {'found':>8}")
    rng = np.random.default_rng(0)
    for n in sizes:
        values = 10 * np.exp(rng.normal(0, 0.01, n + 1))
        values[n // 3:] *= 1.08
        memo = ChangePointMemo()
        started = time.perf_counter()
        find_change_points_whole(values[:n], memo)
        cold_s = time.perf_counter() - started
        warm = ChangePointMemo(memo.kept())
        started = time.perf_counter()
        found = find_change_points_whole(values, warm)
        update_ms = (time.perf_counter() - started) * 1000
        print(f"{n:>7} {cold_s:>7.2f} {update_ms:>11.0f} {warm.searches:>8} "
              f"{','.join(str(c.index) for c in found):>8}", flush=True)


# -- data branch growth ---------------------------------------------------------------------------

def folder_bytes(root: Path, compressed: bool) -> int:
    """Bytes of every file, zlib-compressed as git stores a blob when `compressed`."""
    return sum(len(zlib.compress(p.read_bytes())) if compressed else p.stat().st_size
               for p in root.rglob("*") if p.is_file())


def measure_growth(runs: int, benchmarks: int, work: Path) -> dict:
    """The data folder of `runs` hourly runs, as run files, then compacted by month with the
    Action's settings (samples kept) and with samples summarised."""
    history = synthetic_history(runs, benchmarks=benchmarks)
    write_data_folder(history, work)
    loose = folder_bytes(work, compressed=True)
    out = {"loose": loose}
    for label, summarise in (("kept", False), ("summarised", True)):
        copy = work.with_name(work.name + "-" + label)
        shutil.copytree(work, copy)
        newest = max(run.created_at for run in history.runs)
        month = f"{newest[:4]}/{newest[5:7]}"
        apply_plan(copy, plan_compact(scan_folder(copy), month, summarise=summarise))
        out[label] = folder_bytes(copy, compressed=True)
        shutil.rmtree(copy)
    return out


def print_growth(sizes: list[int], benchmarks: int) -> None:
    print(f"data folder per run, {benchmarks} benchmarks x {SAMPLES} samples, one run an hour; "
          f"bytes as git stores them (zlib per file); all months but the newest compacted")
    print(f"{'runs':>6} {'loose KB/run':>12} {'compacted, samples kept':>24} "
          f"{'compacted, summarised':>22} {'loose total MB':>14}")
    for runs in sizes:
        work = Path(tempfile.mkdtemp(prefix="branch-growth-")) / "data"
        try:
            row = measure_growth(runs, benchmarks, work)
        finally:
            shutil.rmtree(work.parent, ignore_errors=True)
        print(f"{runs:>6} {row['loose'] / runs / 1024:>12.1f} "
              f"{row['kept'] / runs / 1024:>20.1f} KB "
              f"{row['summarised'] / runs / 1024:>18.1f} KB "
              f"{row['loose'] / 2**20:>14.1f}", flush=True)


# -- git growth: what each published run adds to the data branch's history -------------------

def git_growth_row(runs: int, benchmarks: int, commits: int) -> str:
    """A data branch as the Action keeps it (data folder and published site in one git
    work tree, the build cache outside it): `runs` runs committed with their site, then
    `commits` runs each stored, built and committed as one push; what the history grows by
    per run, packed, and what each commit changes."""
    work = Path(tempfile.mkdtemp(prefix="git-growth-"))
    try:
        branch, cache = work / "branch", work / "cache"
        made = synthetic_runs(runs + commits, benchmarks=benchmarks)
        write_compacted_folder(itertools.islice(made, runs), branch / "data")

        def build() -> float:
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "torch_bench", "site", "--data",
                            str(branch / "data"), "--out", str(branch / "site"), "--cache",
                            str(cache)], check=True, capture_output=True)
            return time.perf_counter() - started

        build()
        git(branch, "init", "-q")
        git(branch, "config", "gc.auto", "0")  # a background gc would fail the one measuring
        git(branch, "add", "-A")
        git(branch, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "history")
        before = packed_bytes(branch)
        changed, update_s = [], []
        for run in made:
            path = branch / "data" / run_path(run)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(run.to_dict()), encoding="utf-8")
            update_s.append(build())
            git(branch, "add", "-A")
            changed.append(len(git(branch, "diff", "--cached", "--name-only").splitlines()))
            git(branch, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "run")
        after = packed_bytes(branch)
        site_mb = folder_size(branch / "site")[0] / 2**20
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return (f"{runs:>6} {benchmarks:>6} {before / 2**20:>10.1f} "
            f"{(after - before) / commits / 2**20:>12.2f} {sum(changed) / commits:>10.0f} "
            f"{site_mb:>8.1f} {sum(update_s) / commits:>9.1f}")


def branch_bytes(repo: Path, branch: str) -> int:
    """Bytes of the pack a clone of `branch` alone receives (after gc, its deltas reused)."""
    return len(subprocess.run(["git", "-C", str(repo), "pack-objects", "--revs", "--stdout",
                               "-q"], input=f"refs/heads/{branch}\n".encode(),
                              capture_output=True, check=True).stdout)


def site_branch_sizes(remote: Path) -> tuple[int, int, int]:
    """(data branch, site branch, whole repository) packed, after `git gc --prune=now`: the
    sites an orphan commit replaced are unreachable, so pruned, and no clone receives them."""
    total = packed_bytes(remote)
    return branch_bytes(remote, "benchmark-data"), branch_bytes(remote, "gh-pages"), total


def action_publisher(work: Path, target, cache: Path, site_branch: str = ""):
    """The Action's publish stage (action/stages.py::publish), each call in a fresh job folder
    as on a new job machine, the build cache kept between calls as the Action's cache step
    keeps it; returns a function publishing once and giving (whole publish s, build s)."""
    from torch_bench.action import stages

    jobs = itertools.count()

    def publish() -> tuple[float, float]:
        job = stages.Paths(work / f"job-{next(jobs)}")
        build_s = []
        real_cli = stages.cli

        def timed_cli(*args):
            started = time.perf_counter()
            try:
                return real_cli(*args)
            finally:
                if args and args[0] == "site":
                    build_s.append(time.perf_counter() - started)

        stages.cli = timed_cli
        started = time.perf_counter()
        try:
            stages.publish(target, None, job, cache=cache, site_branch=site_branch)
        finally:
            stages.cli = real_cli
        whole = time.perf_counter() - started
        shutil.rmtree(job.root, ignore_errors=True)
        return whole, sum(build_s)

    return publish


def bare_remote_with_data(work: Path, runs: Iterator[Run], count: int, branch: str,
                          kept: Path | None = None) -> tuple[Path, Path]:
    """A bare remote (partial fetches allowed, as GitHub) whose `branch` holds `count` runs
    of `runs`, compacted, in folder benchmarks (or a copy of the data folder `kept`, as
    --scale --keep made it); and the work tree that pushed them."""
    remote, data = work / "remote.git", work / "data"
    git(work, "init", "-q", "--bare", str(remote))
    git(remote, "config", "uploadpack.allowFilter", "true")
    git(remote, "config", "gc.auto", "0")  # a background gc would fail the one measuring
    if kept is not None:
        shutil.copytree(kept / "data", data / "benchmarks")
    else:
        write_compacted_folder(itertools.islice(runs, count), data / "benchmarks")
    git(data, "init", "-q", "-b", branch)
    git(data, "add", "-A")
    git(data, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "history")
    git(data, "push", "-q", str(remote), branch)
    return remote, data


def push_run(data: Path, run: Run, branch: str) -> None:
    """Commit one run file on top of the remote's `branch` and push it (the site a publish
    committed there meanwhile is fetched first, as the Action's store does)."""
    git(data, "pull", "-q", "--rebase", "origin", branch)
    path = data / "benchmarks" / run_path(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run.to_dict()), encoding="utf-8")
    git(data, "add", "-A", "benchmarks")
    git(data, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "run")
    git(data, "push", "-q", "origin", branch)


def kept_history(keep: str, runs: int, benchmarks: int) -> Path | None:
    """The folder --scale --keep made for this size (its data folder and newest run), or None
    when there is no such folder to reuse."""
    kept = Path(keep) / f"data-{runs}x{benchmarks}" if keep else None
    if kept is not None and not (kept / "newest.json").is_file():
        raise SystemExit(f"{kept}: no kept history; make it first with --scale "
                         f"{runs}x{benchmarks} --keep {keep}")
    return kept


def runs_after(kept: Path, commits: int) -> Iterator[Run]:
    """`commits` new runs after a kept history: its newest run, then copies of it an hour
    apart each (new ids, same results)."""
    newest = Run.from_dict(json.loads((kept / "newest.json").read_text()))
    start = calendar.timegm(time.strptime(newest.created_at, "%Y-%m-%dT%H:%M:%SZ"))
    for i in range(commits):
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + i * 3600))
        yield dataclasses.replace(newest, created_at=created,
                                  run_id=f"{newest.run_id}-{i}" if i else newest.run_id)


def new_runs(runs: int, benchmarks: int, commits: int,
             kept: Path | None) -> tuple[Iterator[Run], Iterator[Run]]:
    """(the history's runs, the runs published after it): made here, or from `kept`."""
    if kept is not None:
        return iter(()), runs_after(kept, commits)
    made = synthetic_runs(runs + commits, benchmarks=benchmarks)
    return made, made


def data_branch_publish_row(runs: int, benchmarks: int, commits: int, keep: str = "") -> str:
    """The same history published as the Action does with the dashboard on the data branch
    (action/stages.py::publish onto a bare remote): `runs` runs and their site, then
    `commits` runs each pushed and published; the whole publish's time and its build's."""
    from torch_bench.store.remote import Target

    kept = kept_history(keep, runs, benchmarks)
    work = Path(tempfile.mkdtemp(prefix="data-branch-"))
    try:
        history, made = new_runs(runs, benchmarks, commits, kept)
        remote, data = bare_remote_with_data(work, history, runs, "gh-pages", kept)
        git(data, "remote", "add", "origin", str(remote))
        target = Target(str(remote), "gh-pages", "benchmarks")
        publish = action_publisher(work, target, work / "cache")
        first = publish()
        times = []
        for run in made:
            push_run(data, run, "gh-pages")
            times.append(publish())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return (f"{runs:>6} {benchmarks:>6} {first[0]:>8.1f} {first[1]:>8.1f} "
            f"{sum(t[0] for t in times) / commits:>10.1f} "
            f"{sum(t[1] for t in times) / commits:>8.1f}")


def site_branch_row(runs: int, benchmarks: int, commits: int, keep: str = "") -> str:
    """The same history with the data alone on its branch of a bare remote and the dashboard
    published as the Action does with site-branch (action/stages.py::publish) as the one
    commit of gh-pages: `runs` runs and their site, then `commits` runs each committed and
    pushed to the data branch (the run file only, as git_growth_row does) and published;
    what each branch and the repository grow by per run, packed."""
    from torch_bench.store.remote import Target

    kept = kept_history(keep, runs, benchmarks)
    work = Path(tempfile.mkdtemp(prefix="site-branch-"))
    try:
        history, made = new_runs(runs, benchmarks, commits, kept)
        remote, data = bare_remote_with_data(work, history, runs, "benchmark-data", kept)
        git(data, "remote", "add", "origin", str(remote))
        target = Target(str(remote), "benchmark-data", "benchmarks")
        publish = action_publisher(work, target, work / "cache", site_branch="gh-pages")
        first = publish()
        before = site_branch_sizes(remote)
        times = []
        for run in made:
            push_run(data, run, "benchmark-data")
            times.append(publish())
        after = site_branch_sizes(remote)
        site_commits = int(git(remote, "rev-list", "--count", "gh-pages"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    data_mb, site_mb, total_mb = (size / 2**20 for size in before)
    per_run = [(a - b) / commits / 2**20 for a, b in zip(after, before, strict=True)]
    return (f"{runs:>6} {benchmarks:>6} {data_mb:>8.1f} {per_run[0]:>11.2f} "
            f"{after[1] / 2**20:>8.1f} {per_run[1]:>11.2f} {total_mb:>8.1f} {per_run[2]:>11.2f} "
            f"{site_commits:>8} {first[0]:>8.1f} {sum(t[0] for t in times) / commits:>10.1f} "
            f"{sum(t[1] for t in times) / commits:>8.1f}")


def print_git_growth(sizes: list[str], commits: int, site_branch: bool = False,
                     keep: str = "") -> None:
    parsed = [tuple(int(part) for part in size.lower().split("x")) for size in sizes]
    if not keep:  # the site committed beside the data: a layout for small histories only
        print(f"data branch in git: history as compacted data plus its site, then {commits} "
              f"runs each stored, built (`torch-bench site --cache` outside the branch) and "
              f"committed; 'packed': after git gc, as a clone receives it")
        print(f"{'runs':>6} {'bench':>6} {'packed MB':>10} {'MB per run':>12} "
              f"{'files/run':>10} {'site MB':>8} {'update s':>9}", flush=True)
        for runs, benchmarks in parsed:
            print(git_growth_row(runs, benchmarks, commits), flush=True)
    print(f"\nthe same published as the Action does, the dashboard on the data branch: a first "
          f"publish (cold: no build cache, no site on the branch), then each of the {commits} "
          f"runs pushed and action/stages.py::publish in a fresh job folder (a bare remote, the "
          f"build cache kept between jobs); 'publish s' is the whole publish, 'build s' its "
          f"build" + (f"; the history kept in {keep}" if keep else ""))
    print(f"{'runs':>6} {'bench':>6} {'first s':>8} {'build s':>8} {'publish s':>10} "
          f"{'build s':>8}", flush=True)
    for runs, benchmarks in parsed:
        print(data_branch_publish_row(runs, benchmarks, commits, keep), flush=True)
    if not site_branch:
        return
    print(f"\nthe same with site-branch: the data alone on benchmark-data, the dashboard the one "
          f"commit of gh-pages, replaced by each of the {commits} publishes (a bare remote; "
          f"'packed': what a clone of that branch receives, after gc; 'repo': every branch, "
          f"the replaced sites pruned); 'first s' the cold publish, 'publish s' the whole "
          f"publish of one more run, 'build s' its build")
    print(f"{'runs':>6} {'bench':>6} {'data MB':>8} {'data MB/run':>11} {'site MB':>8} "
          f"{'site MB/run':>11} {'repo MB':>8} {'repo MB/run':>11} {'commits':>8} "
          f"{'first s':>8} {'publish s':>10} {'build s':>8}", flush=True)
    for runs, benchmarks in parsed:
        print(site_branch_row(runs, benchmarks, commits, keep), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--benchmarks", type=int, default=200)
    parser.add_argument("--from-disk", action="store_true",
                        help="also write the history as run files and time reading them back")
    parser.add_argument("--update", action="store_true",
                        help="time a one-run update against full builds (no browser)")
    parser.add_argument("--growth", action="store_true",
                        help="data folder size per run, with and without compaction")
    parser.add_argument("--change-points", action="store_true",
                        help="cost of the whole-history change-point search, cold and +1 run")
    parser.add_argument("--scale", nargs="+", metavar="RUNSxBENCHMARKS",
                        help="full build and one-run update of large histories (no browser)")
    parser.add_argument("--window", type=int, default=0,
                        help="with --scale: change points in the newest N runs (0: all)")
    parser.add_argument("--layout", nargs="+", metavar="RUNSxBENCHMARKS",
                        help="the site's size by kind of file at scale and the writing cost "
                             "alone (history made in memory, no change points)")
    parser.add_argument("--page-cost", nargs="+", metavar="RUNSxBENCHMARKS",
                        help="CPU time per benchmark of making its page and data files, "
                             "by stage (history made in memory, no change points)")
    parser.add_argument("--cache-rows", nargs="+", metavar="RUNSxBENCHMARKS",
                        help="the build cache's rows as the earlier .npz and as Parquet")
    parser.add_argument("--git-growth", nargs="+", metavar="RUNSxBENCHMARKS",
                        help="the data branch's git history per published run")
    parser.add_argument("--commits", type=int, default=10,
                        help="with --git-growth: runs published one by one (default 10)")
    parser.add_argument("--site-branch", action="store_true",
                        help="with --git-growth: the same history again with the dashboard "
                             "published on a branch of its own (site-branch), side by side")
    parser.add_argument("--keep", metavar="FOLDER", default="",
                        help="with --scale: make the data folders in FOLDER, or reuse them; "
                             "with --git-growth: publish the histories --scale kept there")
    parser.add_argument("--scale-row", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale_row:
        runs, benchmarks, window = (int(v) for v in args.scale_row[:3])
        return print(scale_row(runs, benchmarks, window, args.scale_row[3]))
    if args.scale:
        return print_scale(args.scale, args.window, args.keep)
    if args.git_growth:
        return print_git_growth(args.git_growth, args.commits, args.site_branch, args.keep)
    if args.layout:
        return print_layout(args.layout)
    if args.page_cost:
        return print_page_cost(args.page_cost)
    if args.cache_rows:
        return print_cache_rows(args.cache_rows)
    if args.change_points:
        return print_change_point_costs(args.runs)
    if args.update:
        return print_updates(args.runs, args.benchmarks)
    if args.growth:
        return print_growth(args.runs, args.benchmarks)
    from playwright.sync_api import sync_playwright

    print(f"synthetic history: 200 benchmarks, {SAMPLES} samples each; Plotly asset "
          f"{len(plotly_js()) / 1024:.0f} KB (cacheable, counted apart)")
    header = (f"{'runs':>6} {'build s':>8} {'no-cp s':>8} {'read s':>7} {'site MB':>8} "
              f"{'files':>6} "
              f"{'first visit KB':>15} {'chart page KB':>14} {'chart ms':>9} | "
              f"{'whole-file MB':>13} {'whole chart ms':>14}")
    print(header)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for runs in args.runs:
            work = Path(tempfile.mkdtemp(prefix="site-build-"))
            try:
                row = measure(runs, work, browser, args.from_disk)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            read = "—" if row["read_s"] is None else f"{row['read_s']:.1f}"
            print(f"{runs:>6} {row['build_s']:>8.1f} {row['plain_s']:>8.1f} {read:>7} "
                  f"{row['site_mb']:>8.1f} "
                  f"{row['files']:>6} {row['first_kb']:>15.1f} {row['chart_kb']:>14.1f} "
                  f"{row['chart_ms']:>9.0f} | "
                  f"{row['whole_mb']:>13.1f} {row['whole_ms']:>14.0f}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
