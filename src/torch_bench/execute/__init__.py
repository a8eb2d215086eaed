"""Running a plan's cases: each in its own process (spawned, or forked from a warm server),
in this one, or profiled; the loop calibration read from history. The layer above measure
(how to time and what to record) and suites (what a case is), which it brings together."""
