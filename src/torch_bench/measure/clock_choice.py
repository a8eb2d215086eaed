"""Which clock a run's samples are on: `--clock wall|cpu|auto`, chosen once per run.

`auto` takes process CPU time on a CPU device when the cases run on one torch thread, and the
device's own clock otherwise (wall time; CUDA events on a GPU). The choice depends only on
the flags and the device, never on how busy the machine is at the moment, so every run of a
history is on the same clock. Pure: the caller knows the device and the thread count.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_bench.errors import UserError

CHOICES = ("auto", "wall", "cpu")


@dataclass(frozen=True)
class ClockChoice:
    clock: str  # the timing policy's clock: "wall" (the device's) or "cpu"
    why: str  # one line for the console
    warning: str | None = None  # where the chosen clock can mislead


def choose_clock(asked: str, device: str, threads: int) -> ClockChoice:
    """The clock for a run of `device` with `threads` intra-op threads; UserError where the
    asked clock cannot measure the work at all (CPU time of GPU work)."""
    if asked not in CHOICES:
        raise UserError(f"--clock: expected one of {', '.join(CHOICES)}, got {asked!r}")
    gpu = device.startswith("cuda")
    if gpu:
        if asked == "cpu":
            raise UserError("--clock cpu: CPU time does not see the work a GPU does; time "
                            f"{device} with --clock wall (CUDA events) or auto")
        return ClockChoice("wall", "CUDA events (the GPU's own clock)")
    if asked == "wall":
        return ClockChoice("wall", "wall time, as asked (it counts the time other processes "
                                   "take from this one on a shared CPU)")
    if asked == "auto" and threads > 1:
        return ClockChoice("wall", f"wall time: the cases run on {threads} torch threads, "
                                   "whose CPU time would add up (--threads 1 for the CPU "
                                   "clock)")
    warning = None
    if threads > 1:
        warning = (f"--clock cpu with {threads} torch threads: process CPU time adds up the "
                   "work (and the spin-waits) of every thread, so it is not the latency and "
                   "it reads a better use of threads as a slowdown")
    how = "as asked" if asked == "cpu" else "a CPU device on one thread"
    return ClockChoice("cpu", f"process CPU time ({how}): time taken by other processes is "
                              "not counted", warning)
