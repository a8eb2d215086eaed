"""The Action's own virtual environment: where it lives, its cache key, and how it is built.

Run by action.yml with the runner's Python before torch-bench is installed, so standard library
only, as a file: `python -I install.py plan` (outputs: venv, key, command), then
`python -I install.py create` (build the environment unless the cache restored it, then
install this checkout of the action into it).

- Dependencies come from constraints.txt, committed next to pyproject.toml.
- torch: `preinstalled` reuses the runner's torch through --system-site-packages, and pins torch
  and numpy to the installed versions so that nothing upgrades them; `cpu` or `cuXYZ` install
  the locked torch from that PyTorch index; a pip spec (`torch==2.5.1`) installs it from PyPI;
  `auto` is `preinstalled` when the runner has torch, else `cpu` for device cpu and the PyPI
  (CUDA) build otherwise. The device is the `device` input, else the `device:` line of the
  `config` file (read as text: the runner's Python may have no YAML parser), else cuda.
- The dashboard and comment sub-actions install no torch at all (extras `site`, `comment`).
- The comment sub-action installs nothing: posting a finished report imports the standard
  library alone (`tests/test_light_imports.py`), so on POSIX its command is a launcher that
  runs this checkout's code with the runner's Python, isolated (`-I`: no workspace, user
  site or PYTHONPATH on sys.path), instead of a virtual environment built with pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

LOCKED_TORCH = "2.13.0"  # the torch the constraints were resolved with (scripts/setup agrees)
PYTORCH_INDEX = "https://download.pytorch.org/whl/{build}"
PINNED_BY_TORCH = ("torch", "numpy")  # never moved under a preinstalled torch
READY_MARK = ".torch-bench-ready"
STANDARD_LIBRARY_EXTRAS = ("comment",)  # extras whose code needs nothing installed
_SPEC = r"(==|!=|>=|<=|~=|<|>)[0-9][0-9A-Za-z.+*]*"
TORCH_SPEC = re.compile(rf"torch({_SPEC}(,{_SPEC})*)?")
CUDA_BUILD = re.compile(r"cu[0-9]{2,4}")


@dataclass(frozen=True)
class TorchRequest:
    """What the environment gets for torch: reuse the runner's, or pip arguments."""

    label: str  # for the cache key and the log: preinstalled-2.5.1, cpu, cu128, torch==2.5.1
    pip_args: tuple[str, ...] = ()
    reuse_installed: bool = False


def parse_torch(text: str) -> str:
    """The `torch` input, validated: auto, preinstalled, cpu, cuXYZ or a torch pip spec."""
    text = text.strip() or "auto"
    if text in ("auto", "preinstalled", "cpu") or CUDA_BUILD.fullmatch(text) \
            or TORCH_SPEC.fullmatch(text.replace(" ", "")):
        return text.replace(" ", "")
    raise ValueError("expected auto, preinstalled, cpu, a CUDA build such as cu128, "
                     "or a pip spec such as torch==2.5.1")


def resolve_torch(choice: str, device: str, installed: str | None) -> TorchRequest:
    """`installed`: the version of the torch the runner's Python already has, if any."""
    if choice == "auto":
        choice = "preinstalled" if installed else ("cpu" if device == "cpu" else "pypi")
    if choice == "preinstalled":
        if not installed:
            raise ValueError("torch: preinstalled, but the runner's Python has no torch")
        return TorchRequest(f"preinstalled-{installed}", reuse_installed=True)
    if choice == "pypi":
        return TorchRequest("pypi", (f"torch=={LOCKED_TORCH}",))
    if choice == "cpu" or CUDA_BUILD.fullmatch(choice):
        index = PYTORCH_INDEX.format(build=choice)
        return TorchRequest(choice, (f"torch=={LOCKED_TORCH}", "--index-url", index,
                                     "--extra-index-url", "https://pypi.org/simple"))
    return TorchRequest(choice, (choice,))


def constraints_for(locked: str, request: TorchRequest, installed: dict[str, str]) -> str:
    """The committed constraints; under a reused torch, torch and numpy pinned to what the
    runner has instead of to the lock."""
    if not request.reuse_installed:
        return locked
    kept = [line for line in locked.splitlines()
            if _name(line) not in PINNED_BY_TORCH]
    pins = [f"{name}=={installed[name]}" for name in PINNED_BY_TORCH if name in installed]
    return "\n".join([*kept, *pins]) + "\n"


def _name(line: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#", 1)[0])
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def cache_key(version: str, request: TorchRequest, extras: str, inputs_digest: str) -> str:
    python = f"py{sys.version_info.major}.{sys.version_info.minor}"
    system = f"{sys.platform}-{platform.machine().lower()}"
    return f"torch-bench-{version}-{system}-{python}-{extras.replace(',', '+')}-" \
           f"{request.label}-{inputs_digest}"


def digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def action_version(root: Path) -> str:
    text = (root / "src" / "torch_bench" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def installed_versions() -> dict[str, str]:
    found = {}
    for name in PINNED_BY_TORCH:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


@dataclass(frozen=True)
class Plan:
    venv: Path
    key: str
    request: TorchRequest
    extras: str

    @property
    def command(self) -> Path:
        return bin_dir(self.venv) / ("torch-bench-action" + (".exe" if os.name == "nt" else ""))


CONFIG_DEVICE = re.compile(r"""^device:[ \t]*["']?([A-Za-z0-9:]+)["']?[ \t]*(#.*)?$""", re.M)


def planned_device(environ: dict[str, str]) -> str:
    """The device the run will use: the input, else the config file's top-level `device:`,
    else cuda (as `inputs.read_inputs` decides it)."""
    device = environ.get("TB_DEVICE", "").strip()
    config = environ.get("TB_CONFIG", "").strip()
    if not device and config:
        try:
            found = CONFIG_DEVICE.search(Path(config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            found = None  # the run step names the file's problem
        device = found.group(1) if found else ""
    return device or "cuda"


def make_plan(root: Path, environ: dict[str, str], installed: dict[str, str]) -> Plan:
    extras = environ.get("TB_EXTRAS", "measure,site")
    if "measure" in extras.split(","):
        request = resolve_torch(parse_torch(environ.get("TB_TORCH", "")),
                                planned_device(environ), installed.get("torch"))
    else:
        request = TorchRequest("no-torch")
    locked = (root / "constraints.txt").read_text(encoding="utf-8")
    inputs = digest(locked, (root / "pyproject.toml").read_text(encoding="utf-8"),
                    json.dumps(request.pip_args), os.path.realpath(sys.executable),
                    json.dumps(installed if request.reuse_installed else {}))
    key = cache_key(action_version(root), request, extras, inputs)
    home = environ.get("RUNNER_TOOL_CACHE") or environ.get("RUNNER_TEMP") \
        or tempfile.gettempdir()
    return Plan(Path(home) / "torch-bench" / inputs, key, request, extras)


def pip(venv: Path, *args: str) -> None:
    command = [str(bin_dir(venv) / "python"), "-m", "pip", "install", "--quiet",
               "--disable-pip-version-check", *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def write_launcher(plan: Plan, root: Path, python: str = sys.executable) -> None:
    """The command of an environment that needs nothing installed: a shell script running
    this checkout's `torch-bench-action` with `python`, isolated."""
    code = (f"import sys; sys.path.insert(0, {str(root / 'src')!r}); "
            "from torch_bench.action.__main__ import entry; sys.exit(entry())")
    plan.command.parent.mkdir(parents=True, exist_ok=True)
    plan.command.write_text("#!/bin/sh\n"
                            f'exec {shlex.quote(python)} -I -c {shlex.quote(code)} "$@"\n')
    plan.command.chmod(0o755)


def create(plan: Plan, root: Path, installed: dict[str, str]) -> None:
    """Build the environment unless it is already there (restored from the cache, or left by
    an earlier job on a self-hosted runner), then install this checkout of the action; for
    extras that need nothing installed, only the launcher."""
    if plan.extras in STANDARD_LIBRARY_EXTRAS and os.name == "posix":
        write_launcher(plan, root)
        return
    if not (plan.venv / READY_MARK).is_file():
        subprocess.run([sys.executable, "-m", "venv", "--clear", *(
            ["--system-site-packages"] if plan.request.reuse_installed else []),
            str(plan.venv)], check=True)
        locked = (root / "constraints.txt").read_text(encoding="utf-8")
        constraints = plan.venv / "constraints.txt"
        constraints.write_text(constraints_for(locked, plan.request, installed))
        if plan.request.pip_args:
            pip(plan.venv, "--constraint", str(constraints), *plan.request.pip_args)
        pip(plan.venv, "--constraint", str(constraints), "setuptools",
            f"{root}[{plan.extras}]")
        (plan.venv / READY_MARK).write_text(plan.key + "\n")
    pip(plan.venv, "--no-deps", "--no-build-isolation", "--force-reinstall", str(root))


def write_outputs(plan: Plan, environ: dict[str, str]) -> None:
    lines = [f"venv={plan.venv}", f"key={plan.key}", f"command={plan.command}",
             f"torch={plan.request.label}"]
    print("\n".join(lines))
    if environ.get("GITHUB_OUTPUT"):
        with open(environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[3]
    environ = dict(os.environ)
    installed = installed_versions()
    try:
        plan = make_plan(root, environ, installed)
    except ValueError as exc:
        print(f"::error title=torch-bench::Invalid value for 'torch' input: {exc}")
        return 2
    if argv == ["plan"]:
        write_outputs(plan, environ)
    elif argv == ["create"]:
        create(plan, root, installed)
    else:
        print("usage: install.py plan|create", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
