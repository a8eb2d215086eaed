"""What the workflow run is about: the event, the PR, whether it comes from a fork, and the
decisions that follow from it. Read from GITHUB_* variables and the event payload; pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from torch_bench.provenance import read_event

PUBLISHING_EVENTS = ("push", "schedule", "workflow_dispatch")


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
        """The branch whose history this run is compared with."""
        return self.pr_base_branch if self.is_pr else (self.branch or self.default_branch)

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
    return RunContext(
        event=environ.get("GITHUB_EVENT_NAME", ""),
        repository=environ.get("GITHUB_REPOSITORY"),
        ref=environ.get("GITHUB_REF"),
        default_branch=(payload.get("repository") or {}).get("default_branch"),
        pr_number=pull.get("number") if isinstance(pull.get("number"), int) else None,
        pr_base_branch=(pull.get("base") or {}).get("ref"),
        pr_head_sha=(pull.get("head") or {}).get("sha"),
        from_fork=bool(pull) and head_repo != base_repo,
        server_url=environ.get("GITHUB_SERVER_URL", "https://github.com"),
        workspace=environ.get("GITHUB_WORKSPACE", "."),
    )
