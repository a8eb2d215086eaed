"""TorchScript's fuser and executor, chosen as fastrnns' `--fuser` and `--executor` choose them.

`te` (the default, as in fastrnns) is the profiling executor with the tensor-expression
fuser; `old` the legacy executor with the old GPU fuser; `none` no fusion at all; `default`
leaves torch's settings alone. `--executor` then overrides the executor part: `profiling`,
`simple` (the profiling executor without optimisation) or `legacy`. Applied in the case's
own process before its model is built.
"""

from __future__ import annotations

from torch_bench.suites.base import Option

FUSERS = ("te", "old", "none", "default")
EXECUTORS = ("default", "profiling", "simple", "legacy")
DEFAULT_FUSER, DEFAULT_EXECUTOR = "te", "default"


def _parse_sep(text: str) -> str:
    return str(text)


def _one(known):
    def parse(text: str) -> str:
        if str(text) not in known:
            raise ValueError(f"expected one of {', '.join(known)}, got {text!r}")
        return str(text)

    return parse


# The options fastrnns gives its TorchScript variants, and its table (rnns and cnns).
JIT_OPTIONS = (
    Option("fuser", _one(FUSERS), DEFAULT_FUSER,
           f"TorchScript fuser, as fastrnns' --fuser: {', '.join(FUSERS)}"),
    Option("executor", _one(EXECUTORS), DEFAULT_EXECUTOR,
           f"TorchScript executor, overriding the fuser's, as fastrnns' --executor: "
           f"{', '.join(EXECUTORS)}"),
    Option("sep", _parse_sep, None,
           "print fastrnns' table (name avg_fwd std_fwd info_fwd avg_bwd std_bwd info_bwd) "
           "with this column separator, e.g. ' ' or '|'"),
)


def _calls(fuser: str, executor: str) -> list[tuple[str, bool]]:
    """The torch._C switches to flip, in order, for a fuser and an executor."""
    by_fuser = {
        "te": [("_jit_set_profiling_executor", True), ("_get_graph_executor_optimize", True),
               ("_jit_override_can_fuse_on_cpu", False), ("_jit_override_can_fuse_on_gpu", True),
               ("_jit_set_texpr_fuser_enabled", True)],
        "old": [("_jit_set_profiling_executor", False), ("_get_graph_executor_optimize", False),
                ("_jit_override_can_fuse_on_gpu", True), ("_jit_set_texpr_fuser_enabled", False)],
        "none": [("_jit_set_profiling_executor", False), ("_get_graph_executor_optimize", False),
                 ("_jit_override_can_fuse_on_gpu", False),
                 ("_jit_override_can_fuse_on_cpu", False),
                 ("_jit_set_texpr_fuser_enabled", False)],
        "default": [],
    }
    by_executor = {
        "profiling": [("_jit_set_profiling_executor", True),
                      ("_get_graph_executor_optimize", True)],
        "simple": [("_get_graph_executor_optimize", False)],
        "legacy": [("_jit_set_profiling_executor", False), ("_get_graph_executor_optimize", True)],
        "default": [],
    }
    return by_fuser[fuser] + by_executor[executor]


def apply_jit_settings(fuser: str = DEFAULT_FUSER, executor: str = DEFAULT_EXECUTOR) -> None:
    """Set TorchScript's fuser and executor for this process; a switch this torch lacks is
    left alone (TorchScript's internals move between releases)."""
    import torch

    for name, value in _calls(fuser, executor):
        switch = getattr(torch._C, name, None)
        if switch is not None:
            switch(value)


def jit_settings_params(fuser: str, executor: str) -> dict[str, str]:
    """The settings as benchmark parameters: only those that differ from the defaults, so a
    default run keeps the series it always had."""
    params = {}
    if fuser != DEFAULT_FUSER:
        params["fuser"] = fuser
    if executor != DEFAULT_EXECUTOR:
        params["executor"] = executor
    return params
