"""Where a case's timed calls are, for a profiler that wants to see only them.

The timer (`timer.measure`) and the compile suite's interleaved rounds open a *window*
around their timed calls, after the warm-up. Nothing happens in a window unless a profiling
session is installed (`torch-bench explain`'s worker does that, see `op_profile`): then the
session profiles the calls of the window it wants. The window learns how many calls it
covered from its caller (`window.calls = ...`), since the timer decides that as it goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Window:
    metric: str | None
    runtime: str | None = None  # which of a case's versions ran (compile suite: eager, compiled)
    calls: int = 0  # set by the caller before the window closes


class Session(Protocol):
    def record(self, window: Window) -> Iterator[None]: ...


_session: Session | None = None


def install(session: Session | None) -> None:
    """Make `session` see every window from now on (None: no session)."""
    global _session
    _session = session


@contextmanager
def profile_window(metric: str | None, runtime: str | None = None) -> Iterator[Window]:
    window = Window(metric, runtime)
    if _session is None:
        yield window
        return
    with _session.record(window):
        yield window
