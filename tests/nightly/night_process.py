"""``evalplat nightly`` in a process of its own, without importing the night's modules each time.

The crash-point test runs some forty nights, each in a new process that is killed at one point.
Starting each as ``python -c "from evalplat.cli import main; main()" nightly ...`` imported
pandas, SQLAlchemy and evalplat's modules again for every night. Here each night is a child of
multiprocessing's fork server, a fresh interpreter that has imported those modules (``PRELOAD``)
and run nothing else: the child is a new process as before, with its own environment, command
line and standard streams, that ends with the command's exit code or killed by its crash point
(exit ``-9``).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from pathlib import Path

# What a night imports (the command, the night, the store, its reports), imported once by the
# fork server: importing runs no command, opens no database and starts no night.
PRELOAD = (
    "evalplat.cli.root",
    "evalplat.cli.nightly",
    "evalplat.nightly.job",
    "evalplat.nightly.delivery",
    "evalplat.nightly.notify",
    "evalplat.reports.site",
    "evalplat.store",
    "evalplat.running.runner",
    "evalplat.searchers.python",
    "evalplat.db.migrate",
    "sqlalchemy.dialects.sqlite",
    "sqlalchemy.dialects.postgresql.psycopg",
    "psycopg",
    "pandas",
    "pyarrow",
    "httpx",
    "jinja2",
)


# What the child runs, given as source to ``exec`` (a builtin, which the fork server finds by
# name: the tests' folder is not a package it can import from).
CHILD = """
import os, sys
os.environ.clear()
os.environ.update(environ)
written = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.dup2(written, 1)
os.dup2(written, 2)
os.close(written)
sys.argv = ["evalplat", *argv]
from evalplat.cli import main
main()  # exits with the command's code (SystemExit), which becomes the process's
"""


def run_command(argv: Sequence[str], environ: Mapping[str, str], output: Path) -> int:
    """Run ``evalplat ARGV`` in a new process with exactly ``environ``; its output is appended to
    ``output``. Returns its exit code, negative for the signal that killed it (-9: SIGKILL)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))  # once the server runs, it keeps what it has
    scope = {"argv": list(argv), "environ": dict(environ), "output": str(output)}
    process = context.Process(target=exec, args=(CHILD, scope))
    process.start()
    process.join()
    assert process.exitcode is not None
    return process.exitcode
