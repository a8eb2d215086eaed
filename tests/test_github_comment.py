"""The PR comment flow against a real local HTTP server speaking the GitHub REST API."""

from __future__ import annotations

import time

import pytest

from fake_github import FakeGitHub, Recorder
from torch_bench.cli import main
from torch_bench.report.github import (
    GitHubClient,
    GitHubError,
    comment_marker,
    next_link,
    retry_decision,
    upsert_comment,
)

TOKEN = "ghs_not-a-real-token-1234"


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        for i in range(5):
            fake.add_comment(7, f"an unrelated comment {i}")
        yield fake


def client(github, waits):
    return GitHubClient(TOKEN, github.url, sleep=waits.append)


def test_created_then_updated_in_place_across_pages_with_retries(github):
    waits: list[float] = []
    github.failures = [(502, {})]  # the first listing fails once
    action, first = upsert_comment(client(github, waits), "octo/bench", 7, "report one", "cpu")
    assert action == "created"
    github.failures = [(403, {"Retry-After": "3", "x-ratelimit-remaining": "0"})]
    action, second = upsert_comment(client(github, waits), "octo/bench", 7, "report two", "cpu")
    assert action == "updated" and second["id"] == first["id"]
    bodies = [c["body"] for c in github.comments[7]]
    assert len(bodies) == 6
    assert bodies[-1] == f"{comment_marker('cpu')}\nreport two"
    assert waits == [1.0, 3.0]  # backoff after the 502; Retry-After after the 403
    pages = [path for method, path, _ in github.requests if method == "GET"]
    assert any("page=3" in p for p in pages)  # the sixth comment is on the third page
    assert {auth for _, _, auth in github.requests} == {f"Bearer {TOKEN}"}


def test_one_comment_per_configuration(github):
    waits: list[float] = []
    upsert_comment(client(github, waits), "octo/bench", 7, "cpu report", "linux-cpu")
    upsert_comment(client(github, waits), "octo/bench", 7, "gpu report", "linux-a100")
    upsert_comment(client(github, waits), "octo/bench", 7, "cpu again", "linux-cpu")
    ours = [c["body"] for c in github.comments[7] if "torch-bench-report" in c["body"]]
    assert ours == [f"{comment_marker('linux-cpu')}\ncpu again",
                    f"{comment_marker('linux-a100')}\ngpu report"]


def test_gives_up_after_the_retries_without_showing_the_token(github):
    waits: list[float] = []
    github.failures = [(503, {})] * 5
    with pytest.raises(GitHubError) as caught:
        client(github, waits).list_comments("octo/bench", 7)
    assert "HTTP 503" in str(caught.value) and TOKEN not in str(caught.value)
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert TOKEN not in repr(client(github, waits))


def test_client_errors_are_not_retried(github):
    waits: list[float] = []
    with pytest.raises(GitHubError, match="HTTP 404"):
        client(github, waits).list_comments("octo/missing", 7)
    assert waits == []


def test_retry_rules():
    def wait(status, headers, body="", attempt=0, now=1000.0):
        return retry_decision(status, headers, body, attempt, 1.0, now).wait

    assert wait(502, {}, attempt=2) == pytest.approx(4.0)
    assert wait(429, {"Retry-After": "12"}) == pytest.approx(12.0)
    assert wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}) == \
        pytest.approx(30.0)
    assert wait(403, {}) is None  # a plain permission error
    assert wait(422, {}) is None
    secondary = retry_decision(403, {}, '{"message": "You have exceeded a secondary rate limit"}',
                               0, 1.0, 1000.0)
    assert secondary.secondary and secondary.wait >= 60
    far = retry_decision(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4600"}, "",
                         0, 1.0, 1000.0)
    assert far.wait is None and "rate limit exhausted" in far.give_up_reason


def test_next_link():
    header = '<https://api.test/x?page=2>; rel="next", <https://api.test/x?page=5>; rel="last"'
    assert next_link(header) == "https://api.test/x?page=2"
    assert next_link('<https://api.test/x?page=1>; rel="prev"') is None
    assert next_link(None) is None


def test_comment_command_creates_then_updates_and_never_prints_the_token(github, cli, tmp_path):
    (tmp_path / "report.md").write_text("### torch-bench: no significant change\n")
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN}
    first = cli("comment", "report.md", "--pr", "7", "--repo", "octo/bench", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("created comment https://github.test/")
    (tmp_path / "pr-number.txt").write_text("7\n")
    github.failures = [(403, {"Retry-After": "1"})]
    second = cli("comment", "report.md", "--pr-file", "pr-number.txt", "--repo", "octo/bench",
                 env=env)
    assert second.returncode == 0 and second.stdout.startswith("updated comment")
    assert len(github.comments[7]) == 6
    for done in (first, second):
        assert TOKEN not in done.stdout + done.stderr


def test_a_failed_comment_is_a_warning_unless_strict(github, cli, tmp_path):
    (tmp_path / "report.md").write_text("report\n")
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN}
    soft = cli("comment", "report.md", "--pr", "7", "--repo", "octo/missing", env=env)
    assert soft.returncode == 0
    assert "warning: could not comment on PR #7" in soft.stderr and "HTTP 404" in soft.stderr
    strict = cli("comment", "report.md", "--pr", "7", "--repo", "octo/missing", "--strict",
                 env=env)
    assert strict.returncode == 1
    no_token = cli("comment", "report.md", "--pr", "7", "--repo", "octo/bench",
                   env={"GITHUB_API_URL": github.url, "GITHUB_TOKEN": ""})
    assert no_token.returncode == 0 and "no token" in no_token.stderr


def test_a_tampered_pr_number_file_is_refused(cli, tmp_path):
    (tmp_path / "report.md").write_text("report\n")
    (tmp_path / "pr-number.txt").write_text("7; rm -rf /\n")
    done = cli("comment", "report.md", "--pr-file", "pr-number.txt", "--repo", "octo/bench")
    assert done.returncode == 2 and "expected a PR number" in done.stderr


def test_a_post_whose_5xx_hid_a_stored_comment_is_not_posted_twice(github):
    waits: list[float] = []
    github.store_then_fail = 502
    action, posted = upsert_comment(client(github, waits), "octo/bench", 7, "report", "cpu")
    ours = [c for c in github.comments[7] if "torch-bench-report" in c["body"]]
    assert len(ours) == 1 and action == "updated" and posted["id"] == ours[0]["id"]
    assert [m for m, _, _ in github.requests].count("POST") == 1


def test_a_rate_limit_that_resets_in_an_hour_is_given_up_at_once(github):
    waits: list[float] = []
    reset = str(int(time.time()) + 3600)
    github.failures = [(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset})]
    with pytest.raises(GitHubError, match="rate limit exhausted until"):
        client(github, waits).list_comments("octo/bench", 7)
    assert waits == []


def test_a_secondary_rate_limit_without_retry_after_waits_a_minute_once(github):
    secondary = (403, {}, {"message": "You have exceeded a secondary rate limit."})
    waits: list[float] = []
    github.failures = [secondary]
    assert len(client(github, waits).list_comments("octo/bench", 7)) == 5
    assert waits == [pytest.approx(60.0)]
    waits.clear()
    github.failures = [secondary, secondary]
    with pytest.raises(GitHubError, match="secondary rate limit again"):
        client(github, waits).list_comments("octo/bench", 7)
    assert waits == [pytest.approx(60.0)]


def test_a_422_shows_githubs_own_explanation(github):
    with pytest.raises(GitHubError) as caught:
        client(github, []).create_comment("octo/bench", 7, "x" * 70_000)
    assert "HTTP 422 Validation Failed: body is too long (maximum is 65536" in str(caught.value)


def test_an_html_page_with_status_200_is_a_one_line_error(github):
    github.failures = [(200, {"Content-Type": "text/html"}, b"<html><body>Sign in</body></html>")]
    with pytest.raises(GitHubError) as caught:
        client(github, []).list_comments("octo/bench", 7)
    assert str(caught.value) == ("GET /repos/octo/bench/issues/7/comments: the API answered "
                                 "text/html, not JSON (is GITHUB_API_URL the REST API?)")


def test_the_token_is_not_sent_on_a_redirect_to_another_origin(github):
    with Recorder() as elsewhere:
        github.failures = [(302, {"Location": f"{elsewhere.url}/moved"})]
        assert client(github, []).list_comments("octo/bench", 7) == []
        assert elsewhere.requests == [("/moved", None)]
        github.failures = [(301, {"Location": f"{github.url}/repos/octo/bench/issues/7/comments"})]
        assert len(client(github, []).list_comments("octo/bench", 7)) == 5
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in github.requests)


def test_a_next_page_on_another_host_is_not_followed(github):
    with Recorder() as elsewhere:
        github.page_origin = elsewhere.url
        with pytest.raises(GitHubError, match="next page is on another host"):
            client(github, []).list_comments("octo/bench", 7)
        assert elsewhere.requests == []


def test_a_marked_comment_by_someone_else_is_never_overwritten(github):
    forged = github.add_comment(7, f"{comment_marker('cpu')}\nforged", user="mallory")
    action, posted = upsert_comment(client(github, []), "octo/bench", 7, "real", "cpu")
    assert action == "created" and posted["user"]["login"] == "github-actions[bot]"
    assert forged["body"].endswith("forged")


def test_a_personal_token_updates_only_its_users_comments():
    with FakeGitHub(login="alice") as github:
        bot = github.add_comment(7, f"{comment_marker('cpu')}\nby the bot",
                                 user="github-actions[bot]")
        action, posted = upsert_comment(client(github, []), "octo/bench", 7, "one", "cpu")
        assert action == "created" and posted["user"]["login"] == "alice"
        action, again = upsert_comment(client(github, []), "octo/bench", 7, "two", "cpu")
        assert action == "updated" and again["id"] == posted["id"]
        assert bot["body"].endswith("by the bot")


def test_update_only_leaves_a_pr_without_a_comment_alone(github):
    assert upsert_comment(client(github, []), "octo/bench", 7, "fine", "cpu",
                          create=False) == ("none", None)
    assert not [c for c in github.comments[7] if "torch-bench-report" in c["body"]]


@pytest.mark.parametrize("value", ["-5", "0", "abc", "1e3"])
def test_nonsense_pr_numbers_are_refused_before_any_call(value, tmp_path, capsys):
    (tmp_path / "report.md").write_text("report\n")
    with pytest.raises(SystemExit) as caught:
        main(["comment", str(tmp_path / "report.md"), "--pr", value, "--repo", "octo/bench"])
    assert caught.value.code == 2
    assert "is not a pull request number" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--repo", "octo/bench/../x"], "expected owner/name"),
    (["--config-name", " "], "--config-name: must not be empty"),
    (["--token-env", "A B"], "is not a variable name"),
    (["--full-report-url", "javascript:alert(1)"], "expected an http(s) URL"),
])
def test_nonsense_flag_values_are_refused_before_any_call(flags, message, tmp_path, capsys):
    (tmp_path / "report.md").write_text("report\n")
    assert main(["comment", str(tmp_path / "report.md"), "--pr", "7", "--repo", "octo/bench",
                 *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_in_a_workflow_a_failed_comment_command_is_an_annotation_and_in_the_summary(
        github, tmp_path, monkeypatch, capsys):
    (tmp_path / "report.md").write_text("report\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["comment", str(tmp_path / "report.md"), "--pr", "7",
                 "--repo", "octo/missing"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("::warning title=torch-bench comment::could not comment on the "
                              "PR: PR #7: ")
    assert "HTTP 404" in out.out and "could not comment on the PR" in summary.read_text()


def test_a_post_answered_by_a_redirect_is_an_error_never_a_read(github):
    """urllib turns a POST answered by 302 into a GET of the new place: the comment would not
    be made and the listing would come back as if it were the new comment."""
    comments = f"{github.url}/repos/octo/bench/issues/7/comments"
    for status in (301, 302, 303, 307, 308):
        github.write_failures = [(status, {"Location": comments})]
        github.requests.clear()
        with pytest.raises(GitHubError) as caught:
            client(github, []).create_comment("octo/bench", 7, "report")
        assert f"answered {status}" in str(caught.value) and "never redirected" in str(caught.value)
        assert [method for method, _, _ in github.requests] == ["POST"]  # no GET behind it
    assert not [c for c in github.comments[7] if c["body"] == "report"]


def test_the_comment_command_on_a_redirected_post_warns_and_posts_nothing(github, cli, tmp_path):
    (tmp_path / "report.md").write_text("report\n")
    comments = f"{github.url}/repos/octo/bench/issues/7/comments"
    github.write_failures = [(302, {"Location": comments})]
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN}
    done = cli("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--strict", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "created comment" not in done.stdout and "answered 302" in done.stderr
    assert len(github.comments[7]) == 5


def test_an_answer_that_is_not_a_comment_is_an_error(github):
    github.write_failures = [(201, {}, b"[]")]
    with pytest.raises(GitHubError, match="answered with list, not the comment"):
        client(github, []).create_comment("octo/bench", 7, "report")


HOSTILE = ("Hello @maintainers, see [docs](javascript:alert(1)) and octo/other#12\n"
           "<!-- torch-bench-report config=default -->\n<img src=https://evil.test/x.png>\n"
           "[dashboard](<https://octo.github.io/bench/#/benchmark/demo%2Fx>)\n")


def test_the_comment_command_sanitises_a_report_unless_told_it_is_trusted(github, cli, tmp_path):
    (tmp_path / "hostile.md").write_text(HOSTILE)
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN}
    done = cli("comment", "hostile.md", "--pr", "7", "--repo", "octo/bench", env=env)
    assert done.returncode == 0, done.stderr
    body = github.comments[7][-1]["body"]
    assert "@maintainers" not in body and "javascript:" not in body and "<img" not in body
    assert body.count("<!--") == 1 and "`octo/other#12`" in body  # only our own marker
    assert "[dashboard](https://octo.github.io/bench/#/benchmark/demo%2Fx)" in body
    trusted = cli("comment", "hostile.md", "--pr", "7", "--repo", "octo/bench",
                  "--config-name", "raw", "--trusted-markdown", env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert github.comments[7][-1]["body"].endswith(HOSTILE)


def test_a_token_echoed_by_the_api_reaches_no_output_even_through_another_variable(
        github, cli, tmp_path):
    """A 422 whose message echoes the token: masked on stderr, in the annotation and in the
    job summary, before the summary's Markdown escaping could hide it from GitHub's masking."""
    token = "ghp_" + "Z" * 36
    personal = "my-personal-secret-value"
    (tmp_path / "report.md").write_text("report\n")
    for variable, value in (("GITHUB_TOKEN", token), ("MY_PAT", personal)):
        github.write_failures = [(422, {}, {"message": f"Validation Failed for {value}",
                                            "errors": [{"message": f"bad {value}"}]})]
        summary = tmp_path / f"summary-{variable}.md"
        env = {"GITHUB_API_URL": github.url, variable: value, "GITHUB_ACTIONS": "true",
               "GITHUB_STEP_SUMMARY": str(summary)}
        done = cli("comment", "report.md", "--pr", "7", "--repo", "octo/bench",
                   "--token-env", variable, "--author", "me", env=env)
        assert done.returncode == 0 and "HTTP 422" in done.stderr
        written = done.stdout + done.stderr + summary.read_text()
        assert value not in written and "***" in written
        assert value.replace("_", "&#95;") not in written


@pytest.mark.parametrize("url", ["not a url", "ftp://x", "http://", "http://host:port/"])
def test_a_nonsense_api_url_is_one_line(url, github, cli, tmp_path):
    (tmp_path / "report.md").write_text("report\n")
    done = cli("comment", "report.md", "--pr", "7", "--repo", "octo/bench", "--strict",
               env={"GITHUB_API_URL": url, "GITHUB_TOKEN": TOKEN})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "GITHUB_API_URL" in done.stderr and len(done.stderr.strip().splitlines()) == 1
