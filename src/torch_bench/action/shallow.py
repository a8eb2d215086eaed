"""Shallow checkouts (actions/checkout's default, `fetch-depth: 1`) hold one commit; A/B,
targeted confirmation, explain and bisection need older ones (the merge-base, the previous
measured commit, the range between two runs). The first stage that misses a commit fetches
the rest of the history from the checkout's `origin` once, with the job's token when the
checkout kept no credentials (`persist-credentials: false`), together with the branch it
compares with; when that fails, one warning says what to change, and each stage then goes on
without what it needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

from torch_bench.report.workflow import warning
from torch_bench.store.access import credentials_for
from torch_bench.store.git import auth_env, scrub

FIX = "check out with `fetch-depth: 0` (actions/checkout) to give it the whole history"
_FETCHED: dict[str, bool] = {}  # workspace -> whether its history could be completed


def _git(workspace: str, *args: str, env: Mapping[str, str] | None = None
         ) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", workspace, *args], capture_output=True, text=True,
                          check=False, env=env, stdin=subprocess.DEVNULL)


def has_commit(workspace: str, rev: str) -> bool:
    return _git(workspace, "cat-file", "-e", f"{rev}^{{commit}}").returncode == 0


def is_shallow(workspace: str) -> bool:
    done = _git(workspace, "rev-parse", "--is-shallow-repository")
    return done.returncode == 0 and done.stdout.strip() == "true"


def complete_history(workspace: str, branches: Sequence[str] = (),
                     environ: Mapping[str, str] = os.environ) -> bool:
    """Fetch the whole history of a shallow checkout, and `branches` as `origin/<name>`;
    True when anything was fetched. Tried once per checkout: a failure is said once."""
    if workspace in _FETCHED:
        return _FETCHED[workspace]
    shallow = is_shallow(workspace)
    origin = _git(workspace, "remote", "get-url", "origin").stdout.strip()
    if not origin or not (shallow or branches):
        _FETCHED[workspace] = False
        if shallow:
            _say(f"the checkout is shallow and has no origin to fetch its history from; {FIX}")
        return False
    creds = credentials_for(origin, environ.get("GITHUB_TOKEN"))
    refspecs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in dict.fromkeys(branches)]
    print(f"fetching the history of the {'shallow ' if shallow else ''}checkout "
          f"(A/B, confirmation, explain and bisection need older commits)", file=sys.stderr)
    done = _git(workspace, "fetch", "--quiet", "--no-tags", *(["--unshallow"] if shallow else []),
                "origin", *refspecs, env={**os.environ, **auth_env(creds),
                                          "GIT_TERMINAL_PROMPT": "0"})
    _FETCHED[workspace] = done.returncode == 0
    if done.returncode != 0:
        secrets = creds.secrets() if creds else ()
        why = scrub((done.stderr.strip().splitlines() or ["no message"])[-1], secrets)
        _say(f"cannot fetch the checkout's history ({why}); {FIX}")
    return _FETCHED[workspace]


def ensure_commits(workspace: str, revs: Sequence[str], branches: Sequence[str] = (),
                   environ: Mapping[str, str] = os.environ) -> bool:
    """Whether every commit of `revs` is in the checkout, fetching the history if not."""
    if all(has_commit(workspace, rev) for rev in revs):
        return True
    complete_history(workspace, branches, environ)
    return all(has_commit(workspace, rev) for rev in revs)


def _say(message: str) -> None:
    print(warning(message), file=sys.stderr, flush=True)
