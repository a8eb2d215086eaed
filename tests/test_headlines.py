"""Headlines that never hide unjudged changes, and failing verdicts that always say what fails:
`torch-bench compare` on run documents, its terminal report, Markdown, JSON, step outputs,
annotations and exit status saying the same thing."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from support.runs import history, make_run, ok, untrusted
from torch_bench.analyze.headline import Withheld, overall, withheld_reason, withheld_texts
from torch_bench.analyze.verdicts import Kind, Verdict, compare_runs, confirm_regressions
from torch_bench.report import actions
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path

SUITE = {f"b{i}": 1.0 + i for i in range(8)}  # enough timings for the whole run's test


def suite_run(factor: float, *, seed: int, **fields):
    return make_run([ok(name, m * factor, seed=seed + j) for j, (name, m) in
                     enumerate(SUITE.items())], **fields)


def github_files(tmp_path):
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    return {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs)}, summary, outputs


def step_outputs(path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_a_slowdown_nothing_could_judge_heads_every_report(cli, tmp_path):
    """One run a side, every timing 30% slower: nothing is known of the noise, so nothing is
    judged, and every output says so first, with what to do, instead of "no significant
    change". Each timing is judged relative to the whole run, whose move is the change."""
    save_run(suite_run(1.0, seed=1, run_id="base-1"), tmp_path / "base.json")
    save_run(suite_run(1.3, seed=31, sha="b" * 40, run_id="head-1"), tmp_path / "head.json")
    env, summary, outputs = github_files(tmp_path)
    done = cli("compare", "base.json", "head.json", "--markdown", "report.md", "--json",
               "verdicts.json", "--fail-on-regression", env=env)
    assert done.returncode == 0, done.stderr  # nothing was judged a regression
    first = done.stdout.splitlines()[0]
    said = re.fullmatch(r"torch-bench: (the whole run's \+(?:29|30)\.\d% not judged: not enough "
                        r"history \(1 run; 3 needed\) — store more base-branch runs, or measure "
                        r"base and head side by side \(A/B\); 8 benchmarks within the minimum "
                        r"effect \(±2\.0%\) as measured relative to the run's shift, their noise "
                        r"not known yet)", first)
    assert said, first
    assert "no significant change" not in done.stdout + (tmp_path / "report.md").read_text()
    found = json.loads((tmp_path / "verdicts.json").read_text())["overall"]
    assert (found["verdict"], found["headline"], found["not_judged"]) == (
        "inconclusive", said.group(1), 1)
    heading = (tmp_path / "report.md").read_text().splitlines()[0]
    assert heading.startswith("### torch-bench: the whole run&#39;s +")
    assert "not judged&#58; not enough history &#40;1 run; 3 needed&#41;" in heading
    assert summary.read_text().splitlines()[0] == heading
    shown = step_outputs(outputs)
    assert (shown["verdict"], shown["not-judged"], shown["has-regression"]) == (
        "inconclusive", "1", "false")
    assert shown["headline"] == said.group(1)
    assert "::warning" not in done.stdout and "::error" not in done.stdout


def test_too_few_timings_for_the_whole_run_each_unjudged_change_is_counted(cli, tmp_path):
    """Three timings 30% slower, one run a side (the issue's case): no whole-run test, so
    each change is counted, with its size."""
    names = ("a", "b", "c")
    save_run(make_run([ok(n, 10, seed=i) for i, n in enumerate(names)], run_id="base-1"),
             tmp_path / "base.json")
    save_run(make_run([ok(n, 13, seed=10 + i) for i, n in enumerate(names)], sha="b" * 40,
                      run_id="head-1"), tmp_path / "head.json")
    done = cli("compare", "base.json", "head.json", "--json", "verdicts.json", "--no-github")
    assert done.returncode == 0, done.stderr
    assert re.match(r"torch-bench: 3 changes of \+29\.\d% to \+30\.\d% not judged: not enough "
                    r"history \(1 run; 3 needed\) — store more base-branch runs, or measure base "
                    r"and head side by side \(A/B\)\n", done.stdout), done.stdout
    found = json.loads((tmp_path / "verdicts.json").read_text())["overall"]
    assert (found["verdict"], found["not_judged"]) == ("inconclusive", 3)
    assert len(found["withheld"][0]["benchmarks"]) == 3


def test_a_slowdown_only_the_whole_run_test_calls_fails_the_job_out_loud(cli, tmp_path):
    """Every timing 10% slower against a quiet history: no benchmark is a regression on its
    own (each is judged relative to the run), the whole run is. The job fails with a warning
    and an error naming it, and the outputs agree with the exit status."""
    for run in history(12, SUITE, spread=0.005):
        save_run(run, tmp_path / "data" / run_path(run))
    save_run(suite_run(1.0, seed=1, run_id="base-1"), tmp_path / "base.json")
    save_run(suite_run(1.1, seed=31, sha="b" * 40, run_id="head-1"), tmp_path / "head.json")
    env, _, outputs = github_files(tmp_path)
    done = cli("compare", "base.json", "head.json", "--history", "data", "--json",
               "verdicts.json", "--fail-on-regression", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.match(r"torch-bench: whole run 1\d\.\d% slower; no change beyond ±[\d.–]+% in 8 "
                    r"benchmarks relative to the run's shift\n", done.stdout)
    assert re.search(r"^::warning title=torch-bench whole-run regression::the whole run is "
                     r"1\d\.\d%25 slower than its baseline \(median over 8 timings\), beyond the "
                     r"run-level shifts seen in 13 runs$", done.stdout, flags=re.M)
    assert re.search(r"^::error title=torch-bench regression::failing the job "
                     r"\(fail-on-regression\): whole run 1\d\.\d%25 slower; the job summary has "
                     r"the report$", done.stdout, flags=re.M)
    shown = step_outputs(outputs)
    assert (shown["verdict"], shown["has-regression"], shown["regression"]) == (
        "regression", "true", "0")
    found = json.loads((tmp_path / "verdicts.json").read_text())["overall"]
    assert (found["verdict"], found["regressions"]) == ("regression", 1)
    assert found["failing"].startswith("whole run 1")


def test_outside_github_the_failure_is_said_on_stderr(cli, tmp_path):
    for run in history(12, SUITE, spread=0.005):
        save_run(run, tmp_path / "data" / run_path(run))
    save_run(suite_run(1.0, seed=1, run_id="base-1"), tmp_path / "base.json")
    save_run(suite_run(1.1, seed=31, sha="b" * 40, run_id="head-1"), tmp_path / "head.json")
    done = cli("compare", "base.json", "head.json", "--history", "data",
               "--fail-on-regression", "--no-github")
    assert done.returncode == 1
    assert re.search(r"torch-bench: failing \(--fail-on-regression\): whole run 1\d\.\d% "
                     "slower", done.stderr)
    assert "::" not in done.stdout + done.stderr


HISTORY = history(12, {"steady": 10, "slower": 10})


def pair(head_factor: float = 1.15):
    base = make_run([ok("steady", 10, seed=1), ok("slower", 10, seed=2)], run_id="base-1")
    head = make_run([ok("steady", 10, seed=11), ok("slower", 10 * head_factor, seed=12)],
                    sha="b" * 40, run_id="head-1")
    return base, head


def test_an_untrusted_head_says_why_nothing_was_judged():
    base, head = pair()
    said = overall(compare_runs([base], [untrusted(head)], HISTORY))
    assert said.verdict == "inconclusive"
    assert re.fullmatch(r"1 change of \+1\d\.\d% not judged: the pre-flight check failed — fix "
                        r"what the pre-flight check found \(the run's env\.preflight\) and run "
                        r"again; no change beyond ±\d+\.\d% in 1 benchmark", said.headline)


def test_a_regression_the_re_run_did_not_confirm_is_said_with_what_to_do():
    base, head = pair()
    first = compare_runs([base], [head], HISTORY)
    assert overall(first).verdict == "regression"
    _, calm = pair(1.0)
    again = confirm_regressions(first, [calm])
    said = overall(again)
    assert (said.verdict, said.regressions, said.not_judged) == ("inconclusive", 0, 1)
    assert re.match(r"1 change of \+1\d\.\d% not judged: not confirmed by the re-run — run again "
                    r"to settle it; ", said.headline)


def test_an_improvement_beside_an_unjudged_change_is_inconclusive_overall():
    base = make_run([ok("faster", 10, seed=1), ok("unknown", 10, seed=2)], run_id="base-1")
    head = make_run([ok("faster", 8, seed=11), ok("unknown", 14, seed=12)], sha="b" * 40)
    said = overall(compare_runs([base], [head], history(12, {"faster": 10})))
    assert (said.verdict, said.improvements, said.not_judged) == ("inconclusive", 1, 1)
    assert re.match(r"1 change of \+\d\d\.\d% not judged: not enough history", said.headline)
    assert "; 1 improvement" in said.headline


def test_every_judged_benchmark_gives_its_resolution_and_nothing_else_is_claimed():
    base, head = pair(1.0)
    said = overall(compare_runs([base], [head], HISTORY))
    assert said.verdict == "unchanged"
    assert re.fullmatch(r"no change beyond ±\d+\.\d(–\d+\.\d)?% in 2 benchmarks", said.headline)


@given(st.text(max_size=300))
def test_any_note_gives_a_reason_and_advice_or_none(note):
    found = withheld_reason(note)
    assert found is None or all(isinstance(part, str) and part for part in found)


def test_the_headline_spells_out_the_largest_reasons_and_counts_the_rest():
    def group(reason: str, n: int) -> Withheld:
        return Withheld(reason, "", tuple(
            Verdict(f"demo/{reason}{i}[]:latency", "demo", f"{reason}{i}", {}, "latency", "ms",
                    "lower", Kind.INCONCLUSIVE, note=reason) for i in range(n)))

    texts = withheld_texts([group("a", 1), group("b", 4), group("c", 2), group("d", 3),
                            group("e", 1)])
    assert texts == ["4 benchmarks not judged: b", "2 benchmarks not judged: c",
                     "3 benchmarks not judged: d",
                     "2 more changes not judged for other reasons (the report's rows say why)"]


def test_the_whole_run_takes_one_of_the_annotation_slots():
    slower = compare_runs([suite_run(1.0, seed=1)], [suite_run(1.1, seed=31, sha="b" * 40)],
                          history(12, SUITE, spread=0.005))
    base, head = pair()
    regression = next(v for v in compare_runs([base], [head], HISTORY).verdicts
                      if v.kind is Kind.REGRESSION)
    many = replace(slower, verdicts=tuple(replace(regression, benchmark_id=f"r{i}")
                                          for i in range(20)))
    lines = actions.warning_annotations(many)
    assert len(lines) == actions.ANNOTATION_LIMIT - actions.RESERVED_FOR_COMMENT
    assert lines[0].startswith("::warning title=torch-bench whole-run regression::")
    assert lines[-1].endswith("::13 more regressions or newly failing benchmarks in the job "
                              "summary")


def test_side_by_side_a_disturbed_change_is_sent_to_more_rounds_not_to_a_b():
    def busy(run):
        return replace(run, results=tuple(replace(r, extra={**r.extra, "interrupted_share": 1.0})
                                          for r in run.results))

    base = [make_run([ok("mlp", 10, seed=i)], run_id=f"base-{i}") for i in range(3)]
    head = [busy(make_run([ok("mlp", 13, seed=10 + i)], sha="b" * 40, run_id=f"head-{i}"))
            for i in range(3)]
    said = overall(compare_runs(base, head, side_by_side=True))
    assert said.verdict == "inconclusive"
    assert re.fullmatch(r"1 change of \+\d\d\.\d% not judged: the head's samples show contention "
                        r"from other processes — run again on a quieter runner, or measure more "
                        r"A/B rounds", said.headline), said.headline
