"""Where online scoring reads its log: stored events, attached Parquet files, or a warehouse.

**Attach.** ``attach_events`` records Parquet files that stay where they are: each file's
schema and values are checked first (``evalplat.events.parquet``), its config references are
attributed to config versions as an import attributes them (``NAME``: the latest version at
attach time), and one ``online_attachment`` row per file records how to read it. Any problem
raises ``InputError`` naming the file before anything is written. Attaching a file again
replaces its row (a file that grew is read again, with its references attributed anew).

**Read.** ``_online_rows`` runs the online statement (``evalplat.events.sql``) and returns its
per-session rows: inside PostgreSQL when the store is PostgreSQL and nothing is attached; in an
embedded DuckDB over the stored events (read as columns) and the attached files otherwise; in
the warehouse when one is given (``[events] url``), over its tables only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from evalplat.db.events import OnlineAttachment, OnlineEvent, OnlineQuery
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.configs import resolve_config_version

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session

    from evalplat.events.warehouse import Warehouse
    from evalplat.metrics.registry import Metric

_COLUMNS = ["version_id", "w", "session_id", "searches", "events", "first_t", "last_t"]


@dataclass(frozen=True)
class Attachment:
    """An attached file: what it holds and what its references were attributed to."""

    path: str
    searches: int
    events: int
    duplicate_searches: int
    configs: dict[str, int]  # reference -> config version id
    unknown_configs: dict[str, int]  # reference -> searches left out
    rejected: int = 0  # bad rows left out (``max_invalid``)
    rejects_file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EventSourcesMixin(StoreBase):
    def attach_events(
        self,
        paths: Sequence[Path],
        *,
        mapping: Mapping[str, str] | None = None,
        max_invalid: int = 0,
    ) -> list[Attachment]:
        """Check and record Parquet logs read in place (module doc); all or nothing. With
        ``max_invalid`` up to that many bad rows per file are left out of every reading and
        listed in a rejects file next to it (``evalplat.events.rejects``)."""
        from dataclasses import replace

        from evalplat.events.engine import duckdb_connection
        from evalplat.events.parquet import check_rows, inspect_file
        from evalplat.events.rejects import Reject, check_rejects_path, rejects_path, write_rejects
        from evalplat.inputs.validation import check_number

        check_number(max_invalid, "--max-invalid", minimum=0)
        if max_invalid:
            for path in paths:
                check_rejects_path(Path(path))
        checked = []
        connection = duckdb_connection()
        try:
            for path in paths:
                layout = inspect_file(Path(path), mapping)
                counts = check_rows(connection, layout, max_invalid)
                checked.append((replace(layout, skip_invalid=bool(counts.rejects)), counts))
        finally:
            connection.close()
        attached: list[Attachment] = []
        with self.session(write=True) as session:
            for layout, counts in checked:
                versions, unknown = _resolve(session, counts.configs)
                resolved = str(layout.path.resolve())
                stat = layout.path.stat()
                session.execute(delete(OnlineAttachment).where(OnlineAttachment.path == resolved))
                session.add(
                    OnlineAttachment(
                        path=resolved,
                        layout={**layout.to_dict(), "repeated": counts.duplicate_searches},
                        configs=versions,
                        searches=counts.searches,
                        events=counts.events,
                        size=stat.st_size,
                        modified_at=datetime.fromtimestamp(stat.st_mtime, tz=UTC),
                        attached_at=utcnow(),
                    )
                )
                rejects_file = str(rejects_path(layout.path)) if counts.rejects else None
                attached.append(
                    Attachment(resolved, counts.searches, counts.events,
                               counts.duplicate_searches, versions, unknown, len(counts.rejects),
                               rejects_file)
                )  # fmt: skip
        if max_invalid:
            rejects = [Reject(layout.path, row, problem) for layout, counts in checked
                       for row, problem in counts.rejects]  # fmt: skip
            write_rejects([layout.path for layout, _ in checked], rejects)
        return attached

    def event_attachments(self) -> list[OnlineAttachment]:
        """The attached files, oldest first."""
        with self.session() as session:
            return list(session.scalars(select(OnlineAttachment).order_by(OnlineAttachment.id)))

    def _online_rows(
        self,
        metrics: Sequence[Metric],
        *,
        window: str,
        since: datetime | None,
        version_ids: Sequence[int] | None,
        warehouse: Warehouse | None = None,
    ) -> pd.DataFrame:
        """The online statement's per-session rows (module doc)."""
        from sqlalchemy import text

        from evalplat.db.bulk import read_frame
        from evalplat.events.engine import row_types
        from evalplat.events.sql import DIALECTS, session_sql

        columns = list(row_types(metrics))
        after = None if since is None else since.timestamp()
        if warehouse is not None:
            return self._warehouse_rows(metrics, window, after, version_ids, warehouse)
        attachments = self.event_attachments()
        if self.engine.dialect.name == "postgresql" and not attachments:
            searches = _only(
                "SELECT config_version_id AS version_id, query_id, session_id, "
                'EXTRACT(EPOCH FROM "timestamp") AS t, hits FROM online_query',
                version_ids,
            )
            events = ('SELECT query_id, action, EXTRACT(EPOCH FROM "timestamp") AS t, '
                      '"position" AS position, "value" AS value FROM online_event')  # fmt: skip
            sql = session_sql(metrics, searches, events, window=window,
                              sql=DIALECTS["postgresql"], since=after)  # fmt: skip
            with self.session() as session:
                return read_frame(session, text(sql.replace(":", "\\:")), columns,
                                  row_types(metrics))  # fmt: skip
        return self._duckdb_rows(metrics, window, after, version_ids, attachments)

    def _duckdb_rows(
        self,
        metrics: Sequence[Metric],
        window: str,
        after: float | None,
        version_ids: Sequence[int] | None,
        attachments: list[OnlineAttachment],
    ) -> pd.DataFrame:
        from evalplat.events.engine import duckdb_connection, stored_relations
        from evalplat.events.parquet import events_select, searches_select
        from evalplat.events.sql import DIALECTS, session_sql

        stored_searches, stored_events = stored_relations(*self._stored_event_frames())
        searches = ["SELECT version_id, query_id, session_id, t, hits FROM stored_searches"]
        events = ["SELECT query_id, action, t, position, value FROM stored_events"]
        for attachment in attachments:
            layout = _layout(attachment)
            for selects, select_sql in (
                (
                    searches,
                    searches_select(
                        layout, attachment.configs, repeated=bool(attachment.layout.get("repeated"))
                    ),
                ),
                (events, events_select(layout)),
            ):
                if select_sql is not None:
                    selects.append(select_sql)
        sql = session_sql(
            metrics, _only(" UNION ALL ".join(searches), version_ids), " UNION ALL ".join(events),
            window=window, sql=DIALECTS["duckdb"], since=after,
        )  # fmt: skip
        connection = duckdb_connection()
        try:
            connection.register("stored_searches", stored_searches)
            connection.register("stored_events", stored_events)
            rows: pd.DataFrame = connection.execute(sql).df()
        finally:
            connection.close()
        return rows

    def _stored_event_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Every stored search and event as columns (times as stored, text or datetimes)."""
        from evalplat.db.bulk import read_frame

        with self.session() as session:
            searches = read_frame(
                session,
                select(OnlineQuery.config_version_id, OnlineQuery.query_id,
                       OnlineQuery.session_id, OnlineQuery.timestamp, OnlineQuery.hits),
                ["version_id", "query_id", "session_id", "timestamp", "hits"],
                {"version_id": "int64", "query_id": "str", "session_id": "str",
                 "timestamp": "str", "hits": "int64"},
            )  # fmt: skip
            events = read_frame(
                session,
                select(OnlineEvent.query_id, OnlineEvent.action, OnlineEvent.timestamp,
                       OnlineEvent.position, OnlineEvent.value),
                ["query_id", "action", "timestamp", "position", "value"],
                {"query_id": "str", "action": "str", "timestamp": "str", "position": "float64",
                 "value": "float64"},
            )  # fmt: skip
        return searches, events

    def _warehouse_rows(
        self,
        metrics: Sequence[Metric],
        window: str,
        after: float | None,
        version_ids: Sequence[int] | None,
        warehouse: Warehouse,
    ) -> pd.DataFrame:
        from evalplat.events import warehouse as wh
        from evalplat.events.engine import row_types
        from evalplat.events.sql import dialect, session_sql

        engine = wh.create_engine(warehouse)
        try:
            sql = dialect(engine.dialect.name)
            wh.check_tables(engine, warehouse, sql)
            with self.session() as session:
                versions, _ = _resolve(session, wh.config_counts(engine, warehouse))
            searches = _only(wh.searches_select(warehouse, sql, versions), version_ids)
            statement = session_sql(metrics, searches, wh.events_select(warehouse, sql),
                                    window=window, sql=sql, since=after)  # fmt: skip
            rows = wh.fetch_rows(engine, statement, list(row_types(metrics)))
        finally:
            engine.dispose()
        kinds: Any = {
            name: str if kind == "str" else kind for name, kind in row_types(metrics).items()
        }
        return rows.astype(kinds)


def _only(searches: str, version_ids: Sequence[int] | None) -> str:
    """``searches`` limited to the given config versions."""
    if version_ids is None:
        return searches
    ids = ", ".join(str(int(v)) for v in version_ids) or "NULL"
    return f"SELECT * FROM ({searches}) AS chosen WHERE version_id IN ({ids})"


def _layout(attachment: OnlineAttachment) -> Any:
    """The recorded layout of an attached file; ``InputError`` when the file changed since."""
    from evalplat.events.parquet import ParquetLayout

    path = Path(attachment.path)
    if not path.is_file():
        raise InputError("attached file is missing (attach it again from where it is now)",
                         path=path)  # fmt: skip
    stat = path.stat()
    modified = datetime.fromtimestamp(stat.st_mtime, tz=UTC)
    if stat.st_size != attachment.size or abs((modified - attachment.modified_at).total_seconds()
                                              ) > 1e-3:  # fmt: skip
        raise InputError("attached file changed since it was attached (run `evalplat events "
                         "attach` on it again)", path=path)  # fmt: skip
    layout = attachment.layout
    return ParquetLayout(path, dict(layout["columns"]), str(layout["timestamp"]),
                         bool(layout.get("skip_invalid", False)))  # fmt: skip


def _resolve(session: Session, counts: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """({reference: config version id}, {unknown reference: searches}) for ``counts``."""
    versions: dict[str, int] = {}
    unknown: Counter[str] = Counter()
    for ref, count in sorted(counts.items()):
        try:
            versions[ref] = resolve_config_version(session, ref)[1].id
        except NotFoundError:
            unknown[ref] += count
        except InputError as error:
            raise InputError(f"config reference {ref!r}: {error}") from None
    return versions, dict(unknown)
