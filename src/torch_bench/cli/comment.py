"""`torch-bench comment`: post a report as the PR's comment, or update it in place."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.report.github import GitHubError, client_from_env, upsert_comment

EXIT_COMMENT_FAILED = 1


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "comment",
        help="post or update the PR comment with a report",
        description="Post REPORT (Markdown) as a comment on a pull request, or update the "
                    "comment an earlier call made for the same --config-name. Uses "
                    "GITHUB_API_URL and the token in GITHUB_TOKEN. A failed call is a "
                    "warning unless --strict.",
        epilog="example (fork PRs, in a workflow_run workflow): torch-bench comment "
               "report.md --pr-file pr-number.txt --repo owner/name",
    )
    parser.add_argument("report", metavar="REPORT", help="Markdown report file")
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"),
                        help="owner/name (default $GITHUB_REPOSITORY)")
    parser.add_argument("--pr", type=int, metavar="N", help="pull request number")
    parser.add_argument("--pr-file", metavar="FILE",
                        help="file holding the PR number (fork PRs: written by compare "
                             "--fork-dir)")
    parser.add_argument("--config-name", default="default", metavar="NAME",
                        help="one comment per PR and configuration name (default 'default')")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", metavar="VAR",
                        help="environment variable holding the token (default GITHUB_TOKEN)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when the comment could not be posted")
    parser.set_defaults(handler=handle)


def pr_number(args: argparse.Namespace) -> int:
    if args.pr is not None:
        number = args.pr
    elif args.pr_file:
        text = _read(args.pr_file, "--pr-file").strip()
        if not text.isdigit():
            raise UserError(f"--pr-file {args.pr_file}: expected a PR number, got {text[:20]!r}")
        number = int(text)
    else:
        raise UserError("give the pull request with --pr N or --pr-file FILE")
    if number <= 0:
        raise UserError(f"--pr: {number} is not a pull request number")
    return number


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{flag} {path}: {exc.strerror or exc}") from None


def handle(args: argparse.Namespace) -> int:
    report = _read(args.report, "REPORT")
    number = pr_number(args)
    if not args.repo or "/" not in args.repo:
        raise UserError("--repo: expected owner/name (or set GITHUB_REPOSITORY)")
    try:
        client = client_from_env(os.environ, args.token_env)
        action, comment = upsert_comment(client, args.repo, number, report, args.config_name)
    except GitHubError as exc:
        print(f"torch-bench: warning: could not comment on PR #{number}: {exc}",
              file=sys.stderr)
        return EXIT_COMMENT_FAILED if args.strict else 0
    print(f"{action} comment {comment.get('html_url') or comment.get('id')}")
    return 0
