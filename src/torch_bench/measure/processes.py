"""Stopping a case's process tree and reading what it printed."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import psutil


def stop_process_tree(proc: subprocess.Popen) -> None:
    """Kill `proc`, its process group and every descendant, including one that left the group
    (a new session), then reap `proc`. Safe to call on a process that already exited."""
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True) \
            if proc.poll() is None else []
    except psutil.NoSuchProcess:
        descendants = []
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for child in descendants:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    proc.wait()


def read_tail(path: Path, max_bytes: int = 16_384) -> str:
    """The end of a log file as text (undecodable bytes replaced)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - max_bytes))
            return handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def stop_pid_tree(pid: int) -> None:
    """Kill the process group led by `pid` (a case process in a session of its own) and
    every descendant of `pid`, without reaping it (its parent does). Safe when it ended."""
    try:
        descendants = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for child in descendants:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
