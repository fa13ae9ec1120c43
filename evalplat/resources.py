"""Locate the data folders (migrations, templates, bundled test sets).

In a source checkout they sit at the top of the tree; in an installed wheel they are packaged
under ``evalplat/_data/`` (see ``[tool.hatch.build.targets.wheel.force-include]``).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``migrations``, ``templates`` or ``testsets``)."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"evalplat data folder '{name}' is missing from this installation")


def bundled_testset(name: str) -> Path:
    """Folder of a bundled test set, e.g. ``bundled_testset("cranfield")``."""
    return data_dir("testsets") / name
