"""What the workflow run is about: the event, the PR, whether it comes from a fork, and the
decisions that follow from it. Read from GITHUB_* variables and the event payload; pure.

Which history a run is compared with, and whether it is stored:

| event | compared with | stored (push: auto) |
| --- | --- | --- |
| pull_request(_target) | the PR's base branch | never |
| merge_group | the queue's target branch | never (the push that merges it is) |
| push, schedule, workflow_dispatch on the default branch | that branch | yes |
| push, workflow_dispatch on another branch | that branch's runs, else the default branch's | no |

A `schedule` always runs on the default branch, and its payload names no repository: its
branch is taken as the default branch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from torch_bench.provenance import read_event

PUBLISHING_EVENTS = ("push", "schedule", "workflow_dispatch")
MERGE_QUEUE_REF = re.compile(r"refs/heads/gh-readonly-queue/(?P<target>.+)/pr-\d+-[0-9a-f]+")


@dataclass(frozen=True)
class RunContext:
    event: str
    repository: str | None
    ref: str | None
    default_branch: str | None
    pr_number: int | None
    pr_base_branch: str | None
    pr_head_sha: str | None
    from_fork: bool
    server_url: str
    workspace: str
    queue_target: str | None = None  # merge_group: the branch the queue merges into

    @property
    def is_pr(self) -> bool:
        return self.pr_number is not None

    @property
    def on_default_branch(self) -> bool:
        return bool(self.default_branch) and self.ref == f"refs/heads/{self.default_branch}"

    @property
    def branch(self) -> str | None:
        return self.ref[len("refs/heads/"):] if self.ref and self.ref.startswith(
            "refs/heads/") else None

    def should_push(self, choice: str) -> bool:
        """`push` input: auto pushes for pushes and schedules on the default branch. Nothing
        is ever pushed for a PR from a fork."""
        if self.from_fork:
            return False
        if choice == "auto":
            return self.event in PUBLISHING_EVENTS and self.on_default_branch
        return choice == "true"

    def compare_branch(self) -> str | None:
        """The branch whose history this run is compared with (its own, for a branch
        without runs of its own `stages.compare` falls back on the default branch's)."""
        if self.is_pr:
            return self.pr_base_branch
        if self.queue_target:
            return self.queue_target
        return self.branch or self.default_branch

    def not_stored_reason(self, choice: str) -> str | None:
        """Why `push: choice` stores nothing for this run, in a sentence; None when it
        stores."""
        if self.should_push(choice):
            return None
        if self.from_fork:
            return "a PR from a fork never writes to the data branch"
        if choice == "false":
            return "the push input is false"
        if self.is_pr:
            return "PR runs are compared with their base branch, never stored"
        if self.queue_target:
            return (f"merge-queue runs are compared with {self.queue_target}, never stored; "
                    f"the push that merges the group into {self.queue_target} is")
        if not self.default_branch:
            return ("the default branch is unknown (the event names no repository); set "
                    "push: true to store this run")
        if self.event not in PUBLISHING_EVENTS:
            return f"push: auto stores pushes, schedules and manual runs, not {self.event}"
        return (f"push: auto stores runs of the default branch ({self.default_branch}) only; "
                f"set push: true to keep the runs of {self.branch or self.ref}")

    def dashboard_url(self, site_folder: str = ".",
                      data_repository: str | None = "") -> str | None:
        """Where GitHub Pages serves the dashboard published in `site_folder` of the data
        branch: that of `data_repository` when the data lives in another repository, else
        this one's; None when that is unknown (None: data on another host). A user or
        organisation site (`<owner>/<owner>.github.io`) is served at the root of its host;
        GitHub Enterprise's Pages hosts cannot be known here."""
        repository = self.repository if data_repository == "" else data_repository
        if not repository or self.server_url.rstrip("/") != "https://github.com":
            return None
        owner, name = repository.split("/", 1)
        host = f"{owner.lower()}.github.io"
        inside = "" if site_folder in ("", ".") else f"{site_folder.strip('/')}/"
        return f"https://{host}/{inside}" if name.lower() == host else \
            f"https://{host}/{name}/{inside}"


def read_context(environ: Mapping[str, str]) -> RunContext:
    payload = read_event(environ)
    pull = payload.get("pull_request") or {}
    head_repo = ((pull.get("head") or {}).get("repo") or {}).get("full_name")
    base_repo = ((pull.get("base") or {}).get("repo") or {}).get("full_name")
    event, ref = environ.get("GITHUB_EVENT_NAME", ""), environ.get("GITHUB_REF")
    default = (payload.get("repository") or {}).get("default_branch")
    if not default and event == "schedule" and ref and ref.startswith("refs/heads/"):
        default = ref[len("refs/heads/"):]  # schedules run on the default branch only
    return RunContext(
        event=event,
        repository=environ.get("GITHUB_REPOSITORY"),
        ref=ref,
        default_branch=default,
        pr_number=pull.get("number") if isinstance(pull.get("number"), int) else None,
        pr_base_branch=(pull.get("base") or {}).get("ref"),
        pr_head_sha=(pull.get("head") or {}).get("sha"),
        from_fork=bool(pull) and head_repo != base_repo,
        server_url=environ.get("GITHUB_SERVER_URL", "https://github.com"),
        workspace=environ.get("GITHUB_WORKSPACE", "."),
        queue_target=queue_target(event, ref, payload),
    )


def queue_target(event: str, ref: str | None, payload: Mapping) -> str | None:
    """The branch a merge group merges into: the payload's `merge_group.base_ref`, else the
    queue's ref (`refs/heads/gh-readonly-queue/<target>/pr-<n>-<sha>`)."""
    if event != "merge_group":
        return None
    base = str((payload.get("merge_group") or {}).get("base_ref") or "")
    if base.startswith("refs/heads/"):
        return base[len("refs/heads/"):]
    found = MERGE_QUEUE_REF.fullmatch(ref or "")
    return found.group("target") if found else None
