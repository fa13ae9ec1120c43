"""Database failures as named, one-line evalplat errors.

SQLite and PostgreSQL report the same operational problems in their own words; this module
turns each into an :class:`~evalplat.errors.EvalplatError` with a message a user can act on:

============================  =================================  =========
condition                     SQLite / PostgreSQL signal         exit code
============================  =================================  =========
another writer holds a lock   ``database is locked`` / 55P03     3
disk or quota full            ``database or disk is full``,      3
                              ``disk I/O error`` / 53100, 53200
read-only database            ``attempt to write a readonly      3
                              database`` / 25006
cannot open or reach it       ``unable to open database file`` / 3
                              connection errors
two writers of one new name   ``IntegrityError`` (unique key)    3
a value the column refuses    ``DataError`` (22xxx)              2
anything else                 any other driver error             3
============================  =================================  =========

Errors are recognised from SQLAlchemy's wrappers and from the drivers' own exceptions (the bulk
loader talks to the driver directly).
"""

from __future__ import annotations

from evalplat.errors import (
    DatabaseUnavailableError,
    EvalplatError,
    InputError,
    OperationalError,
)


class DatabaseBusyError(OperationalError):
    """Another process held a lock for longer than the busy timeout."""


class DatabaseFullError(OperationalError):
    """The disk (or the file size limit) left no room for the write."""


class DatabaseReadOnlyError(OperationalError):
    """The database (file or server) accepts no writes."""


class DatabaseConflictError(OperationalError):
    """A concurrent writer stored the same thing first; running the command again settles it."""


class DatabaseError(OperationalError):
    """Any other failure reported by the database."""


_DRIVER_MODULES = ("sqlite3", "psycopg")


def is_database_error(error: BaseException) -> bool:
    """True for SQLAlchemy errors and the DB-API drivers' own exceptions."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError, StatementError

    if isinstance(error, StatementError) and not isinstance(error, DBAPIError):
        # a statement that failed before reaching the driver (a value that cannot be bound or
        # serialised) is a program error, not the database's: it keeps its own type
        return error.orig is None or is_database_error(error.orig)
    if isinstance(error, SQLAlchemyError):
        return True
    module = type(error).__module__ or ""
    return module.split(".")[0] in _DRIVER_MODULES


def translate(error: BaseException, where: str = "the database") -> EvalplatError:
    """The evalplat error for a database ``error`` (see the module docstring's table)."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    original: BaseException = error
    if isinstance(error, DBAPIError) and error.orig is not None:
        original = error.orig
    kind = type(original).__name__
    state = str(getattr(original, "sqlstate", "") or "")
    text = _first_line(original)
    lowered = text.lower()
    if "locked" in lowered or state in ("55P03", "40P01") or kind == "LockNotAvailable":
        return DatabaseBusyError(
            f"{where} is locked by another writer and stayed locked past the busy timeout; "
            f"try again when it has finished ({text})"
        )
    if "disk is full" in lowered or "disk i/o" in lowered or state in ("53100", "53200"):
        # SQLite says "disk I/O error" when the file may not grow (EFBIG, a quota)
        return DatabaseFullError(f"{where} could not write to disk: {text} (is the disk full?)")
    if "readonly" in lowered or "read-only" in lowered or state == "25006":
        return DatabaseReadOnlyError(f"{where} is read-only, nothing was written ({text})")
    if kind == "IntegrityError" or state.startswith("23"):
        return DatabaseConflictError(
            f"another process wrote the same thing to {where} at the same time; "
            f"run the command again ({text})"
        )
    if kind == "DataError" or state.startswith("22"):
        return InputError(f"{where} refused a value: {text}")
    if "unable to open" in lowered or state.startswith("08") or "connect" in lowered:
        return DatabaseUnavailableError(f"cannot reach {where}: {text}")
    if isinstance(error, SQLAlchemyError) and not isinstance(error, DBAPIError):
        return DatabaseError(f"{where}: {text}")
    return DatabaseError(f"{where} failed: {text}")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
