"""Measuring: timers, memory, the environment a run measured on, and the case types every
process that measures shares. Running the cases (processes, the fork server, calibration)
is execute/, one layer up."""
