"""The second half of fork-safe PR comments: in a `workflow_run` workflow (base repository
context, write token), post the report a PR's read-only run left behind.

The report and PR number come from the PR's run and are untrusted: the number must be a plain
integer, the PR's head commit must be the commit that run measured (so a report cannot be
aimed at another PR), the report is sanitised (no mentions, hidden markers, foreign links or
cross-references) and fitted to GitHub's comment size by leaving out whole rows."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from torch_bench.action.inputs import COMMENT_INPUTS, ActionInputs, read_inputs
from torch_bench.errors import UserError
from torch_bench.provenance import read_event
from torch_bench.report import workflow
from torch_bench.report.github import GitHubClient, GitHubError, client_from_env, upsert_comment
from torch_bench.report.sanitise import sanitise_markdown
from torch_bench.report.workflow import FORK_PR_NUMBER, FORK_REPORT


def read_pr_number(folder: Path) -> int:
    text = _read(folder / FORK_PR_NUMBER).strip()
    if not re.fullmatch(r"[1-9][0-9]{0,9}", text):
        raise UserError(f"{FORK_PR_NUMBER}: not a PR number: {text[:20]!r}")
    return int(text)


def allowed_hosts(environ: Mapping[str, str]) -> set[str]:
    """Hosts a fork's report may link to: the GitHub server and the repository's Pages."""
    server = urlsplit(environ.get("GITHUB_SERVER_URL") or "https://github.com").hostname or ""
    owner = (environ.get("GITHUB_REPOSITORY") or "").split("/")[0].lower()
    return {server, f"{owner}.github.io"} if owner else {server}


def sanitise_report(text: str, environ: Mapping[str, str] = {}) -> str:
    """Untrusted Markdown made safe to post (see `report.sanitise`); fitting to GitHub's size
    limit happens when the comment body is built."""
    return sanitise_markdown(text, allowed_hosts(environ))


def pr_run_link(environ: Mapping[str, str]) -> str | None:
    """The PR's own workflow run (its job summary holds the full report), from the
    `workflow_run` event that started this one."""
    url = str((read_event(environ).get("workflow_run") or {}).get("html_url") or "")
    server = (environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    if not url.startswith(server + "/") or not re.fullmatch(r"[\w./:-]+", url):
        return None
    return f"[the job summary of the PR's workflow run](<{url}>)"


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
    pr = read_pr_number(folder)
    report = sanitise_report(_read(folder / FORK_REPORT), environ)
    repo = environ.get("GITHUB_REPOSITORY", "")
    try:
        client = client_from_env(environ)
        check_head(client, repo, pr, inputs["head-sha"])
        action, posted = upsert_comment(client, repo, pr, report, inputs["config-name"],
                                        full_report=pr_run_link(environ))
    except GitHubError as exc:
        workflow.report_comment_failure(f"PR #{pr}: {exc}", environ)
        return None
    print(f"{action} the comment on PR #{pr}", file=sys.stderr)
    return (posted or {}).get("html_url")


def run_comment(environ: Mapping[str, str] = os.environ) -> int:
    """`comment/action.yml`: post a PR's report from a `workflow_run` workflow. Nothing to
    post (the PR's run wrote no report) and a PR that has moved on since (the run for its new
    head will comment) are notices, not failures."""
    inputs = read_inputs(environ, COMMENT_INPUTS)
    url = None
    if not (Path(inputs["report-dir"]) / FORK_REPORT).is_file():
        print(f"::notice title=torch-bench::no {FORK_REPORT} in {inputs['report-dir']}: "
              "the PR's benchmark run wrote no report, so there is nothing to post")
    else:
        try:
            url = post_handoff(inputs, environ)
        except HeadMovedOn as exc:
            print(f"::notice title=torch-bench::{exc}")
    workflow.write_outputs({"comment-url": url}, environ)
    return 0
