"""One guard around every importer: whatever the input, an importer gives results or raises
UserError naming the file, never a traceback.

Importers check the shapes they expect and say what is wrong; this catches what slips past
them on hostile input (JSON nested deeper than the parser goes, a 400-digit number that
overflows a float, a field of an unexpected type), so each importer stays about its format.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from torch_bench.errors import InvalidDocument, UserError
from torch_bench.results.schema import Run, new_run
from torch_bench.results.validate import problems

F = TypeVar("F", bound=Callable)

_MALFORMED = (RecursionError, OverflowError, ValueError, TypeError, KeyError, IndexError,
              AttributeError, ZeroDivisionError)


def guarded(function: F, format_name: str) -> F:
    @functools.wraps(function)
    def read(text: str, *args, source: str = "<input>", **kwargs):
        try:
            return _checked(function(text, *args, source=source, **kwargs), source)
        except UserError:
            raise
        except RecursionError:
            raise InvalidDocument(f"{source}: nested too deeply to read as {format_name}") \
                from None
        except _MALFORMED as exc:
            detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            raise InvalidDocument(f"{source}: not valid {format_name} input ({detail})") \
                from None
    return read  # type: ignore[return-value]


def _checked(imported, source: str):
    """The importer's results (or runs) when they make a valid document: an importer reads
    what a file says, and a negative time or a name with control characters is refused here
    as it is in a run document."""
    if not isinstance(imported, list):  # e.g. the provenance a file records
        return imported
    runs = [item for item in imported if isinstance(item, Run)] or [new_run(imported)]
    for run in runs:
        found = problems(run.to_dict())
        if found:
            raise InvalidDocument(f"{source}: an imported value is not valid: {found[0]}")
    return imported
