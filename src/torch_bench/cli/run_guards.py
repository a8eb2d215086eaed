"""Guards around `torch-bench run`: termination signals turned into an exception so that
cleanup runs on the way out (numeric flags are checked by their argparse types, from
config_file.BOUNDS)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(Exception):
    """The run received a termination signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # what a shell reports for a process ended by the signal


def _raise_stopped(signum, frame) -> None:
    raise Stopped(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Stopped` (SIGINT already raises
    KeyboardInterrupt), so `finally` blocks stop case processes and remove their folders."""
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
