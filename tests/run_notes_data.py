"""A small data folder whose history steps up at one run, with run notes attached to that
run: an operator diff naming a hostile operator and a bisection's first bad commit with a
hostile subject."""

from __future__ import annotations

from pathlib import Path

from torch_bench.results.run_notes import bisect_note, op_diff_note
from torch_bench.results.schema import measured, new_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.notes import write_note

REPOSITORY = "octo/net"
RUNS = 8
STEP_AT = 5  # the first slower run
HOSTILE_OP = "aten::<img src=x onerror=window.__xss=1>"
HOSTILE_SUBJECT = "</script><script>window.__xss=1</script> slow path"
FIRST_BAD = "ab12cd34" * 5
PARAMS = {"hidden": 64, "device": "cpu"}


def sha_of(index: int) -> str:
    return f"{index:02d}" + "feed" * 9 + "ab"


def make_run(index: int):
    slower = 1.5 if index >= STEP_AT else 1.0
    samples = [2.0 * slower * (1 + 0.001 * k) for k in range(5)]
    return new_run([measured("planted", "mlp", "latency", samples, params=PARAMS),
                    measured("planted", "steady", "latency", [1.0, 1.001, 1.002],
                             params=PARAMS)],
                   created_at=f"2026-02-{index + 1:02d}T12:00:00Z",
                   git={"repository": REPOSITORY, "sha": sha_of(index), "branch": "main",
                        "message": f"commit {index}",
                        "url": f"https://github.com/{REPOSITORY}/commit/{sha_of(index)}"})


def explain_document() -> dict:
    """What `torch-bench explain --json` writes for one regressed case (12 notable changes:
    more than a note keeps)."""
    changes = [{"name": HOSTILE_OP, "device": "cpu", "shapes": None, "kind": "new",
                "base_us": 0.0, "head_us": 900.0, "delta_us": 900.0, "relative": None,
                "base_calls": 0.0, "head_calls": 2.0, "by_shape": []}]
    changes += [{"name": f"aten::op{k}", "device": "cpu", "shapes": None, "kind": "grew",
                 "base_us": 100.0, "head_us": 150.0 - k, "delta_us": 50.0 - k,
                 "relative": 0.5, "base_calls": 1.0, "head_calls": 1.0, "by_shape": []}
                for k in range(11)]
    return {"explained": [{
        "suite": "planted", "name": "mlp", "params": PARAMS, "metric": "latency",
        "runtime": None, "verdict": "regression", "ratio": 1.5, "errors": {},
        "traces": {"base": "/tmp/base.json", "head": "/tmp/head.json"},
        "diff": {"window": "forward", "headline": f"new {HOSTILE_OP} (+0.9 ms, 2 call(s))",
                 "base_total_us": 2000.0, "head_total_us": 3000.0, "base_kernels": 0,
                 "head_kernels": 0, "floor_us": 40.0,
                 "base_compilation": None,
                 "head_compilation": {"graphs": 2, "graph_breaks": 1, "frames": 1,
                                      "break_reasons": [["a reason", 1]]},
                 "changes": changes}}],
        "skipped": [], "budget_seconds": 600, "seconds": 3.0}


def bisect_document() -> dict:
    return {"ending": "found", "good": sha_of(STEP_AT - 1), "bad": sha_of(STEP_AT),
            "conclusion": "first bad commit", "first_bad_commit": {
                "sha": FIRST_BAD, "subject": HOSTILE_SUBJECT, "author": "Mallory <m@x>"}}


def write_data(root: Path, notes: bool = True):
    """The data folder; returns the runs, oldest first."""
    runs = [make_run(i) for i in range(RUNS)]
    store_in_folder(runs, root)
    if notes:
        stepped = runs[STEP_AT]
        write_note(root, stepped, op_diff_note(stepped.run_id, explain_document()))
        write_note(root, stepped, bisect_note(stepped.run_id, bisect_document(),
                                              ["planted/mlp"]))
    return runs
