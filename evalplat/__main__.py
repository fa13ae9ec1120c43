"""``evalplat`` and ``python -m evalplat``: the command line's entry point.

``evalplat --version`` answers before Typer and the command modules are imported (about a
third of a second of start-up that a version check does not need), and a plain ``evalplat
evaluate`` command line runs without them (``evalplat.cli.evaluate_direct``); everything else
goes to :func:`evalplat.cli.root.main`.

Every command keeps going when the reader of its output leaves early (``evalplat compare A B |
head -3``): a reader that stops reading is its own choice, not a failure of the command, which
goes on to its end with its output dropped and exits with the code it would have given had every
line been read, so that ``set -o pipefail`` in a CI job sees the verdict and not the pipe
(``compare --fail-on-regression | head`` still exits 1 on a regression and 0 without one; a
listing exits 0). Before, the first write after the reader left raised ``BrokenPipeError``,
which Click and Rich turned into exit 1, the regression code. :class:`ReaderSafeStream` stands
in front of ``sys.stdout`` from the start, so every writer (``print_json``, ``typer.echo``, Rich
tables, pandas' CSV, the direct ``evaluate``) goes through it.

A direct ``evaluate`` leaves without the interpreter's teardown, once its output is flushed:
freeing the run's arrays and the modules takes time (docs/performance.md) with nothing left
to write. Under coverage it exits as
usual, so that the measurement is saved.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


def main() -> None:
    """Console-script entry point."""
    keep_going_when_the_reader_leaves()
    if sys.argv[1:] == ["--version"]:
        from evalplat import __version__

        sys.stdout.write(f"{__version__}\n")
        return
    if sys.argv[1:2] == ["evaluate"]:
        # no matrix products in an evaluation: OpenBLAS's threads would only start and wait,
        # at a cost in CPU (docs/performance.md); a value the user set is kept
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from evalplat.cli.evaluate_direct import main as evaluate_directly

        code = evaluate_directly(sys.argv[2:])
        if code is not None:
            _leave(code)
    from evalplat.cli.root import main as cli_main

    cli_main()


def _leave(code: int) -> None:
    """Exit with ``code`` once stdout and stderr are flushed, skipping the teardown. The
    command flushed its output already, and a reader that left is handled by the stream in front
    of stdout (:class:`ReaderSafeStream`), so these flushes cannot fail."""
    sys.stdout.flush()
    sys.stderr.flush()
    if "coverage" in sys.modules:
        sys.exit(code)
    os._exit(code)


class ReaderSafeStream:
    """``stream`` unchanged until a write or flush finds its reader gone; then the descriptor
    is pointed at ``/dev/null``, whatever is written after is dropped, and no error is raised
    (the buffered rest goes to ``/dev/null`` at the next flush). Every other attribute is the
    stream's own, so Click, Rich and pandas see the text stream they expect."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_left = False

    def write(self, text: str) -> int:
        if self.reader_left:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()
            self._stream.flush()

    def _drop(self) -> None:
        self.reader_left = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def keep_going_when_the_reader_leaves() -> None:
    """Put :class:`ReaderSafeStream` in front of ``sys.stdout`` (once)."""
    if not isinstance(sys.stdout, ReaderSafeStream) and sys.stdout is not None:
        sys.stdout = ReaderSafeStream(sys.stdout)


if __name__ == "__main__":
    main()
