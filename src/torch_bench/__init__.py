"""torch-bench: continuous benchmarking for PyTorch."""

__version__ = "0.1.0"
