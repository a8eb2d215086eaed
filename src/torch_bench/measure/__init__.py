"""Measuring: timers, memory, the environment, and running each case in its own process."""
