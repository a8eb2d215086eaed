"""The Action's virtual environment for the end-to-end tests, made by action.yml's own steps
(`install.py plan`, then `install.py create`) as on a runner whose cache restored it: the
dependencies are this test environment's (a .pth file stands in for the restored
site-packages), and `create` installs this checkout's code and its console script."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "src" / "torch_bench" / "action" / "install.py"


def install_step(mode: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """One of the set-up steps, with the runner's Python (here the test interpreter)."""
    return subprocess.run([sys.executable, "-I", str(INSTALL), mode], env=env,
                          capture_output=True, text=True, timeout=600)


def plan_outputs(env: dict[str, str]) -> dict[str, str]:
    done = install_step("plan", env)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def restored_venv(tool_cache: Path, extras: str = "measure,site") -> tuple[Path, float]:
    """The console script of a ready environment, and the seconds `create` took on it."""
    env = {**os.environ, "RUNNER_TOOL_CACHE": str(tool_cache), "TB_EXTRAS": extras,
           "TB_DEVICE": "cpu", "TB_TORCH": "preinstalled"}
    plan = plan_outputs(env)
    venv = Path(plan["venv"])
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(subprocess.check_output(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
         "['purelib'])"], text=True).strip())
    (purelib / "restored-from-cache.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (venv / ".torch-bench-ready").write_text(plan["key"] + "\n")
    started = time.perf_counter()
    done = install_step("create", env)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(plan["command"]), seconds
