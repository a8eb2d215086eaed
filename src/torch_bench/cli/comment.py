"""`torch-bench comment`: post a report as the PR's comment, or update it in place."""

from __future__ import annotations

import argparse
import os
import re
import sys

from torch_bench.errors import UserError
from torch_bench.fileio import read_text
from torch_bench.report import workflow
from torch_bench.report.github import GitHubError, client_from_env, upsert_comment
from torch_bench.report.sanitise import allowed_hosts, sanitise_markdown

EXIT_COMMENT_FAILED = 1
REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def positive_int(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,10}", text.strip()) or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pull request number")
    return int(text)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "comment",
        help="post or update the PR comment with a report",
        description="Post REPORT (Markdown) as a comment on a pull request, or update the "
                    "comment an earlier call made for the same --config-name (only a comment "
                    "written by the token's own identity is ever updated). The report is "
                    "sanitised first (no mentions, raw HTML, hidden markers, images, links "
                    "to other hosts or cross-references), as a fork's report must be; "
                    "--trusted-markdown posts it as it is. Uses "
                    "GITHUB_API_URL and the token in GITHUB_TOKEN. A report longer than "
                    "GitHub's 65,536 characters keeps its worst rows and links to the full "
                    "report. A failed call is a warning unless --strict.",
        epilog="example (fork PRs, in a workflow_run workflow): torch-bench comment "
               "report.md --pr-file pr-number.txt --repo owner/name",
    )
    parser.add_argument("report", metavar="REPORT", help="Markdown report file")
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"),
                        help="owner/name (default $GITHUB_REPOSITORY)")
    parser.add_argument("--pr", type=positive_int, metavar="N", help="pull request number")
    parser.add_argument("--pr-file", metavar="FILE",
                        help="file holding the PR number (fork PRs: written by compare "
                             "--fork-dir)")
    parser.add_argument("--config-name", default="default", metavar="NAME",
                        help="one comment per PR and configuration name (default 'default')")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", metavar="VAR",
                        help="environment variable holding the token (default GITHUB_TOKEN)")
    parser.add_argument("--author", metavar="LOGIN",
                        help="login the token comments as, when GET /user cannot tell (e.g. "
                             "'my-app[bot]' for a GitHub App token; default: the token's user, "
                             "or github-actions[bot] for a workflow's GITHUB_TOKEN)")
    parser.add_argument("--full-report-url", metavar="URL",
                        help="where a trimmed comment links to (default: this workflow run's "
                             "page, whose job summary holds the full report)")
    parser.add_argument("--trusted-markdown", action="store_true",
                        help="post REPORT as it is, without sanitising it: only for a report "
                             "this workflow wrote itself, never for one a fork PR produced")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when the comment could not be posted")
    parser.set_defaults(handler=handle)


def pr_number(args: argparse.Namespace) -> int:
    if args.pr is not None:
        return args.pr
    if args.pr_file:
        text = _read(args.pr_file, "--pr-file").strip()
        if not re.fullmatch(r"[1-9][0-9]{0,9}", text):
            raise UserError(f"--pr-file {args.pr_file}: expected a PR number, got {text[:20]!r}")
        return int(text)
    raise UserError("give the pull request with --pr N or --pr-file FILE")


def _read(path: str, flag: str) -> str:
    """The file as text, read up to fileio's bounds (/dev/zero ends)."""
    try:
        return read_text(path)
    except UserError as exc:
        raise UserError(f"{flag} {exc}") from None


def full_report(args: argparse.Namespace) -> str | None:
    if args.full_report_url:
        if not re.match(r"https?://", args.full_report_url):
            raise UserError("--full-report-url: expected an http(s) URL")
        return f"[the full report](<{args.full_report_url.replace('>', '%3E')}>)"
    return workflow.full_report_link(os.environ)


def handle(args: argparse.Namespace) -> int:
    report = _read(args.report, "REPORT")
    number = pr_number(args)
    if not args.repo or not REPO_NAME.fullmatch(args.repo):
        raise UserError("--repo: expected owner/name (or set GITHUB_REPOSITORY)")
    if not args.config_name.strip():
        raise UserError("--config-name: must not be empty")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.token_env):
        raise UserError(f"--token-env: {args.token_env[:40]!r} is not a variable name")
    link = full_report(args)
    if not args.trusted_markdown:
        report = sanitise_markdown(report, allowed_hosts(os.environ, args.repo))
    try:
        client = client_from_env(os.environ, args.token_env)
        action, comment = upsert_comment(client, args.repo, number, report, args.config_name,
                                         full_report=link, author=args.author)
    except GitHubError as exc:
        print(f"torch-bench: warning: could not comment on PR #{number}: {exc}",
              file=sys.stderr)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            workflow.report_comment_failure(f"PR #{number}: {exc}")
        return EXIT_COMMENT_FAILED if args.strict else 0
    comment = comment or {}
    print(f"{action} comment {comment.get('html_url') or comment.get('id')}")
    return 0
