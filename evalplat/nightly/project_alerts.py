"""``[[alerts]]`` of the project file: one table per channel, validated against its kind
(:mod:`evalplat.alerts.registry`) when the file is read.

Every refusal names the project file, the table entry (``[[alerts]] #2``), the key at fault and
that key's line: an unknown or missing ``type``, an unknown parameter, a value of the wrong type
or out of range (``timeout = inf``), a header that cannot be sent, two channels with one name.
A required parameter that is missing points at the table's header line. ``${VAR}`` placeholders
are kept; their values are checked before the night writes anything
(:func:`evalplat.nightly.prep.check_inputs`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalplat.errors import InputError

Fail = Callable[[str, str | None, int, str | None], InputError]
PathOf = Callable[[Any, str, str, int, str], Path]
TYPES = '"webhook" (or slack, teams, email, junit, json)'


def read_alerts(
    tables: list[dict[str, Any]], fail: Fail, path_of: PathOf
) -> tuple[dict[str, Any], ...]:
    """The ``[[alerts]]`` tables, each checked by building its channel; ``path``/``file`` values
    made relative to the project file (``path_of``)."""
    from evalplat.alerts.base import SettingError
    from evalplat.alerts.registry import build_channel

    names: list[str] = []
    resolved: list[dict[str, Any]] = []
    for index, table in enumerate(tables):
        if not isinstance(table.get("type"), str):
            raise fail(f"needs type = {TYPES}", "alerts", index, "type")
        try:
            channel = build_channel(table)
        except SettingError as error:
            raise fail(error.problem, "alerts", index, error.key) from None
        if channel.name in names:
            raise fail(
                f"a second channel named '{channel.name}'; give each channel of the same type "
                'a name = "..."',
                "alerts", index, "name" if "name" in table else "type",
            )  # fmt: skip
        names.append(channel.name)
        entry = dict(table)
        for key in ("path", "file"):
            if isinstance(entry.get(key), str) and "${" not in entry[key]:
                entry[key] = str(path_of(entry[key], key, "alerts", index, key))
        resolved.append(entry)
    return tuple(resolved)
