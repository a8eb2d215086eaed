"""A/B mode with two real checkouts: each side's code is the one measured, rounds interleave,
and a flagged regression is re-run to confirm."""

from __future__ import annotations

import json

import pytest

from torch_bench.analyze.ab import schedule
from torch_bench.analyze.verdicts import compare_runs

SUITE_MODULE = '''
import os
import numpy as np
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

FACTORS = {factors!r}


def plan(options, device):
    return [CaseSpec(suite="abwork", name=name, params={{}}, outputs=(Output("latency"),))
            for name in sorted(FACTORS)]


def run_case(case, ctx):
    rng = np.random.default_rng(os.getpid())
    values = FACTORS[case.name] * np.exp(rng.normal(0.0, 0.01, 40))
    return [measured(case.suite, case.name, "latency", values.tolist())]


SUITE = Suite(name="abwork", description="A/B test work", options=(), plan=plan,
              run_case=run_case, record_memory=False)
'''


def checkout(root, factors):
    package = root / "abwork"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "suite.py").write_text(SUITE_MODULE.format(factors=factors))
    return root


def test_schedule_alternates_the_order_each_round():
    order = [(s.round, s.side) for s in schedule(3)]
    assert order == [(0, "base"), (0, "head"), (1, "head"), (1, "base"), (2, "base"),
                     (2, "head")]


@pytest.mark.slow
def test_ab_measures_each_checkout_and_confirms_the_regression(cli, tmp_path):
    checkout(tmp_path / "base", {"same": 1.0, "slow": 1.0})
    checkout(tmp_path / "head", {"same": 1.0, "slow": 1.3})
    done = cli("ab", "--base", "base", "--head", "head", "--rounds", "2", "--confirm-rounds",
               "1", "--out-dir", "rounds", "--json", "v.json", "--no-github", "--",
               "--suite", "abwork.suite", "--no-preflight")
    assert done.returncode == 0, done.stderr
    verdicts = {v["name"]: v for v in json.loads((tmp_path / "v.json").read_text())["verdicts"]}
    assert verdicts["slow"]["verdict"] == "regression"
    assert verdicts["slow"]["confirmed"] is True
    assert verdicts["slow"]["ratio"] == pytest.approx(1.3, rel=0.02)
    assert verdicts["same"]["verdict"] == "unchanged"
    kept = sorted(p.name for p in (tmp_path / "rounds").iterdir())
    assert kept == ["base-confirm-round1.json", "base-round1.json", "base-round2.json",
                    "calibration.json",
                    "head-confirm-round1.json", "head-round1.json", "head-round2.json"]
    confirm = json.loads((tmp_path / "rounds" / "head-confirm-round1.json").read_text())
    assert [r["name"] for r in confirm["results"]] == ["slow"]  # only the flagged one


def test_untrusted_rounds_do_not_teach_the_noise():
    from support.runs import make_run, ok, untrusted

    def side(medians, prefix):
        return [make_run([ok("x", m, seed=i)], run_id=f"{prefix}{i}") for i, m in
                enumerate(medians)]

    base, head = side([10, 10.1, 9.9], "b"), side([10, 9.95, 10.05], "h")
    wild = [untrusted(run) for run in side([14, 7], "w")]
    clean = compare_runs(base, head, side_by_side=True).verdicts[0].assessment
    mixed = compare_runs([*base, *wild], head, side_by_side=True).verdicts[0].assessment
    assert mixed.noise == clean.noise and clean.noise < 0.02
    assert clean.df >= 4  # 3 rounds a side, one mean each
