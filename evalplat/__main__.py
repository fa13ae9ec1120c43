"""``evalplat`` and ``python -m evalplat``: the command line's entry point.

``evalplat --version`` answers before Typer and the command modules are imported (about a
third of a second of start-up that a version check does not need); everything else goes to :func:`evalplat.cli.root.main`.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from evalplat import __version__

        sys.stdout.write(f"{__version__}\n")
        return
    from evalplat.cli.root import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
