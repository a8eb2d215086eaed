"""The history as one pandas table, a row per result, for analysis and the dashboard."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from torch_bench.results.schema import Run

COLUMNS = ["run_id", "created_at", "sha", "branch", "repository", "pr_number", "fingerprint",
           "suite", "group", "name", "params", "metric", "unit", "direction", "status",
           "benchmark_id", "n", "median", "mean", "std", "iqr", "min", "max", "p90"]


def results_frame(runs: Iterable[Run]) -> pd.DataFrame:
    rows = []
    for run in runs:
        for r in run.results:
            s = r.summary
            rows.append({
                "run_id": run.run_id,
                "created_at": run.created_at,
                "sha": run.git.get("sha"),
                "branch": run.git.get("branch"),
                "repository": run.git.get("repository"),
                "pr_number": run.git.get("pr_number"),
                "fingerprint": run.fingerprint,
                "suite": r.suite,
                "group": r.group,
                "name": r.name,
                "params": json.dumps(dict(r.params), sort_keys=True),
                "metric": r.metric,
                "unit": r.unit,
                "direction": r.direction,
                "status": r.status,
                "benchmark_id": r.benchmark_id,
                **({k: getattr(s, k) for k in ("n", "median", "mean", "std", "iqr", "min",
                                               "max", "p90")} if s else {}),
            })
    return pd.DataFrame(rows, columns=COLUMNS)
