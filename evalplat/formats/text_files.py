"""What every test set file reader shares: format detection, the file's text, ids, JSON lines
and CSV/TSV rows, and the ``ParsedFile`` each reader returns.

The rules (UTF-8 with an optional BOM, blank lines skipped, ids without whitespace, one
:class:`~evalplat.errors.InputError` naming file and line) are described in
:mod:`evalplat.formats.testset_files`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError
from evalplat.inputs.validation import check_free_text, check_identifier, shown

if TYPE_CHECKING:
    import pandas as pd


Kind = Literal["queries", "judgments", "documents"]
# judgments may also be the judgment lists of other tools (``formats/judgment_lists.py``)
JUDGMENT_LISTS = ("quepid", "rre", "srw", "ltr")
FORMATS = ("trec", "csv", "tsv", "jsonl", *JUDGMENT_LISTS)
ACCEPTED: dict[Kind, tuple[str, ...]] = {
    "queries": ("tsv", "csv", "jsonl"),
    "judgments": ("trec", "csv", "tsv", "jsonl", *JUDGMENT_LISTS),
    "documents": ("jsonl",),
}
_EXTENSIONS: dict[str, str] = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_KIND_EXTENSIONS: dict[Kind, dict[str, str]] = {
    "queries": {".txt": "tsv"},
    "judgments": {".txt": "trec", ".qrels": "trec", "": "trec"},
    "documents": {},
}


_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class ParsedFile:
    """A file read into ``frame``; ``line_of(row)`` gives the line of a row, for later errors.

    Line numbers are found lazily (only an error needs them), so the fast paths stay fast.
    ``queries``: the queries a judgments file names with their texts (the judgment lists of
    other tools do), in the columns of a queries file; ``None`` when it names none.
    """

    path: Path
    frame: pd.DataFrame
    _locate: Callable[[], list[int]] = field(repr=False)
    _cache: list[list[int]] = field(default_factory=list, repr=False)
    queries: pd.DataFrame | None = field(default=None, repr=False)

    def line_of(self, row: int) -> int:
        if not self._cache:
            self._cache.append(self._locate())
        return self._cache[0][row]


def detect_format(path: str | Path, kind: Kind, override: str | None = None) -> str:
    """The format name of ``path`` as a ``kind`` file: ``override`` if given, else its extension."""
    path = Path(path)
    if override is not None:
        name = override.strip().lower()
        if name not in FORMATS:
            raise InputError(f"unknown format {override!r} (known: {', '.join(FORMATS)})")
    else:
        suffix = path.suffix.lower()
        found = _KIND_EXTENSIONS[kind].get(suffix) or _EXTENSIONS.get(suffix)
        if found is None:
            raise InputError(
                f"cannot tell the format of {kind} from the extension {suffix or '(none)'!r}; "
                f"pass a format ({', '.join(ACCEPTED[kind])})",
                path=path,
            )
        name = found
    if name not in ACCEPTED[kind]:
        raise InputError(
            f"{kind} cannot be read as {name} (accepted: {', '.join(ACCEPTED[kind])})", path=path
        )
    return name


def load_text(path: Path) -> str:
    """The file's text: it exists, is UTF-8 (BOM skipped) and is not blank; else InputError."""
    if not path.is_file():
        raise InputError("no such file", path=path)
    text = decode_text(path.read_bytes(), path)
    if not text.strip():
        raise InputError("file is empty", path=path)
    return text


def decode_text(data: bytes, path: Path) -> str:
    """``data`` as UTF-8 text, a leading BOM skipped; a bad byte is an InputError naming its
    line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        bad = data[error.start]
        raise InputError(f"not valid UTF-8 text (byte 0x{bad:02x})", path=path, line=line) from None


def non_blank_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for the non-blank lines; ``\\r\\n`` endings are accepted."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line.rstrip("\r")


def check_id(value: object, what: str, path: Path, line: int) -> str:
    """A query or doc id: a non-empty string (or JSON integer) without whitespace or control
    characters, at most 200 characters (see :mod:`evalplat.inputs.validation`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, found {json_type(value)}", path=path, line=line)
    return check_identifier(value, what, path=path, line=line)


def check_text(value: str, what: str, path: Path, line: int) -> str:
    """Free text (a query, a title): any Unicode except NUL."""
    return check_free_text(value, what, path=path, line=line)


def json_type(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({list: "a list", dict: "an object", type(None): "null"})
    return names.get(type(value), type(value).__name__)


class DuplicateKeyError(Exception):
    """A JSON object names ``key`` twice (``unique_keys``)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A decoder's ``object_pairs_hook`` refusing an object that names a key twice, of which
    the standard decoder would keep the last value without a word."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return value


def duplicate_key_problem(key: str) -> str:
    return f"duplicate key {shown(key)} in one object (a key names one value)"


def json_objects(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    decode = json.JSONDecoder(object_pairs_hook=unique_keys).decode
    for number, line in non_blank_lines(text):
        try:
            value = decode(line)
        except DuplicateKeyError as error:
            problem = duplicate_key_problem(error.key)
            raise InputError(problem, path=path, line=number) from None
        except json.JSONDecodeError as error:
            problem = f"invalid JSON: {error.msg} (column {error.colno})"
            raise InputError(problem, path=path, line=number) from None
        except ValueError as error:  # an integer of more than 4300 digits
            raise InputError(f"invalid JSON: {error}", path=path, line=number) from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", path=path, line=number) from None
        if not isinstance(value, dict):
            problem = f"expected a JSON object, found {json_type(value)}"
            raise InputError(problem, path=path, line=number)
        yield number, value


def delimited_rows(text: str, fmt: str, path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, stripped fields) of the non-blank CSV/TSV records; TSV has no quoting."""
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text), strict=True)
    else:
        reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as error:
            problem = f"malformed {fmt.upper()}: {error}"
            raise InputError(problem, path=path, line=reader.line_num) from None
        fields = [value.strip() for value in row]
        if any(fields):
            yield reader.line_num, fields


def new_frame(columns: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns)
