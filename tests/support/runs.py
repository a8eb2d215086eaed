"""Run documents built in code for the comparison tests: seeded log-normal samples."""

from __future__ import annotations

import numpy as np

from torch_bench.results.schema import Run, failed, measured, new_run

BASE_ENV = {"torch": "2.13.0", "python": "3.11.9", "cuda": None, "cudnn": None,
            "cpu_model": "Test CPU", "cpu_count": 2, "threads": 2, "gpu_name": None,
            "gpu_count": 0, "driver": None, "fingerprint": "fp-test-0001"}


def samples(median: float, n: int = 60, cv: float = 0.01, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(v) for v in median * np.exp(rng.normal(0.0, cv, n))]


def ok(name: str, median: float, *, metric: str = "latency", suite: str = "demo",
       params: dict | None = None, seed: int = 0, cv: float = 0.01, n: int = 60,
       status: str = "ok"):
    return measured(suite, name, metric, samples(median, n, cv, seed), params=params or {},
                    status=status)


def bad(name: str, status: str, *, metric: str = "latency", suite: str = "demo",
        error: str = "it broke"):
    return failed(suite, name, metric, status, error)


def make_run(results, *, sha: str = "a" * 40, branch: str = "main", env: dict | None = None,
             created_at: str = "2026-01-01T00:00:00Z", run_id: str | None = None,
             pr: int | None = None, pr_title: str | None = None,
             base_branch: str | None = None) -> Run:
    git = {"repository": "octo/bench", "sha": sha, "branch": branch, "pr_number": pr,
           "pr_title": pr_title, "base_branch": base_branch}
    return new_run(results, created_at=created_at, run_id=run_id, git=git,
                   env=dict(env or BASE_ENV), ci={"provider": "local"})


def history(n: int, medians: dict[str, float], *, spread: float = 0.01, branch: str = "main",
            seed: int = 100) -> list[Run]:
    """`n` base-branch runs, one a day, each benchmark's level moving by `spread` (log sd)."""
    rng = np.random.default_rng(seed)
    runs = []
    for i in range(n):
        results = [ok(name, m * float(np.exp(rng.normal(0, spread))), seed=seed + i * 7 + j)
                   for j, (name, m) in enumerate(medians.items())]
        runs.append(make_run(results, sha=f"{i:040x}", branch=branch,
                             created_at=f"2025-12-{1 + i:02d}T00:00:00Z", run_id=f"hist-{i:03d}"))
    return runs


UNTRUSTED_ENV = {**BASE_ENV, "preflight": {"trusted": False, "findings": [
    {"check": "gpu_clock", "severity": "fail", "message": "GPU 0 throttled"}]}}


def untrusted(run: Run) -> Run:
    """The same run, recorded after a failed pre-flight check."""
    from dataclasses import replace

    return replace(run, env={**run.env, "preflight": UNTRUSTED_ENV["preflight"]})


def where_p_is(p_of, target: float, low: float = 1.0, high: float = 1.5) -> float:
    """The slowdown factor at which `p_of` (falling as the slowdown grows) crosses `target`:
    for comparisons built right at a threshold."""
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if p_of(middle) > target else (low, middle)
    return high
