"""Search configurations as data: typed parameters, canonical hashing, ``--param`` parsing.

A config version is the searcher kind, its parameters and an optional label (a git sha, a
ticket). Parameters keep ``${ENV_VAR}`` placeholders verbatim: they are expanded only when a
searcher uses them, never before they are stored or shown.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL


def content_hash(searcher: str, params: Mapping[str, Any], label: str | None) -> str:
    """sha256 of the canonical JSON of (searcher, params, label); key order does not matter."""
    canonical = json.dumps(
        {"searcher": searcher, "params": params, "label": label},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_value(text: str) -> Any:
    """A ``--param`` value, typed the way TOML types it; anything else is a plain string.

    ``100`` → 100, ``0.5`` → 0.5, ``true`` → True, ``[1, 2]`` → [1, 2], ``"a b"`` → "a b",
    ``{ a = 1 }`` → {"a": 1}; ``porter`` or ``title=2,text=1`` stay strings.
    """
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    except (ValueError, RecursionError) as error:
        raise InputError(f"--param value {text[:40]!r}: {_pathological(error)}") from None
    if isinstance(value, float) and not math.isfinite(value):
        return text  # "inf"/"nan" are more likely meant as words than as numbers
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and not DECIMAL.fullmatch(text.strip()):
        return text  # 0x10, 0o7, 1_000: a number is written in plain decimal digits
    if hasattr(value, "isoformat"):
        return text  # TOML dates and times: keep what the user typed
    return value


def parse_params(assignments: Iterable[str]) -> dict[str, Any]:
    """``["k=v", "headers.Authorization=Bearer ${TOKEN}"]`` → nested, typed parameters."""
    params: dict[str, Any] = {}
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--param {assignment!r}: expected KEY=VALUE")
        _set_dotted(params, key, parse_value(raw.strip()), assignment)
    return params


def load_params_file(path: Path) -> dict[str, Any]:
    """Parameters from a TOML or JSON file (by extension; TOML when unsure)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=path) from None
    if not text.strip():
        raise InputError("file is empty", path=path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON: {error.msg}", path=path, line=error.lineno) from None
        except (ValueError, RecursionError) as error:  # 4300+ digit integers, deep nesting
            raise InputError(f"invalid JSON: {_pathological(error)}", path=path) from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            problem, line = toml_error(error)
            raise InputError(f"invalid TOML: {problem}", path=path, line=line) from None
        except (ValueError, RecursionError) as error:
            raise InputError(f"invalid TOML: {_pathological(error)}", path=path) from None
    if not isinstance(data, dict):
        raise InputError("expected a table of parameters at the top level", path=path)
    params: dict[str, Any] = _plain(data, path)
    return params


def toml_error(error: tomllib.TOMLDecodeError) -> tuple[str, int | None]:
    """The problem and line of a TOML error (Python 3.11 puts the line only in the message)."""
    message = str(error.args[0]) if error.args else str(error)
    match = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
    if match is None:
        return message, None
    return message[: match.start()], int(match.group(1))


def _pathological(error: BaseException) -> str:
    return "nested too deeply" if isinstance(error, RecursionError) else str(error)


def merge_params(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: ``--param`` values override what the file says, table by table."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_params(merged[key], value)
        else:
            merged[key] = value
    return merged


def _set_dotted(params: dict[str, Any], key: str, value: Any, assignment: str) -> None:
    parts = key.split(".")
    table = params
    for part in parts[:-1]:
        child = table.setdefault(part, {})
        if not isinstance(child, dict):
            raise InputError(f"--param {assignment!r}: '{part}' is already a value, not a table")
        table = child
    table[parts[-1]] = value


def _plain(value: Any, path: Path) -> Any:
    """TOML dates become ISO strings so that parameters are always JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, path) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"parameter value {value} is not a finite number", path=path)
    return value
