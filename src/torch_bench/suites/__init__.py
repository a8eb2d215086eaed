"""The suite registry. Suites are imported only when used, so listing them is cheap."""

from __future__ import annotations

import re
from importlib import import_module

from torch_bench.errors import UserError
from torch_bench.suites.base import Suite

SUITE_MODULES: dict[str, str] = {
    "rnns": "torch_bench.suites.rnns",
    "cnns": "torch_bench.suites.cnns",
    "transformers": "torch_bench.suites.transformers",
    "compile": "torch_bench.suites.compile",
    "training": "torch_bench.suites.training",
}
MODULE_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # package.module: no path, no '..'


def suite_names() -> list[str]:
    return sorted(SUITE_MODULES)


def get_suite(name: str) -> Suite:
    """A built-in suite by name, or a user's suite by module path (`package.module`, which
    must define `SUITE`)."""
    module = SUITE_MODULES.get(name)
    if module is None and "." not in name:
        raise UserError(
            f"unknown suite {name!r}; available suites: {', '.join(suite_names())} "
            "(or a module path such as mypackage.bench that defines SUITE)"
        )
    if module is None and not MODULE_PATH.fullmatch(name):
        raise UserError(f"suite {name!r}: not a module path such as mypackage.bench")
    try:
        suite = getattr(import_module(module or name), "SUITE", None)
    except ImportError as exc:
        raise UserError(f"suite {name!r}: cannot import it ({exc})") from None
    if not isinstance(suite, Suite):
        raise UserError(f"suite {name!r}: the module defines no SUITE")
    return suite
