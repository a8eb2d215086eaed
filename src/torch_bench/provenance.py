"""Where a run came from: git and CI facts, read from GitHub Actions variables or local git."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from typing import Any


def _git(*args: str, cwd: str | None = None) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def read_event(environ: Mapping[str, str]) -> dict[str, Any]:
    """The event payload of this workflow run (GITHUB_EVENT_PATH); empty outside Actions."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def git_info(environ: Mapping[str, str] = os.environ, cwd: str | None = None) -> dict[str, Any]:
    event = read_event(environ)
    pull = event.get("pull_request") or {}
    repository = environ.get("GITHUB_REPOSITORY")
    sha = (pull.get("head") or {}).get("sha") or environ.get("GITHUB_SHA") or _git(
        "rev-parse", "HEAD", cwd=cwd)
    branch = environ.get("GITHUB_HEAD_REF") or environ.get("GITHUB_REF_NAME") or _git(
        "rev-parse", "--abbrev-ref", "HEAD", cwd=cwd)
    message = (event.get("head_commit") or {}).get("message") or _git(
        "log", "-1", "--format=%B", cwd=cwd)
    server = environ.get("GITHUB_SERVER_URL", "https://github.com")
    return {
        "repository": repository,
        "sha": sha,
        "ref": environ.get("GITHUB_REF"),
        "branch": branch,
        "pr_number": pull.get("number"),
        "pr_title": pull.get("title"),
        "base_sha": (pull.get("base") or {}).get("sha"),
        "base_branch": environ.get("GITHUB_BASE_REF") or None,
        "message": message,
        "url": f"{server}/{repository}/commit/{sha}" if repository and sha else None,
    }


def default_branch(environ: Mapping[str, str] = os.environ, cwd: str | None = None) -> str | None:
    """The repository's default branch: from the Actions event, else the checkout's
    `origin/HEAD`; None when neither says."""
    named = (read_event(environ).get("repository") or {}).get("default_branch")
    if named:
        return str(named)
    remote_head = _git("symbolic-ref", "--short", "refs/remotes/origin/HEAD", cwd=cwd)
    return remote_head.split("/", 1)[1] if remote_head and "/" in remote_head else None


def ci_info(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    if environ.get("GITHUB_ACTIONS") != "true":
        return {"provider": "local"}
    return {
        "provider": "github-actions",
        "workflow": environ.get("GITHUB_WORKFLOW"),
        "run_id": environ.get("GITHUB_RUN_ID"),
        "run_attempt": environ.get("GITHUB_RUN_ATTEMPT"),
        "job": environ.get("GITHUB_JOB"),
        "event": environ.get("GITHUB_EVENT_NAME"),
        "runner_name": environ.get("RUNNER_NAME"),
        "runner_os": environ.get("RUNNER_OS"),
        "runner_arch": environ.get("RUNNER_ARCH"),
    }
