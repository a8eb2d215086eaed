"""The stages that import the code under test run in child processes that hold no token.

The Action's own process holds the token and never has the workspace on sys.path. A
repository's own suites (input `suite-path`) are imported only by `torch-bench` commands
started here: without the secret variables of this environment, with the `suite-path`
folders of the workspace first on PYTHONPATH, and with `TORCH_BENCH_SUITE_PATH` set so that
their own children (A/B sides, confirming and bisecting rounds, explain's workers) find the
same folders in whichever checkout they measure (suite_path.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.redact import token_free_environment
from torch_bench.suite_path import VARIABLE, checkout_paths

# `-c` puts the working directory (the workspace) first on sys.path: taken off before any
# import, so that only the PYTHONPATH folders are the workspace's (`-P` needs Python 3.11).
CHILD_MAIN = "import sys; del sys.path[0]; from torch_bench.cli import main; sys.exit(main())"


def child_environment(workspace: Path, suite_path: Sequence[str],
                      environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without its secrets, with the workspace's `suite_path` folders first on
    PYTHONPATH."""
    env = token_free_environment(environ)
    env[VARIABLE] = ",".join(suite_path)
    paths = checkout_paths(workspace, env)
    existing = env.get("PYTHONPATH")
    if paths or existing:
        env["PYTHONPATH"] = os.pathsep.join(paths + ([existing] if existing else []))
    return env


def child_cli(workspace: str, suite_path: Sequence[str] = (),
              environ: Mapping[str, str] = os.environ) -> Callable[..., int]:
    """A `stages.cli` that runs the command in a token-free child process in `workspace`."""
    def run(*args: object) -> int:
        argv = [str(a) for a in args]
        command = [sys.executable, "-c", CHILD_MAIN, *argv]
        sys.stdout.flush()
        sys.stderr.flush()
        done = subprocess.run(command, cwd=workspace, stdin=subprocess.DEVNULL, check=False,
                              env=child_environment(Path(workspace), suite_path, environ))
        if done.returncode != 0:
            raise UserError(f"torch-bench {argv[0]} exited with status {done.returncode} "
                            "(its error is above)")
        return 0

    return run


def export_suite_path(suite_path: Sequence[str], environ: dict | os._Environ) -> None:
    """Let the children of this process's in-process commands (A/B sides, confirming and
    bisecting rounds) find the `suite-path` folders in their checkouts. This process never
    reads the variable for its own imports."""
    if suite_path:
        environ[VARIABLE] = ",".join(suite_path)
