"""Entry point of the Action's composite steps: `torch-bench-action [site|comment|bisect]` (the
console script, so that the workspace is never on sys.path: a `json.py` or `torch_bench/` in
the checkout cannot shadow the code that holds the token), or `python -P -m torch_bench.action`."""

import sys
from importlib import import_module

from torch_bench.errors import UserError
from torch_bench.report.workflow import error

# Each mode's module is imported alone: posting a finished report (the comment sub-action)
# loads neither the measuring nor the judging code.
MODES = {"": ("torch_bench.action.pipeline", "run_pipeline"),
         "site": ("torch_bench.action.pipeline", "run_site"),
         "comment": ("torch_bench.action.handoff", "run_comment"),
         "bisect": ("torch_bench.action.pipeline", "run_bisect")}


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else ""
    if mode not in MODES:
        print(error(f"unknown mode {mode!r}; use one of site, comment, bisect"))
        return 2
    try:
        module, function = MODES[mode]
        return getattr(import_module(module), function)()
    except UserError as exc:
        print(error(str(exc)))
        return 2


def entry() -> int:
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(entry())
