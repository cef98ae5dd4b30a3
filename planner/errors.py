"""One error hierarchy for everything a user can get wrong or the outside world can break.

The CLI prints ``str(error)`` and exits non-zero; tracebacks appear only with ``--verbose``.
Errors about input name the file, the statement number and the line, so the user can go
straight to the culprit.
"""
from __future__ import annotations

from dataclasses import dataclass


class PlannerError(Exception):
    """Root of all user-facing errors."""

    exit_code = 1


@dataclass(frozen=True)
class Location:
    """Where in a workload file something happened (1-based statement and line numbers)."""

    file: str
    statement: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts[0] = f"{self.file}:{self.line}"
        if self.statement is not None:
            parts.append(f"statement {self.statement}")
        return ", ".join(parts)


class InputError(PlannerError):
    """Bad user input: a workload, a query, a layout file, a command-line value."""

    exit_code = 2

    def __init__(self, reason: str, location: Location | None = None):
        self.reason = reason
        self.location = location
        super().__init__(f"{location}: {reason}" if location else reason)


class WorkloadError(InputError):
    """A workload statement cannot be read (syntax, empty file, missing file)."""


class SchemaError(InputError):
    """A query names a table or column the schema does not have, or a literal of the wrong type."""


class LayoutError(InputError):
    """A layout.json or advice folder is missing, malformed or of an unsupported version."""


class MetastoreError(PlannerError):
    """The Hive metastore could not be reached or refused a request."""


class ApplyError(PlannerError):
    """Applying a layout failed; the message says what state the tables were left in."""


class LeaseError(ApplyError):
    """Another apply holds the table."""


class Interrupted(PlannerError):
    """Ctrl-C stopped a command that changes tables; the message says what state they are in and
    which command continues."""

    exit_code = 130
