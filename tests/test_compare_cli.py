"""`torch-bench compare`: files in, report, JSON, Actions outputs and exit status out; the
automatic baseline from a data folder and a real git repository."""

from __future__ import annotations

import json
import re
import subprocess

from support.runs import history, make_run, ok, untrusted
from torch_bench.results.document import load_run, save_run
from torch_bench.store.layout import run_path


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo, message):
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write_pair(tmp_path, head_factor=1.15):
    base = make_run([ok("steady", 10, seed=1), ok("slower", 10, seed=2)], run_id="base-1")
    head = make_run([ok("steady", 10, seed=11), ok("slower", 10 * head_factor, seed=12)],
                    sha="b" * 40, branch="feature", pr=5, run_id="head-1")
    save_run(base, tmp_path / "base.json")
    save_run(head, tmp_path / "head.json")


def store(data, runs):
    for run in runs:
        save_run(run, data / run_path(run))


def test_compare_files_prints_the_report_and_writes_everything(cli, tmp_path):
    write_pair(tmp_path)
    store(tmp_path / "data", history(12, {"steady": 10, "slower": 10}))
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    done = cli("compare", "base.json", "head.json", "--history", "data", "--markdown",
               "report.md", "--json", "verdicts.json", "--fork-dir", "handoff",
               env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
                    "GITHUB_OUTPUT": str(outputs)})
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    assert "### torch-bench: 1 regression" in report
    # the terminal gets its own report: plain text and tables, no Markdown
    assert re.match(r"torch-bench: 1 regression; no change beyond ±\d+\.\d% in 1 benchmark\n",
                    done.stdout)
    assert re.search(r"demo/slower +│ latency +│ regression +│ .* │ +\+1\d\.\d% │", done.stdout)
    assert "###" not in done.stdout and "&#" not in done.stdout and "| ---" not in done.stdout
    assert "::warning title=torch-bench regression::demo/slower latency: +" in done.stdout
    assert summary.read_text() == report
    assert "regression=1\n" in outputs.read_text()
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    assert {v["name"]: v["verdict"] for v in verdicts["verdicts"]} == {
        "slower": "regression", "steady": "unchanged"}
    assert verdicts["verdicts"][0]["history_runs"] == 13  # 12 runs of history + the base
    assert (tmp_path / "handoff" / "pr-number.txt").read_text() == "5\n"


def test_fail_on_regression_sets_the_exit_status(cli, tmp_path):
    write_pair(tmp_path)
    store(tmp_path / "data", history(12, {"steady": 10, "slower": 10}))
    flags = ("--history", "data", "--fail-on-regression")
    assert cli("compare", "base.json", "head.json", *flags).returncode == 1
    write_pair(tmp_path, head_factor=1.0)
    assert cli("compare", "base.json", "head.json", *flags).returncode == 0


def test_without_history_a_clear_slowdown_does_not_fail_the_job(cli, tmp_path):
    write_pair(tmp_path)  # 15% slower, but nothing says how much runs move by themselves
    done = cli("compare", "base.json", "head.json", "--fail-on-regression", "--json", "v.json")
    assert done.returncode == 0, done.stderr
    slower = next(v for v in json.loads((tmp_path / "v.json").read_text())["verdicts"]
                  if v["name"] == "slower")
    assert (slower["verdict"], slower["note"]) == ("inconclusive",
                                                   "not enough history (1 runs; 3 needed)")
    assert "not enough history (1 run; 3 needed)" in done.stdout  # the headline


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    write_pair(tmp_path)
    cases = [
        (("compare", "missing.json", "head.json"), "BASE: missing.json: no such file"),
        (("compare", "auto", "head.json"), "needs --history"),
        (("compare", "base.json", "head.json", "--min-effect-for", "x"), "KEY=FRACTION"),
        (("compare", "base.json", "head.json", "--min-effect", "-1"), "not a fraction"),
        (("compare", "base.json", "head.json", "--min-effect", "nan"), "not a fraction"),
        (("compare", "base.json", "head.json", "--false-alarm-rate", "0"),
         "--false-alarm-rate: '0' is out of range: expected 1e-06 to below 0.5"),
        (("compare", "base.json", "head.json", "--false-alarm-rate", "nan"),
         "--false-alarm-rate: 'nan' is not a finite number"),
        (("compare", "base.json", "head.json", "--per-pr-level", "inf"),
         "--per-pr-level: 'inf' is not a finite number"),
        (("compare", "base.json", "head.json", "--min-history", "1"),
         "--min-history: 1 must be at least 2"),
        (("compare", "base.json", "head.json", "--pr", "-5"), "--pr: -5 must be at least 1"),
        (("compare", "base.json", "head.json", "--confirm-max-rounds", "101"),
         "--confirm-max-rounds: '101' is out of range: expected 2 to 100 rounds"),
        (("compare", "base.json", "head.json", "--confirm-max-rounds", "1"),
         "--confirm-max-rounds: '1' is out of range: expected 2 to 100 rounds"),
        (("ab", "--base", ".", "--head", ".", "--rounds", "0"), "--rounds: 0 must be at least 1"),
        (("ab", "--base", ".", "--head", ".", "--confirm-rounds", "-1"),
         "--confirm-rounds: -1 must be at least 0"),
        (("ab", "--base", ".", "--head", ".", "--per-pr-level", "nan"),
         "--per-pr-level: 'nan' is not a finite number"),
    ]
    for args, message in cases:
        done = cli(*args)
        assert done.returncode == 2 and message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_auto_baseline_is_the_nearest_ancestor_of_the_merge_base_with_results(cli, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    c1 = commit(repo, "c1")
    commit(repo, "c2")  # the merge-base, which has no results
    git(repo, "checkout", "-q", "-b", "feature")
    c3 = commit(repo, "c3")
    git(repo, "checkout", "-q", "main")
    c4 = commit(repo, "c4")
    data = tmp_path / "data"
    store(data, history(12, {"slower": 10}))
    at_c1 = make_run([ok("slower", 10, seed=31)], sha=c1, run_id="main-c1",
                     created_at="2026-01-02T00:00:00Z")
    at_c4 = make_run([ok("slower", 13, seed=32)], sha=c4, run_id="main-c4",
                     created_at="2026-01-04T00:00:00Z")
    other_branch = make_run([ok("slower", 10, seed=33)], sha=c1, branch="release",
                            run_id="release-c1", created_at="2026-01-03T00:00:00Z")
    store(data, [at_c1, at_c4, other_branch])
    head = make_run([ok("slower", 11.5, seed=34)], sha=c3, branch="feature",
                    base_branch="main", run_id="head-c3", created_at="2026-01-05T00:00:00Z")
    save_run(head, tmp_path / "head.json")
    done = cli("compare", "auto", "head.json", "--history", "data", "--repo-dir", "repo",
               "--json", "v.json", "--no-github")
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "v.json").read_text())
    assert result["base_runs"] == ["main-c1"]
    assert "an ancestor 1 commits before the merge-base" in result["baseline"]
    assert result["verdicts"][0]["verdict"] == "regression"
    assert result["verdicts"][0]["history_runs"] == 13  # 12 older runs + the baseline

    no_git = cli("compare", "auto", "head.json", "--history", "data", "--repo-dir",
                 str(tmp_path / "nowhere"), "--json", "v.json", "--no-github")
    assert no_git.returncode == 0, no_git.stderr
    fallback = json.loads((tmp_path / "v.json").read_text())
    assert fallback["base_runs"] == ["main-c4"]
    assert "latest" in fallback["baseline"]
    # 13 -> 11.5 would be 12% faster, but the baseline run is itself 30% off the rest of the
    # history: the baseline level is the history's (about 10.2), and that odd run widens
    # the noise, so nothing is called
    assert 1.05 < fallback["verdicts"][0]["ratio"] < 1.2
    assert fallback["verdicts"][0]["verdict"] == "unchanged"
    assert fallback["verdicts"][0]["detectable"] > 0.12


def test_an_untrusted_head_is_reported_but_not_alerted_on(cli, tmp_path):
    write_pair(tmp_path)
    save_run(untrusted(load_run(tmp_path / "head.json")), tmp_path / "head.json")
    store(tmp_path / "data", history(12, {"steady": 10, "slower": 10}))
    outputs = tmp_path / "outputs.txt"
    done = cli("compare", "base.json", "head.json", "--history", "data", "--json",
               "verdicts.json", "--fail-on-regression",
               env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs)})
    assert done.returncode == 0, done.stderr
    assert "::warning" not in done.stdout
    assert "pre-flight check failed on the head" in done.stdout
    assert "has-regression=false\n" in outputs.read_text()
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    assert verdicts["untrusted_sides"] == ["head"]
    slower = next(v for v in verdicts["verdicts"] if v["name"] == "slower")
    assert (slower["verdict"], slower["note"]) == (
        "inconclusive", "pre-flight check failed (measured as regression)")


def test_an_untrusted_base_file_is_refused(cli, tmp_path):
    write_pair(tmp_path)
    save_run(untrusted(load_run(tmp_path / "base.json")), tmp_path / "base.json")
    done = cli("compare", "base.json", "head.json")
    assert done.returncode == 2
    assert done.stderr.strip() == ("torch-bench: error: BASE base.json: every run failed its "
                                   "pre-flight check (untrusted) and cannot be a baseline")
