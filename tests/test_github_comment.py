"""The PR comment flow against a real local HTTP server speaking the GitHub REST API."""

from __future__ import annotations

import pytest

from fake_github import FakeGitHub
from torch_bench.report.github import (
    GitHubClient,
    GitHubError,
    comment_marker,
    next_link,
    retry_wait,
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
    assert retry_wait(502, {}, 2, 1.0) == 4.0
    assert retry_wait(429, {"Retry-After": "12"}, 0, 1.0) == 12.0
    assert retry_wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}, 0, 1.0) == 0
    assert retry_wait(403, {}, 0, 1.0) is None  # a plain permission error
    assert retry_wait(422, {}, 0, 1.0) is None


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
