"""torch-bench: continuous benchmarking for PyTorch."""

__version__ = "1.0.0"
