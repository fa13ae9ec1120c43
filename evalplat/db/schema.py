"""The schema's foundations: the declarative base, naming convention, column kinds, states.

Every table module (``evalplat.db.models``, ``evalplat.db.evaluations``, ...) builds on this
``Base``, so one metadata holds the whole schema; ``evalplat.db.metadata`` imports every table
module and is where Alembic and the tests that compare models with migrations read it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, DateTime, Integer, MetaData, String, TypeDecorator
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names on every backend, so migrations can refer to them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Short text (names, ids, hashes) vs long text (query text, documents, error messages).
Name = String(200)
ExternalId = String(200)
Hash = String(64)

RUN_STATUSES = ("running", "complete", "partial", "failed", "interrupted")
RUN_TRIGGERS = ("manual", "nightly", "ci", "import", "online")
ALERT_STATES = ("pending", "open", "acknowledged", "resolved", "retired")
ALERT_KINDS = ("regression", "needs_judgments", "operational", "target", "drift")
OUTBOX_STATUSES = ("pending", "sent")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite stores no zone: add it back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given; evalplat stores timezone-aware UTC times")
        return value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


def id_column() -> Mapped[int]:
    return mapped_column(Integer, primary_key=True, autoincrement=True)


def created_column() -> Mapped[datetime]:
    return mapped_column(UTCDateTime(), nullable=False)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}
