"""The second half of fork-safe PR comments: in a `workflow_run` workflow (base repository
context, write token), post the report a PR's read-only run left behind.

The report and PR number come from the PR's run and are untrusted: the number must be a plain
integer, the PR's head commit must be the commit that run measured (so a report cannot be
aimed at another PR), the report is capped at GitHub's comment size, and @-mentions in it are
neutralised."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

from torch_bench.action.inputs import ActionInputs
from torch_bench.errors import UserError
from torch_bench.report.actions import FORK_PR_NUMBER, FORK_REPORT
from torch_bench.report.github import GitHubClient, GitHubError, client_from_env, upsert_comment

MAX_COMMENT_CHARS = 60_000  # GitHub refuses bodies over 65,536 characters; leave room


def read_pr_number(folder: Path) -> int:
    text = _read(folder / FORK_PR_NUMBER).strip()
    if not re.fullmatch(r"[1-9][0-9]{0,9}", text):
        raise UserError(f"{FORK_PR_NUMBER}: not a PR number: {text[:20]!r}")
    return int(text)


def sanitise_report(text: str) -> str:
    """Untrusted Markdown made safe to post: no @-mentions, bounded length."""
    text = re.sub(r"@(?=[A-Za-z0-9_-])", "@\u200b", text)
    if len(text) > MAX_COMMENT_CHARS:
        text = text[:MAX_COMMENT_CHARS] + "\n\n*(report truncated)*\n"
    return text


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"report-dir: cannot read {path.name} ({exc.strerror or exc})") from None


class HeadMovedOn(UserError):
    """The PR's head is no longer the commit the report measured."""


def check_head(client: GitHubClient, repo: str, pr: int, head_sha: str) -> None:
    pull = client.request("GET", f"/repos/{repo}/pulls/{pr}").body or {}
    found = (pull.get("head") or {}).get("sha")
    if found != head_sha:
        raise HeadMovedOn(f"PR #{pr}'s head is {str(found)[:12]}, not the measured commit "
                        f"{head_sha[:12]}: refusing to post this report there")


def post_handoff(inputs: ActionInputs, environ: Mapping[str, str]) -> str | None:
    folder = Path(inputs["report-dir"])
    pr, report = read_pr_number(folder), sanitise_report(_read(folder / FORK_REPORT))
    repo = environ.get("GITHUB_REPOSITORY", "")
    try:
        client = client_from_env(environ)
        check_head(client, repo, pr, inputs["head-sha"])
        action, posted = upsert_comment(client, repo, pr, report, inputs["config-name"])
    except GitHubError as exc:
        print(f"::warning title=torch-bench::could not comment on PR #{pr}: {exc}")
        return None
    print(f"{action} the comment on PR #{pr}", file=sys.stderr)
    return posted.get("html_url")
