"""Where reading a data folder goes, stage by stage, for this source tree and, side by side,
for another git revision's (same folder, same process order, one subprocess per revision).

The folder is the synthetic history of `site_build.py --scale` (hourly runs; every month but
the newest compacted into a Parquet archive, the newest month as run files). Per revision,
the best of `--repeats` passes over the run files (the revisions taking turns):

  text       reading a file and decoding its UTF-8
  depth      the nesting check before parsing
  parse      json.loads with the duplicate-key hook
  schema     the JSON Schema check (compiled validator)
  semantic   the rules a schema cannot say (units, finite samples, suites)
  objects    building Run objects from the checked dicts
  load       load_history end to end, the archives included (what `torch-bench site` reads)

    nice -n 19 .venv/bin/python benchmarks/history_read.py [--runs 1000] [--benchmarks 200]
        [--baseline main] [--repeats 2]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAGES = ("text", "depth", "parse", "schema", "semantic", "objects", "load")


def make_folder(runs: int, benchmarks: int, root: Path) -> None:
    sys.path.insert(0, str(HERE))
    from site_build import synthetic_runs, write_compacted_folder

    write_compacted_folder(itertools.islice(synthetic_runs(runs, benchmarks=benchmarks), runs),
                           root)


def time_stages(root: Path, repeats: int) -> dict[str, float]:
    """Seconds per stage over every run file of `root` (best of `repeats`), with whatever
    torch_bench is importable: each revision's own functions, found by the names both use."""
    from torch_bench import decoding
    from torch_bench.fileio import read_text
    from torch_bench.results import validate
    from torch_bench.results.schema import Run
    from torch_bench.store.layout import run_files
    from torch_bench.store.reader import load_history

    depth_check = getattr(decoding, "_quickly_judged_too_deep", decoding.json_too_deep)
    paths = list(run_files(root))
    best = dict.fromkeys(STAGES, float("inf"))
    for _ in range(repeats):
        spent = dict.fromkeys(STAGES, 0.0)
        for path in paths:
            started = time.perf_counter()
            text = read_text(path)
            spent["text"] += (lap := time.perf_counter()) - started
            depth_check(text)
            spent["depth"] += (started := time.perf_counter()) - lap
            doc = json.loads(text, object_pairs_hook=decoding._unique_object)
            spent["parse"] += (lap := time.perf_counter()) - started
            assert not validate._schema_problems(doc)
            spent["schema"] += (started := time.perf_counter()) - lap
            assert not list(validate._semantic_problems(doc))
            spent["semantic"] += (lap := time.perf_counter()) - started
            Run.from_dict(doc)
            spent["objects"] += time.perf_counter() - lap
        started = time.perf_counter()
        load_history(root)
        spent["load"] = time.perf_counter() - started
        best = {stage: min(best[stage], spent[stage]) for stage in STAGES}
    return best


def source_of(revision: str, into: Path) -> Path:
    """The `src` folder of a git revision, unpacked into `into`."""
    archive = subprocess.run(["git", "archive", revision, "src"], cwd=HERE.parent,
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def stages_with(source: Path, root: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--stages", str(root), "1"],
                          env={**os.environ, "PYTHONPATH": str(source)}, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--benchmarks", type=int, default=200)
    parser.add_argument("--baseline", default="main", help="a git revision to compare with")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--stages", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages:
        print(json.dumps(time_stages(Path(args.stages[0]), int(args.stages[1]))))
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "data"
        make_folder(args.runs, args.benchmarks, root)
        files = sum(1 for _ in root.rglob("*.json"))
        archives = sum(1 for _ in root.rglob("*.parquet"))
        sources = {"baseline": source_of(args.baseline, Path(scratch)),
                   "current": HERE.parent / "src"}
        best = {name: dict.fromkeys(STAGES, float("inf")) for name in sources}
        for _ in range(args.repeats):  # alternately, so neither gains from a warmer machine
            for name, source in sources.items():
                spent = stages_with(source, root)
                best[name] = {stage: min(best[name][stage], spent[stage]) for stage in STAGES}
        baseline, current = best["baseline"], best["current"]
    print(f"{args.runs} runs x {args.benchmarks} benchmarks: {files} run files, "
          f"{archives} archives; seconds, best of {args.repeats}")
    print(f"{'stage':<10} {args.baseline[:12]:>12} {'this tree':>10} {'ratio':>7}")
    for stage in STAGES:
        print(f"{stage:<10} {baseline[stage]:>12.2f} {current[stage]:>10.2f} "
              f"{baseline[stage] / max(current[stage], 1e-9):>6.1f}x")


if __name__ == "__main__":
    main()
