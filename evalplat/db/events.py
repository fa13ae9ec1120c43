"""Online events: what users searched, were shown and did, attributed to config versions.

Two tables, after User Behavior Insights (UBI 1.x):

- ``online_query``: one search a user ran (UBI query record): the record id (``query_id``),
  session, client, the text, the time, the ids of the hits shown in order, and the config
  version that served it (the A/B arm).
- ``online_event``: one thing a user did on a search (UBI event record): the action (``click``,
  ``purchase``, ``rating``, ...), the search it belongs to, the object and its position, an
  optional value (a rating), and the time.

An interleaved search (one list merged from two configs' rankings) is stored in
``online_interleaved`` instead of ``online_query``: the two config versions (``version_a`` the
lower id), the method, and per hit the version that contributed it (and, for balanced
interleaving, each version's rank of it). Its clicks are ``online_event`` rows like any other.

Record ids are unique, so importing a log twice adds nothing the second time. Events refer to
their search by record id, not by foreign key: a log may hold events whose search is in another
file; the importer reports those it cannot place.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from evalplat.db.schema import Base, ExternalId, UTCDateTime
from evalplat.db.schema import id_column as _id


class OnlineQuery(Base):
    """One search shown to a user (a UBI query record), served by one config version."""

    __tablename__ = "online_query"

    id: Mapped[int] = _id()
    query_id: Mapped[str] = mapped_column(ExternalId, unique=True)
    config_version_id: Mapped[int] = mapped_column(
        ForeignKey("config_version.id", ondelete="CASCADE"), index=True
    )
    session_id: Mapped[str] = mapped_column(ExternalId)
    client_id: Mapped[str | None] = mapped_column(ExternalId, nullable=True)
    user_query: Mapped[str] = mapped_column(Text, default="")
    timestamp: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    hit_ids: Mapped[list[Any]] = mapped_column(JSON)
    hits: Mapped[int] = mapped_column(Integer)


class OnlineEvent(Base):
    """One action of a user on a search (a UBI event record)."""

    __tablename__ = "online_event"

    id: Mapped[int] = _id()
    event_id: Mapped[str] = mapped_column(String(64), unique=True)
    query_id: Mapped[str] = mapped_column(ExternalId, index=True)
    action: Mapped[str] = mapped_column(String(60))
    session_id: Mapped[str] = mapped_column(ExternalId)
    client_id: Mapped[str | None] = mapped_column(ExternalId, nullable=True)
    timestamp: Mapped[datetime] = mapped_column(UTCDateTime())
    object_id: Mapped[str | None] = mapped_column(ExternalId, nullable=True)
    position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)


class OnlineInterleaved(Base):
    """One interleaved search: the merged hits and the config version behind each of them."""

    __tablename__ = "online_interleaved"

    id: Mapped[int] = _id()
    query_id: Mapped[str] = mapped_column(ExternalId, unique=True)
    version_a: Mapped[int] = mapped_column(
        ForeignKey("config_version.id", ondelete="CASCADE"), index=True
    )
    version_b: Mapped[int] = mapped_column(
        ForeignKey("config_version.id", ondelete="CASCADE"), index=True
    )
    method: Mapped[str] = mapped_column(String(20))
    session_id: Mapped[str] = mapped_column(ExternalId)
    client_id: Mapped[str | None] = mapped_column(ExternalId, nullable=True)
    user_query: Mapped[str] = mapped_column(Text, default="")
    timestamp: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    hit_ids: Mapped[list[Any]] = mapped_column(JSON)
    teams: Mapped[list[Any]] = mapped_column(JSON)  # per hit: version_a or version_b
    ranks: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # {"a": [...], "b"}


class OnlineAttachment(Base):
    """A Parquet log read in place (``events attach``): where it is and how to read it."""

    __tablename__ = "online_attachment"

    id: Mapped[int] = _id()
    path: Mapped[str] = mapped_column(Text, unique=True)
    layout: Mapped[dict[str, Any]] = mapped_column(JSON)  # canonical column -> path, time kind
    configs: Mapped[dict[str, Any]] = mapped_column(JSON)  # config reference -> version id
    searches: Mapped[int] = mapped_column(Integer)
    events: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[datetime] = mapped_column(UTCDateTime())
    attached_at: Mapped[datetime] = mapped_column(UTCDateTime())
