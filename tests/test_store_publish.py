"""Publishing the dashboard beside the data on a real bare repository, and reading it back."""

import subprocess
from pathlib import Path

from torch_bench.results.schema import measured, new_run
from torch_bench.store.publish import BuiltSite, checkout_data, publish_site
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


def site_builder(tmp_path: Path, seen: list):
    """A one-page site saying how many runs it was built from, each build in a new folder."""
    def build(data: Path, previous=None) -> BuiltSite:
        seen.append(len(load_history(data).runs))
        site = tmp_path / f"site-{len(list(tmp_path.glob('site-*')))}"
        site.mkdir()
        (site / "index.html").write_text(f"<p>{seen[-1]} runs</p>")
        (site / ".nojekyll").write_text("")
        return BuiltSite(site)
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

    def racing_build(data, previous):
        if not seen:  # another runner stores a run while this site is being built
            store_runs([a_run(5.0)], target)
        return build(data, previous)

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


def commit_files(remote, files, tmp_path, branch="gh-pages"):
    """Push a commit holding `files` (path -> text) on top of the branch, as a user would."""
    work = tmp_path / "user-checkout"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    run = {"cwd": work, "check": True, "capture_output": True}
    subprocess.run(["git", "fetch", "-q", str(remote), branch], **run)
    subprocess.run(["git", "checkout", "-q", "FETCH_HEAD"], **run)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-qm", "user"],
                   **run)
    subprocess.run(["git", "push", "-q", str(remote), f"HEAD:refs/heads/{branch}"], **run)


def show(remote, path, branch="gh-pages"):
    return subprocess.run(["git", "-C", str(remote), "show", f"{branch}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def one_page_site(tmp_path, pages):
    def build(data, previous=None):
        site = tmp_path / f"site-{len(list(tmp_path.glob('site-*')))}"
        for path, text in pages.items():
            (site / path).parent.mkdir(parents=True, exist_ok=True)
            (site / path).write_text(text)
        return BuiltSite(site)
    return build


def test_publish_keeps_the_owners_files_and_removes_only_its_own_old_pages(tmp_path):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    store_runs([a_run(1.0)], target)
    commit_files(remote, {"CNAME": "bench.example.com\n", "docs/guide.md": "# guide\n"},
                 tmp_path)
    publish_site(target, None, one_page_site(tmp_path, {"index.html": "v1",
                                                        "old/page.html": "gone soon"}))
    publish_site(target, None, one_page_site(tmp_path, {"index.html": "v2"}))
    files = files_at(remote)
    assert {"CNAME", "docs/guide.md", "index.html"} <= files
    assert not any(f.startswith("old/") for f in files)
    assert show(remote, "CNAME") == "bench.example.com\n" and show(remote, "index.html") == "v2"
    assert sum(f.startswith("benchmarks/runs/") for f in files) == 1


def test_first_publish_refuses_to_overwrite_the_owners_index_then_uses_a_sub_folder(tmp_path):
    import pytest

    from torch_bench.store.site_files import ForeignFiles

    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    store_runs([a_run(1.0)], target)
    commit_files(remote, {"index.html": "<h1>my project</h1>"}, tmp_path)
    before = files_at(remote)
    with pytest.raises(ForeignFiles, match="index.html.*site-folder"):
        publish_site(target, None, one_page_site(tmp_path, {"index.html": "dashboard"}))
    assert files_at(remote) == before
    report = publish_site(target, None, one_page_site(tmp_path, {"index.html": "dashboard"}),
                          site_folder="dashboard")
    assert report.commit
    assert show(remote, "index.html") == "<h1>my project</h1>"
    assert show(remote, "dashboard/index.html") == "dashboard"


def test_a_dashboard_published_before_the_manifest_is_replaced(tmp_path):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    store_runs([a_run(1.0)], target)
    legacy = "<footer>Static dashboard built by <code>torch-bench site</code>.</footer>"
    commit_files(remote, {"index.html": legacy, "CNAME": "x\n"}, tmp_path)
    publish_site(target, None, one_page_site(tmp_path, {"index.html": "new"}))
    assert show(remote, "index.html") == "new" and show(remote, "CNAME") == "x\n"


def test_dashboard_url_names_the_site_folder():
    from torch_bench.action.context import read_context

    ctx = read_context({"GITHUB_REPOSITORY": "octo/bench"})
    assert ctx.dashboard_url() == "https://octo.github.io/bench/"
    assert ctx.dashboard_url("dashboard") == "https://octo.github.io/bench/dashboard/"


def test_dashboard_url_is_the_data_repositorys_pages():
    from torch_bench.action.context import read_context
    from torch_bench.action.inputs import SITE_INPUTS, read_inputs
    from torch_bench.action.stages import data_repository_of

    ctx = read_context({"GITHUB_REPOSITORY": "octo/bench"})
    assert ctx.dashboard_url(".", "octo/perf-data") == "https://octo.github.io/perf-data/"
    # a user or organisation site is served at the root of its host
    assert ctx.dashboard_url(".", "Octo/octo.github.io") == "https://octo.github.io/"
    assert ctx.dashboard_url("bench", "octo/Octo.github.io") == "https://octo.github.io/bench/"
    assert read_context({"GITHUB_REPOSITORY": "octo/bench",
                         "GITHUB_SERVER_URL": "https://ghe.example"}).dashboard_url() is None

    def named(**inputs: str) -> str | None:
        environ = {f"TB_{name.upper().replace('-', '_')}": value
                   for name, value in inputs.items()}
        return data_repository_of(read_inputs(environ, SITE_INPUTS))

    assert named() == ""
    assert named(**{"data-repository": "octo/perf-data"}) == "octo/perf-data"
    assert named(**{"data-remote": "https://github.com/octo/perf-data.git"}) == "octo/perf-data"
    assert named(**{"data-remote": "git@github.com:octo/perf.data.git"}) == "octo/perf.data"
    # a local bare repository stands for this one; a remote on another host has no Pages
    # anyone can name, and no link is given
    assert named(**{"data-remote": "/srv/git/bench.git",
                    "data-repository": "octo/perf-data"}) == ""
    assert named(**{"data-remote": "https://gitlab.example/octo/bench.git"}) is None
    assert named(**{"data-remote": "git@gitlab.example:octo/bench.git"}) is None
    assert ctx.dashboard_url(".", None) is None


def test_site_publish_from_the_cli_into_a_sub_folder(tmp_path, cli):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "data")
    store_runs([a_run(1.0)], target)
    commit_files(remote, {"index.html": "<h1>mine</h1>", "CNAME": "x\n"}, tmp_path)
    refused = cli("site", "--publish", "--remote", str(remote), "--out", "built")
    assert refused.returncode == 2 and "site-folder" in refused.stderr
    errors = [line for line in refused.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in refused.stderr
    cli("site", "--publish", "--remote", str(remote), "--out", "built",
        "--site-folder", "dashboard", check=True)
    files = files_at(remote)
    assert "dashboard/index.html" in files and ".torch-bench-site.json" not in files
    assert show(remote, "index.html") == "<h1>mine</h1>" and show(remote, "CNAME") == "x\n"
