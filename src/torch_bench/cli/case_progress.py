"""Which case is being measured, for how long, and what bounds it: a stuck case is visible.

On a terminal the progress bar's description carries it, updated every second. Elsewhere
(a CI log, a file) Rich draws no live bar, so a line is printed when a case starts and every
`every` seconds while it runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from torch_bench.config import RunConfig

DEFAULT_EVERY_S = 60.0


def bounds_text(config: RunConfig) -> str:
    """What ends a case's measuring, in the flags' terms."""
    policy, timeout = config.policy, config.isolation.timeout_s
    if policy.nloops is not None:
        sampling = f"--nloops {policy.nloops} samples a metric"
    else:
        sampling = (f"--max-time {policy.max_time_s:g} s a metric once --min-repeats "
                    f"{policy.min_repeats} are in")
    return f"{sampling}; the case stopped at --timeout {timeout:g} s"


def elapsed_text(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{seconds:.0f}s"


def progress_line(label: str, elapsed_s: float, bounds: str) -> str:
    return f"{label}: running for {elapsed_text(elapsed_s)} ({bounds})"


class CaseWatch:
    """Reports the running case through `show(text)` (every `every` seconds) until stopped."""

    def __init__(self, show: Callable[[str], None], bounds: str, every: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._show, self._bounds, self._every, self._clock = show, bounds, every, clock
        self._label: str | None = None
        self._since = 0.0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name="torch-bench case progress")

    def __enter__(self) -> CaseWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def started(self, label: str) -> None:
        with self._lock:
            self._label, self._since = label, self._clock()

    def finished(self) -> None:
        with self._lock:
            self._label = None

    def _loop(self) -> None:
        while not self._done.wait(self._every):
            with self._lock:
                label, since = self._label, self._since
            if label is not None:
                self._show(progress_line(label, self._clock() - since, self._bounds))
