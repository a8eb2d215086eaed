"""A site rebuilt after new runs, reusing what the previous build learned, is byte-identical to
a site built from scratch from the same history."""

from __future__ import annotations

import json
import math
from pathlib import Path

from torch_bench.render import paths
from torch_bench.render.build import build_site
from torch_bench.results.schema import measured, new_run
from torch_bench.store.reader import History


def run(index: int):
    step = 1.1 if index >= 40 else 1.0
    results = [measured("rnns", name, "forward_time",
                        [base * step * (1 + 0.01 * math.sin(index * 7 + k)) for k in range(5)],
                        params={"hidden_size": 64})
               for name, base in (("lstm", 2.0), ("gru", 3.0))]
    day, hour = divmod(index, 24)
    return new_run(results, created_at=f"2026-02-{day + 1:02d}T{hour:02d}:00:00Z",
                   git={"sha": f"{index:040x}", "branch": "main", "message": f"change {index}"},
                   ci={"provider": "local"}, env={"torch": "2.5.0", "fingerprint": "f"})


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_update_with_a_new_run_equals_a_full_build(tmp_path):
    runs = [run(i) for i in range(101)]
    updated = build_site(History(tuple(runs[:100])), tmp_path / "site")
    memo = json.loads((updated / paths.CHANGE_POINT_MEMO).read_text(encoding="utf-8"))
    assert memo  # complete chunks of the history were remembered
    build_site(History(tuple(runs)), updated)
    fresh = build_site(History(tuple(runs)), tmp_path / "fresh")
    assert tree(updated) == tree(fresh)
    # the step 61 runs back is marked, over the whole history
    series = json.loads(next((fresh / "json" / "series").glob("rnns-lstm-*.json")).read_text())
    assert [c["index"] for c in series["change_points"]] == [40]


def test_a_damaged_memo_is_ignored(tmp_path):
    runs = tuple(run(i) for i in range(90))
    site = build_site(History(runs), tmp_path / "site")
    (site / paths.CHANGE_POINT_MEMO).write_text("{not json", encoding="utf-8")
    build_site(History(runs), site)
    assert tree(site) == tree(build_site(History(runs), tmp_path / "fresh"))
