"""The CLI as a user runs it: `python -m torch_bench ...` in a folder of the test's choosing
(the `cli` fixture of conftest.py does the same in the test's own tmp_path)."""

from __future__ import annotations

import os
import subprocess
import sys


def torch_bench(folder, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torch_bench", *args], cwd=folder,
                          capture_output=True, text=True, env=dict(os.environ), timeout=600)
