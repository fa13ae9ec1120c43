"""Alert channels: where a regression (and its resolution) is announced.

One module per channel kind — ``webhook`` (generic JSON POST), ``slack``, ``teams``,
``email`` (SMTP), ``junit`` (XML file), ``json_file`` (``type = "json"``) — registered in
``registry.CHANNEL_KINDS``. The alert's life cycle (pending → open → acknowledged → resolved)
lives in the store (``evalplat.store.alerts``); this package only renders and delivers.

    channels = channels_from_tables(project.alerts)
    results = deliver_all(channels, AlertMessage(event="opened", config=..., ...))
    for result in results:
        store.record_delivery(alert_id, result)
"""

from __future__ import annotations

from evalplat.alerts.base import Channel, ChannelKind, DeliveryError, Param
from evalplat.alerts.delivery import DeliveryPolicy, DeliveryResult, deliver, deliver_all
from evalplat.alerts.message import EVENTS, AlertMessage, QueryMove
from evalplat.alerts.registry import (
    CHANNEL_KINDS,
    build_channel,
    channels_from_tables,
    find_channel,
    get_channel_kind,
)

__all__ = [
    "CHANNEL_KINDS",
    "EVENTS",
    "AlertMessage",
    "Channel",
    "ChannelKind",
    "DeliveryError",
    "DeliveryPolicy",
    "DeliveryResult",
    "Param",
    "QueryMove",
    "build_channel",
    "channels_from_tables",
    "deliver",
    "deliver_all",
    "find_channel",
    "get_channel_kind",
]
