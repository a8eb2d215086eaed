"""Publishing the dashboard beside the data on a real bare repository, and reading it back."""

import subprocess

from torch_bench.results.schema import measured, new_run
from torch_bench.store.publish import checkout_data, publish_site
from torch_bench.store.reader import load_history
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.retry import RetryPolicy


def bare(tmp_path):
    remote = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return remote


def a_run(value):
    return new_run([measured("s", "b", "latency", [value])])


def files_at(remote, branch="gh-pages"):
    listed = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", branch],
                            capture_output=True, text=True, check=True).stdout
    return set(listed.split())


def site_builder(tmp_path, seen):
    def build(data):
        seen.append(len(load_history(data).runs))
        site = tmp_path / f"site{len(seen)}"
        site.mkdir()
        (site / "index.html").write_text(f"<p>{seen[-1]} runs</p>")
        (site / ".nojekyll").write_text("")
        return site
    return build


def test_site_is_published_beside_the_data_and_data_reads_back(tmp_path):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    first, second = a_run(1.0), a_run(2.0)
    store_runs([first, second], target)
    seen = []
    report = publish_site(target, None, site_builder(tmp_path, seen))
    assert report.commit and seen == [2]
    files = files_at(remote)
    assert {"index.html", ".nojekyll"} <= files
    assert sum(f.startswith("benchmarks/runs/") for f in files) == 2
    again = publish_site(target, None, site_builder(tmp_path, seen))
    assert again.commit is None  # nothing changed
    data = checkout_data(target, None, tmp_path / "read")
    assert {r.run_id for r in load_history(data).runs} == {first.run_id, second.run_id}
    assert not (tmp_path / "read" / "index.html").exists()  # only the data folder


def test_a_lost_race_rebuilds_from_the_new_tip(tmp_path):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    store_runs([a_run(1.0)], target)
    seen = []
    build = site_builder(tmp_path, seen)

    def racing_build(data):
        if not seen:  # another runner stores a run while this site is being built
            store_runs([a_run(5.0)], target)
        return build(data)

    report = publish_site(target, None, racing_build, RetryPolicy(attempts=3, base_delay=0.01))
    assert report.attempts == 2 and seen == [1, 2]
    assert sum(f.startswith("benchmarks/runs/") for f in files_at(remote)) == 2


def test_missing_branch_reads_as_empty_history(tmp_path):
    target = Target(str(bare(tmp_path)), "gh-pages", "benchmarks")
    data = checkout_data(target, None, tmp_path / "read")
    assert load_history(data).runs == ()


def test_retention_edit_keeps_the_newest_runs_per_benchmark(tmp_path):
    from torch_bench.cli import main
    from torch_bench.store.publish import edit_data

    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    runs = [new_run([measured("s", "b", "latency", [v])], created_at=f"2026-0{m}-01T00:00:00Z")
            for m, v in ((1, 1.0), (2, 2.0), (3, 3.0))]
    store_runs(runs, target)
    report = edit_data(target, None,
                       lambda data: main(["data", "prune", "--data", str(data), "--keep", "1"]),
                       "keep one")
    assert report.commit
    left = [f for f in files_at(remote) if f.startswith("benchmarks/runs/")]
    assert left == [f"benchmarks/runs/2026/03/{runs[2].run_id}.json"]
    again = edit_data(target, None,
                      lambda data: main(["data", "prune", "--data", str(data), "--keep", "1"]),
                      "keep one")
    assert again.commit is None  # nothing left to prune: no empty commit
