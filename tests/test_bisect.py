"""The bisection's search and grading, without measuring: a comparator that knows each
commit's level stands in for the A/B rounds; the grading judges real run documents."""

from __future__ import annotations

import numpy as np
import pytest

from support.runs import history, make_run, ok, untrusted, where_p_is
from torch_bench.analyze.bisect import (
    Ending,
    Grade,
    Judgement,
    bisect,
    grade_endpoints,
    grade_step,
    targets,
)
from torch_bench.analyze.bisect_range import previous_commit, regression_range
from torch_bench.analyze.bisect_runs import RoundsClassifier
from torch_bench.analyze.rule import RulePolicy
from torch_bench.analyze.verdicts import compare_runs
from torch_bench.errors import UserError
from torch_bench.report.bisect_report import conclusion, markdown

COMMITS = [f"{i:02d}" + "c" * 38 for i in range(16)]


class Levels:
    """A comparator over commits whose level (1 = fast) is known; `unclear` commits are
    always ambiguous. Records the candidates it was asked about."""

    def __init__(self, levels, unclear=(), once=()):
        self.levels = dict(zip(COMMITS, levels, strict=False))
        self.unclear = {COMMITS[i] for i in unclear}
        self.once = {COMMITS[i] for i in once}  # ambiguous the first time only (noise)
        self.asked = []

    def __call__(self, good, candidate, bad):
        self.asked.append(candidate)
        if self.levels[good] == self.levels[bad]:
            return Judgement(Grade.NO_CHANGE)
        if candidate is None:
            return Judgement(Grade.BAD)
        if candidate in self.unclear or (candidate in self.once
                                         and self.asked.count(candidate) == 1):
            return Judgement(Grade.AMBIGUOUS)
        return Judgement(Grade.GOOD if self.levels[candidate] == self.levels[good]
                         else Grade.BAD)


def slow_from(k, n=16):
    return [1.0] * k + [2.0] * (n - k)


@pytest.mark.parametrize("k", range(1, 16))
def test_every_slow_commit_of_sixteen_is_found_in_at_most_four_steps(k):
    comparator = Levels(slow_from(k))
    result = bisect(COMMITS, comparator, max_steps=10)
    assert result.ending is Ending.FOUND and result.first_bad == COMMITS[k]
    assert len(result.steps) <= 4
    assert conclusion(result).startswith(f"first bad commit {COMMITS[k][:10]}")


def test_the_first_step_measures_the_middle_and_the_endpoints():
    comparator = Levels(slow_from(9))
    result = bisect(COMMITS, comparator, max_steps=10)
    assert comparator.asked[0] == COMMITS[7]
    assert (result.steps[0].good, result.steps[0].bad) == (COMMITS[0], COMMITS[15])
    assert [s.grade for s in result.steps][:1] == [Grade.GOOD]


def test_endpoints_that_do_not_differ_end_as_no_single_commit_after_one_step():
    result = bisect(COMMITS, Levels([1.0] * 16), max_steps=10)
    assert result.ending is Ending.NOT_FOUND and result.first_bad is None
    assert len(result.steps) == 1
    assert conclusion(result).startswith("no single commit found")


def test_adjacent_endpoints_are_measured_alone():
    pair = COMMITS[:2]
    found = bisect(pair, Levels([1.0, 2.0]), max_steps=3)
    assert found.ending is Ending.FOUND and found.first_bad == pair[1]
    assert found.steps[0].candidate is None
    assert bisect(pair, Levels([1.0, 1.0]), max_steps=3).ending is Ending.NOT_FOUND


def test_an_ambiguous_commit_is_stepped_around_and_the_answer_is_still_found():
    comparator = Levels(slow_from(10), unclear=[7])
    result = bisect(COMMITS, comparator, max_steps=10)
    assert result.ending is Ending.FOUND and result.first_bad == COMMITS[10]
    assert result.ambiguous == (COMMITS[7],)
    assert comparator.asked[1] == COMMITS[8]  # the neighbour of the ambiguous middle


def test_a_commit_ambiguous_once_is_measured_again_when_nothing_else_is_left():
    comparator = Levels(slow_from(8), once=[7, 8])
    result = bisect(COMMITS, comparator, max_steps=20)
    assert result.ending is Ending.FOUND and result.first_bad == COMMITS[8]
    assert comparator.asked.count(COMMITS[8]) == 2


def test_noise_around_the_change_ends_ambiguous_between_the_bounds():
    comparator = Levels(slow_from(8), unclear=[7, 8])
    result = bisect(COMMITS, comparator, max_steps=20)
    assert comparator.asked.count(COMMITS[7]) == comparator.asked.count(COMMITS[8]) == 2
    assert result.ending is Ending.AMBIGUOUS and result.first_bad is None
    assert (result.good, result.bad) == (COMMITS[6], COMMITS[9])
    assert set(result.ambiguous) == {COMMITS[7], COMMITS[8]}
    assert conclusion(result).startswith(
        f"ambiguous: noise made the search undecidable between {COMMITS[6][:10]} (good) "
        f"and {COMMITS[9][:10]} (bad)")


def test_the_step_budget_stops_the_search_and_says_how_far_it_got():
    comparator = Levels(slow_from(5))
    result = bisect(COMMITS, comparator, max_steps=2)
    assert result.ending is Ending.BUDGET and len(result.steps) == 2
    assert (result.good, result.bad) == (COMMITS[3], COMMITS[7])
    assert "step budget spent (2 step(s))" in conclusion(result)
    assert "4 candidate(s) left" in conclusion(result)  # 04..07


def test_an_always_ambiguous_range_spends_its_budget_not_more():
    result = bisect(COMMITS, Levels(slow_from(5), unclear=range(1, 15)), max_steps=6)
    assert result.ending is Ending.BUDGET and len(result.steps) == 6


# -- grading real comparisons ---------------------------------------------------------------

def rounds(level, seed, n=3, name="step"):
    return [make_run([ok(name, level, suite="bis", seed=seed + i, cv=0.01),
                      ok("flat", 1.0, suite="bis", seed=seed + 50 + i, cv=0.01)],
                     sha=f"{seed:040x}", run_id=f"r{seed}-{i}",
                     created_at=f"2026-01-01T00:00:0{i}Z") for i in range(n)]


def judge(base, head):
    return compare_runs(base, head, side_by_side=True, ignore_environment=True)


GOOD, SLOW = rounds(1.0, 10), rounds(1.5, 20)


def suite_rounds(factor, seed, n=3):
    """`n` rounds of 8 benchmarks (enough timings for a whole-run shift), each moving by 2%
    from round to round; b3 `factor` times slower."""
    rng = np.random.default_rng(seed)
    return [make_run([ok(f"b{j}", (1.0 + j) * (factor if j == 3 else 1.0)
                         * float(np.exp(rng.normal(0, 0.02))), suite="bis",
                         seed=seed + 10 * i + j) for j in range(8)],
                     sha=f"{seed:040x}", run_id=f"s{seed}-{i}",
                     created_at=f"2026-01-01T00:00:0{i}Z") for i in range(n)]


def test_a_step_keeps_the_whole_per_pr_level_for_the_benchmarks_it_follows(tmp_path):
    """A PR report shares the per-PR level with the whole run's test (the benchmarks get 4%);
    a bisect step follows benchmarks and never reports the whole run, so it keeps all 5%: a
    benchmark whose p lies between BH's first limits at 4% and 5% is still followed."""
    step = RoundsClassifier(pool=None, run_args=(), rounds=3, out_dir=tmp_path,
                            policy=RulePolicy(), environ={})
    good = suite_rounds(1.0, 300)

    def p_of(factor):
        return next(v for v in step.judge(good, suite_rounds(factor, 400)).verdicts
                    if v.name == "b3").assessment.p_value

    factor = where_p_is(p_of, 0.05 * 0.9 / 8)
    bad = suite_rounds(factor, 400)
    assert 0.05 * 0.8 / 8 < p_of(factor) < 0.05 / 8
    followed = targets(step.judge(good, bad))
    assert [v.name for v in followed.values()] == ["b3"]
    in_a_report = compare_runs(good, bad, side_by_side=True, ignore_environment=True)
    assert in_a_report.run_shift is not None and not targets(in_a_report)


def test_the_endpoints_name_the_regressed_benchmark_to_follow():
    endpoints = judge(GOOD, SLOW)
    assert list(targets(endpoints)) == [v.benchmark_id for v in endpoints.verdicts
                                         if v.name == "step"]
    assert grade_endpoints(endpoints).grade is Grade.BAD
    assert grade_endpoints(judge(GOOD, rounds(1.0, 30))).grade is Grade.NO_CHANGE


@pytest.mark.parametrize(("level", "grade"), [(1.0, Grade.GOOD), (1.5, Grade.BAD),
                                              (1.22, Grade.AMBIGUOUS)])
def test_a_candidate_is_graded_by_both_of_its_comparisons(level, grade):
    followed = targets(judge(GOOD, SLOW))
    candidate = rounds(level, 40)
    judged = grade_step(followed, judge(GOOD, candidate), judge(candidate, SLOW))
    assert judged.grade is grade
    assert "bis/step:" in judged.detail


def test_a_candidate_slower_than_both_bounds_is_ambiguous():
    followed = targets(judge(GOOD, SLOW))
    candidate = rounds(2.5, 60)
    assert grade_step(followed, judge(GOOD, candidate), judge(candidate, SLOW)).grade \
        is Grade.AMBIGUOUS


def busy(runs):
    """The runs, recorded as the pre-flight check marks a run on a busy CPU."""
    from dataclasses import replace

    failed = {"trusted": False, "findings": [
        {"check": "cpu_load", "severity": "fail", "message": "CPU busy: 180% of one core"}]}
    return [replace(untrusted(run), env={**run.env, "preflight": failed}) for run in runs]


def test_endpoints_whose_runs_were_all_untrusted_end_the_search_saying_why():
    judged = grade_endpoints(judge(GOOD, busy(SLOW)))
    assert judged.grade is Grade.UNTRUSTED and judged.bounds_untrusted
    assert judged.detail == "every run of the bad commit was untrusted: CPU busy: 180% of one core"

    def classify(good, candidate, bad):
        return judged

    result = bisect(COMMITS[:6], classify, max_steps=10)
    assert result.ending is Ending.UNTRUSTED and len(result.steps) == 1
    said = conclusion(result)
    assert said.startswith("no commit named: ") and "could not be judged" in said
    assert "every run of the bad commit was untrusted: CPU busy: 180% of one core" in said
    assert "--no-preflight" in said and "do not differ" not in said
    assert "untrusted&#58; CPU busy&#58; 180% of one core; measure" in markdown(result, {})


def test_an_untrusted_candidate_is_stepped_around_and_named_in_the_conclusion():
    followed = targets(judge(GOOD, SLOW))
    candidate = busy(rounds(1.0, 40))
    judged = grade_step(followed, judge(GOOD, candidate), judge(candidate, SLOW))
    assert judged.grade is Grade.UNTRUSTED
    assert judged.detail.startswith("every run of the candidate commit was untrusted")

    def classify(good, candidate, bad):
        return Judgement(Grade.BAD) if candidate is None else Judgement(Grade.UNTRUSTED,
                                                                         judged.detail)

    result = bisect(COMMITS[:4], classify, max_steps=10)
    assert result.ending is Ending.AMBIGUOUS
    assert "4 step(s) untrusted (every run of the candidate commit was untrusted" \
        in conclusion(result)


# -- the range from history, and the report -------------------------------------------------

def test_history_gives_the_commits_around_the_newest_worsening_change_point():
    runs = history(20, {"step": 1.0, "flat": 1.0}, spread=0.005)
    slowed = [make_run([ok("step", 1.0 if i < 12 else 1.4, seed=i)], sha=run.git["sha"],
                       created_at=run.created_at, run_id=run.run_id)
              for i, run in enumerate(runs)]
    found = regression_range(slowed, "demo/step")
    assert (found.good, found.bad) == (runs[11].git["sha"], runs[12].git["sha"])
    assert found.ratio == pytest.approx(1.4, rel=0.05)
    with pytest.raises(UserError, match="no change point that made it worse"):
        regression_range(runs, "demo/flat")
    with pytest.raises(UserError, match="no stored run measured it"):
        regression_range(runs, "demo/none")


def test_the_previous_stored_commit_is_the_newest_run_before_the_push():
    runs = history(4, {"step": 1.0})
    shas = [run.git["sha"] for run in runs]
    assert previous_commit(runs, shas[3]) == shas[2]
    assert previous_commit(runs, "f" * 40) == shas[3]
    assert previous_commit(runs[:1], shas[0]) is None


def test_the_markdown_report_escapes_the_commit_subject_and_author():
    from torch_bench.analyze.bisect_runs import CommitInfo

    result = bisect(COMMITS, Levels(slow_from(3)), max_steps=10)
    hostile = CommitInfo(COMMITS[3], "<img src=x> | [link](http://evil) @team",
                         "Mallory <m@evil>")
    text = markdown(result, {COMMITS[3]: hostile})
    assert f"- commit: `{COMMITS[3]}`" in text
    assert "<img" not in text and "[link]" not in text and "@team" not in text
    assert "&lt;img src=x&gt; &#124; &#91;link&#93;" in text


def test_the_report_is_posted_on_the_issue_once_and_updated_in_place(monkeypatch, capsys):
    from fake_github import FakeGitHub
    from torch_bench.cli.bisect import post

    with FakeGitHub(login="bencher") as github:
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        post("first report\n", "octo/bench", 12)
        post("second report\n", "octo/bench", 12)
    [comment] = github.comments[12]
    assert "second report" in comment["body"] and "first report" not in comment["body"]
    err = capsys.readouterr().err
    assert "created the comment on issue 12" in err and "updated the comment" in err


def test_a_comment_that_cannot_be_posted_is_a_warning(monkeypatch, capsys):
    from torch_bench.cli.bisect import post

    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    post("report\n", "octo/bench", 12)
    assert "warning: could not comment on issue 12: no token" in capsys.readouterr().err
