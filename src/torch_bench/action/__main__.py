"""Entry point of the Action's composite steps: `python -m torch_bench.action [site|comment]`."""

import sys

from torch_bench.action.pipeline import run_pipeline
from torch_bench.errors import UserError


def main(argv: list[str]) -> int:
    try:
        return run_pipeline()
    except UserError as exc:
        print(f"::error title=torch-bench::{exc}")
        return 2


sys.exit(main(sys.argv[1:]))
