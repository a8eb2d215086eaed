"""Entry point of the Action's composite steps: `python -m torch_bench.action [site|comment]`."""

import sys

from torch_bench.action.pipeline import MODES
from torch_bench.errors import UserError
from torch_bench.report.actions import error


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else ""
    if mode not in MODES:
        print(error(f"unknown mode {mode!r}; use one of site, comment"))
        return 2
    try:
        return MODES[mode]()
    except UserError as exc:
        print(error(str(exc)))
        return 2


sys.exit(main(sys.argv[1:]))
