"""The comment flow against GitHub's published contract: a Prism mock built from GitHub's own
OpenAPI description (see tests/prism_mock.py) on 127.0.0.1. Prism refuses any request that
does not match the description, so these pass only if every call we make is well-formed."""

from __future__ import annotations

import json

import pytest

from prism_mock import PrismMock, unavailable
from torch_bench.action.handoff import post_handoff
from torch_bench.action.inputs import COMMENT_INPUTS, read_inputs
from torch_bench.cli import main
from torch_bench.report.github import GitHubClient, GitHubError, upsert_comment

TOKEN = "ghs_prism-token-0000"
# The head commit of the pull request in GitHub's own example answer.
EXAMPLE_HEAD = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

reason = unavailable()
if reason == "node is not installed":
    pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="module")
def prism():
    if reason:
        pytest.fail(reason)
    with PrismMock() as mock:
        yield mock


def client(prism) -> GitHubClient:
    return GitHubClient(TOKEN, prism.url, sleep=lambda s: None, retries=1)


def test_the_comment_command_posts_a_well_formed_comment(prism, tmp_path, monkeypatch, capsys):
    (tmp_path / "report.md").write_text("### torch-bench: no significant change\n")
    monkeypatch.setenv("GITHUB_API_URL", prism.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    code = main(["comment", str(tmp_path / "report.md"), "--pr", "7", "--repo", "octo/bench",
                 "--strict"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith("created comment https://github.com/")
    assert TOKEN not in out.out + out.err


def test_identity_listing_creating_and_updating_match_the_contract(prism):
    api = client(prism)
    assert api.identity() == "octocat"  # GitHub's example user
    assert isinstance(api.list_comments("octo/bench", 7), list)
    assert api.update_comment("octo/bench", 1, "updated body")["id"]
    action, posted = upsert_comment(api, "octo/bench", 7, "x" * 200_000, "cpu")
    assert action == "created" and posted["id"]


def test_the_mock_refuses_a_request_outside_the_contract(prism):
    with pytest.raises(GitHubError, match="HTTP 4"):
        client(prism).request("POST", "/repos/octo/bench/issues/7/comments", {"text": "x"})


def test_the_fork_hand_off_checks_the_head_and_posts(prism, tmp_path):
    folder = tmp_path / "pr-report"
    folder.mkdir()
    (folder / "report.md").write_text("### torch-bench: 1 regression\n\nping @team\n")
    (folder / "pr-number.txt").write_text("7\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({}))
    inputs = read_inputs({"TB_REPORT_DIR": str(folder), "TB_HEAD_SHA": EXAMPLE_HEAD},
                         COMMENT_INPUTS)
    url = post_handoff(inputs, {"GITHUB_API_URL": prism.url, "GITHUB_TOKEN": TOKEN,
                                "GITHUB_REPOSITORY": "octo/bench",
                                "GITHUB_EVENT_PATH": str(event)})
    assert url and url.startswith("https://github.com/")
