"""Named exceptions raised by the library; only the CLI turns them into messages and exit codes.

Exit codes are part of the product contract: 0 success, 1 a regression was found (gating
commands), 2 bad usage or invalid input, 3 operational failure.
"""

from __future__ import annotations

from pathlib import Path


class EvalplatError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with when this reaches it."""

    exit_code = 3


class InputError(EvalplatError):
    """Invalid user input: a malformed file, an unknown name, a bad option value.

    When ``path`` is given the message reads ``qrels.txt line 12: expected 4 fields, found 3``.
    """

    exit_code = 2

    def __init__(self, problem: str, *, path: str | Path | None = None, line: int | None = None):
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path} line {line}"
            where += ": "
        super().__init__(f"{where}{problem}")


class NotFoundError(InputError):
    """A named thing (test set, config, run, metric) does not exist."""


class OperationalError(EvalplatError):
    """Something outside the input failed: the database, a search backend, an incomplete run."""

    exit_code = 3


class DatabaseUnavailableError(OperationalError):
    """The database cannot be reached or opened."""


class SchemaOutdatedError(OperationalError):
    """The database schema is older (or newer) than this version of evalplat expects."""
