"""Entry point of the Action's composite steps: `torch-bench-action [site|comment|bisect]` (the
console script, so that the workspace is never on sys.path: a `json.py` or `torch_bench/` in
the checkout cannot shadow the code that holds the token), or `python -P -m torch_bench.action`."""

import sys

from torch_bench.action.pipeline import MODES
from torch_bench.errors import UserError
from torch_bench.report.actions import error


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else ""
    if mode not in MODES:
        print(error(f"unknown mode {mode!r}; use one of site, comment, bisect"))
        return 2
    try:
        return MODES[mode]()
    except UserError as exc:
        print(error(str(exc)))
        return 2


def entry() -> int:
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(entry())
