"""``evalplat`` and ``python -m evalplat``: the command line's entry point.

``evalplat --version`` answers before Typer and the command modules are imported (about a
third of a second of start-up that a version check does not need), and a plain ``evalplat
evaluate`` command line runs without them (``evalplat.cli.evaluate_direct``); everything else
goes to :func:`evalplat.cli.root.main`.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from evalplat import __version__

        sys.stdout.write(f"{__version__}\n")
        return
    if sys.argv[1:2] == ["evaluate"]:
        from evalplat.cli.evaluate_direct import main as evaluate_directly

        code = evaluate_directly(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from evalplat.cli.root import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
