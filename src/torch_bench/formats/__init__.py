"""Exporters and importers for the formats other tools produce and consume.

An exporter turns a Run into text; an importer turns text into Results, a run importer into
whole Runs (its records say their own commit, job and machine). The registries are keyed by
the `--format` name the CLI accepts.
"""

from __future__ import annotations

from collections.abc import Callable

from torch_bench.errors import UserError
from torch_bench.formats import (
    aipep,
    asv,
    csv_hf,
    dynamo_csv,
    oss,
    pytest_benchmark,
    pytorch_v3,
    pytorch_v3_import,
)
from torch_bench.formats.options import ExportOptions
from torch_bench.formats.safety import guarded
from torch_bench.results.schema import Result, Run

__all__ = ["EXPORTERS", "IMPORTERS", "RUN_IMPORTERS", "ExportOptions", "exporter", "importer"]

Exporter = Callable[..., str]  # (run, options: ExportOptions | None = None)
Importer = Callable[..., list[Result]]  # (text, *, source, unit, suite, metric[, params])
RunImporter = Callable[..., list[Run]]  # (text, *, source, suite)

EXPORTERS: dict[str, Exporter] = {
    "oss": oss.export_oss,
    "aipep": aipep.export_aipep,
    "csv": csv_hf.export_csv,
    "dynamo-csv": dynamo_csv.export_dynamo_csv,
    "pytorch-v3": pytorch_v3.export_pytorch_v3,
}

IMPORTERS: dict[str, Importer] = {
    "oss": oss.import_oss,
    "aipep": aipep.import_aipep,
    "pytest-benchmark": pytest_benchmark.import_pytest_benchmark,
    "asv": asv.import_asv,
}

# Importers of records that carry their own provenance, grouped into runs by it.
RUN_IMPORTERS: dict[str, RunImporter] = {
    "pytorch-v3": pytorch_v3_import.import_pytorch_v3,
}


def _pick(table: dict, name: str, what: str):
    try:
        return table[name]
    except KeyError:
        raise UserError(f"--format: unknown {what} format {name!r}; "
                        f"choose from {', '.join(table)}") from None


def exporter(name: str) -> Exporter:
    return _pick(EXPORTERS, name, "export")


def importer(name: str) -> Importer:
    """The importer for `--format name`: any text gives results or a UserError."""
    return guarded(_pick(IMPORTERS, name, "import"), name)
