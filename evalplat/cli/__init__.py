"""The ``evalplat`` command: a thin Typer layer over the Python API, one module per noun.

The root group and its error handling are in :mod:`evalplat.cli.root`, imported on first use
of ``app``, ``main`` or ``MODULE_OF``: importing this package costs nothing, so that a module of
it that needs no Typer (``evalplat.cli.evaluate_direct``) starts without it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.cli.root import MODULE_OF, EvalplatGroup, app, build_app, main

__all__ = ["MODULE_OF", "EvalplatGroup", "app", "build_app", "main"]

# NumPy asks the kernel for transparent huge pages for every array of 4 MiB or more. Where the
# kernel compacts memory to find one at the first touch (``defrag`` set to ``madvise``, as on
# Debian), a command that makes arrays of tens of millions of values spends much of its time
# in the kernel, and goes faster without the advice, with as much memory (docs/performance.md,
# "NumPy's transparent huge pages"). Set before NumPy is first imported, which
# no command does before this package; a value the user set is kept.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def __getattr__(name: str) -> Any:
    if name in __all__:
        from evalplat.cli import root

        return getattr(root, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
