"""The registry of alert channel kinds: the single source for validation, help and docs.

    channel = build_channel({"type": "slack", "url": "${SLACK_WEBHOOK_URL}"})
    channels = channels_from_tables(project.alerts)       # the project file's [[alerts]]
    channel = find_channel(channels, "slack")              # by name, then by type

A channel's name is its table's ``name`` key, or its type; two channels with the same name
are refused, so ``alerts test NAME`` and the recorded deliveries are never ambiguous.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalplat.alerts import email, json_file, junit, slack, teams, webhook
from evalplat.alerts.base import Channel, ChannelKind, SettingError
from evalplat.errors import InputError, NotFoundError
from evalplat.inputs.validation import check_name

CHANNEL_KINDS: dict[str, ChannelKind] = {
    kind.name: kind
    for kind in (webhook.KIND, slack.KIND, teams.KIND, email.KIND, junit.KIND, json_file.KIND)
}


def get_channel_kind(name: str) -> ChannelKind:
    kind = CHANNEL_KINDS.get(name)
    if kind is None:
        raise SettingError(
            f"unknown alert channel type '{name}'; valid types: {', '.join(CHANNEL_KINDS)}",
            "type",
        )
    return kind


def build_channel(table: Mapping[str, Any]) -> Channel:
    """A channel from a project-file table (``type`` plus the kind's params); a refusal is a
    ``SettingError`` naming the key at fault."""
    kind_name = table.get("type")
    if not isinstance(kind_name, str):
        raise SettingError(
            f"an alert channel needs type = one of: {', '.join(CHANNEL_KINDS)}", "type"
        )
    kind = get_channel_kind(kind_name)
    name = table.get("name", kind_name)
    if not isinstance(name, str) or not name.strip():
        raise SettingError(f"{kind_name} channel: name must be a non-empty string", "name")
    try:  # deliveries record it in a 200-character column
        check_name(name, f"{kind_name} channel name")
    except InputError as error:
        raise SettingError(error.problem, "name") from None
    return kind.factory(name, kind.validate(table))


def channels_from_tables(tables: Iterable[Mapping[str, Any]]) -> list[Channel]:
    """Channels for the ``[[alerts]]`` tables, in order; errors name the table (1-based)."""
    channels: list[Channel] = []
    for number, table in enumerate(tables, start=1):
        try:
            channel = build_channel(table)
        except SettingError as error:
            raise SettingError(f"[[alerts]] #{number}: {error.problem}", error.key) from None
        if any(c.name == channel.name for c in channels):
            raise SettingError(
                f"[[alerts]] #{number}: a second channel named '{channel.name}'; "
                'give each channel of the same type a name = "..."',
                "name" if "name" in table else "type",
            )
        channels.append(channel)
    return channels


def find_channel(channels: Sequence[Channel], key: str) -> Channel:
    """The channel named ``key``, else the only channel of type ``key``."""
    for channel in channels:
        if channel.name == key:
            return channel
    of_kind = [c for c in channels if c.kind == key]
    if len(of_kind) == 1:
        return of_kind[0]
    names = ", ".join(c.name for c in channels) or "none configured"
    if of_kind:
        raise InputError(f"several {key} channels; name one of: {names}")
    raise NotFoundError(f"no alert channel '{key}' in the project file (channels: {names})")
