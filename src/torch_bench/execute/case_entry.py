"""The entry point of a case's process: tie it to the run, then start the worker.

`python -m torch_bench.execute.case_entry ARGS...` asks the kernel to kill this process when
the run dies (before any of the case's code is imported), then runs
`torch_bench.execute.worker` with the same arguments, as `python -m` would."""

from __future__ import annotations

import os
import runpy
import sys

from torch_bench.measure.processes import PARENT_VARIABLE, die_with_parent

if __name__ == "__main__":
    parent = os.environ.get(PARENT_VARIABLE, "")
    die_with_parent(int(parent) if parent.isdigit() else None)
    sys.argv[0] = "torch_bench.execute.worker"
    runpy.run_module("torch_bench.execute.worker", run_name="__main__", alter_sys=True)
