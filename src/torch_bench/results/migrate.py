"""Bring stored documents forward to the current schema version, one version at a time.

To change the schema: bump SCHEMA_VERSION in schema.py, add `schemas/run-v<N>.json`, and
register `_to_<N>(doc)` below that turns a version N-1 document into a version N one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch_bench.results.schema import SCHEMA_VERSION

Document = dict[str, Any]

# MIGRATIONS[n] turns a version n-1 document into a version n document.
MIGRATIONS: dict[int, Callable[[Document], Document]] = {}


class MigrationError(ValueError):
    pass


def document_version(doc: Document) -> Any:
    schema = doc.get("schema")
    return schema.get("version") if isinstance(schema, dict) else None


def migrate(doc: Document) -> Document:
    """Return `doc` at the current version; raise MigrationError if that cannot be done."""
    version = document_version(doc)
    if not isinstance(version, int) or isinstance(version, bool):
        raise MigrationError("schema.version: missing or not an integer")
    if version > SCHEMA_VERSION:
        raise MigrationError(
            f"schema.version: {version} is newer than this torch-bench understands "
            f"({SCHEMA_VERSION}); upgrade torch-bench"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version + 1)
        if step is None:
            raise MigrationError(f"schema.version: no migration from version {version}")
        doc = step(doc)
        version += 1
        doc["schema"]["version"] = version
    return doc
