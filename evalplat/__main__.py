"""``evalplat`` and ``python -m evalplat``: the command line's entry point.

``evalplat --version`` answers before Typer and the command modules are imported (about a
third of a second of start-up that a version check does not need), and a plain ``evalplat
evaluate`` command line runs without them (``evalplat.cli.evaluate_direct``); everything else
goes to :func:`evalplat.cli.root.main`.

A direct ``evaluate`` leaves without the interpreter's teardown, once its output is flushed:
freeing the run's arrays and the modules took 0.08 s of a 1M-line evaluation and 0.2 s of a
10M-line one (docs/performance.md), with nothing left to write. Under coverage it exits as
usual, so that the measurement is saved.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from evalplat import __version__

        sys.stdout.write(f"{__version__}\n")
        return
    if sys.argv[1:2] == ["evaluate"]:
        # no matrix products in an evaluation: OpenBLAS's threads would only start and wait
        # (0.1 s of CPU at NumPy's import on two cores); a value the user set is kept
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from evalplat.cli.evaluate_direct import main as evaluate_directly

        code = evaluate_directly(sys.argv[2:])
        if code is not None:
            _leave(code)
    from evalplat.cli.root import main as cli_main

    cli_main()


def _leave(code: int) -> None:
    """Exit with ``code`` once stdout and stderr are flushed, skipping the teardown. The
    command flushed its output already, and a reader that left is handled there
    (``evaluate_direct.main`` points stdout at ``/dev/null``), so these flushes cannot fail."""
    sys.stdout.flush()
    sys.stderr.flush()
    if "coverage" in sys.modules:
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    main()
