"""Bad lines set aside by ``events import`` (or rows by ``events attach``) ``--max-invalid N``:
where they go and how they read.

Each input file with bad lines gets ``<input>.rejects.jsonl`` next to it, one JSON object per
bad line, in file order: ``{"file": "...", "line": 7, "reason": "..."}`` (``line`` is the row
number, from 1, for a Parquet file). The file is written after the import (or attachment) has
been stored and replaces one of an earlier import (a new file renamed over it: a symbolic link
found there is replaced, never written through); an import that sets nothing aside from an
input removes that input's old rejects file, so a rejects file always belongs to the latest
import of its input. A refused import (more bad lines than allowed) writes and removes nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalplat.errors import InputError

SUFFIX = ".rejects.jsonl"


@dataclass(frozen=True)
class Reject:
    """One line set aside: its file, its line (or Parquet row) and why it was refused."""

    path: Path
    line: int
    reason: str

    @classmethod
    def of(cls, error: InputError, path: Path, line: int) -> Reject:
        return cls(path, error.line or line, error.problem)


def rejects_path(path: Path) -> Path:
    """Where the bad lines of ``path`` go."""
    return path.with_name(path.name + SUFFIX)


def check_rejects_path(path: Path) -> None:
    """``InputError`` unless the rejects file of ``path`` can be written (checked up front)."""
    target = rejects_path(path)
    folder = target.parent
    if target.is_dir() and not target.is_symlink():
        raise InputError(f"--max-invalid: the rejects file {target} is a directory")
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"--max-invalid: cannot write the rejects file {target} (its folder "
                         "is not writable)")  # fmt: skip


def write_rejects(paths: Sequence[Path], rejects: Sequence[Reject]) -> list[Path]:
    """Write each input's rejects file (module doc); the files written, in input order."""
    written: list[Path] = []
    for path in dict.fromkeys(paths):
        own = [r for r in rejects if r.path == path]
        target = rejects_path(path)
        if not own:
            target.unlink(missing_ok=True)
            continue
        lines = [json.dumps({"file": str(r.path), "line": r.line, "reason": r.reason}) for r in own]
        _replace(target, "\n".join(lines) + "\n")
        written.append(target)
    return written


def _replace(target: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``target`` and rename it over ``target``: whatever
    was there (a symbolic link planted to make the import write elsewhere, a file another user
    owns) is replaced, never written through, and a reader sees the old file or the new."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)  # as a plain write would leave it (mkstemp gives 0o600)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
