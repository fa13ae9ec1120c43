"""``[events] url``: the online statement run inside a warehouse, here a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from evalplat.errors import InputError
from evalplat.events.warehouse import Warehouse, project_warehouse
from evalplat.store import Store

from .logs import cascade_records, searches_and_events, write_jsonl

METRICS = ["online:CTR", "online:MRR", "online:Abandonment", "online:ZeroResult",
           "online:SessionSuccess", "online:Conversion"]  # fmt: skip


@pytest.fixture
def warehouse_url(postgres_server: object) -> Iterator[str]:
    """A PostgreSQL database of its own holding the log as two tables."""
    url: str = postgres_server.create_database()  # type: ignore[attr-defined]
    yield url
    postgres_server.drop_database(url)  # type: ignore[attr-defined]


def _load(url: str, records: list) -> None:
    searches, events = searches_and_events(records)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "CREATE TABLE logs_q (query_id text, sid text, timestamp timestamptz, "
            "config text, hit_ids text[])"))  # fmt: skip
        connection.execute(text(
            "CREATE TABLE logs_e (query_id text, action text, timestamp timestamptz, "
            "position integer, value double precision)"))  # fmt: skip
        connection.execute(
            text("INSERT INTO logs_q VALUES (:query_id, :session_id, :timestamp, :config, "
                 ":hit_ids)"), searches)  # fmt: skip
        connection.execute(
            text("INSERT INTO logs_e VALUES (:query_id, :action, :timestamp, :position, "
                 ":value)"), events)  # fmt: skip
    engine.dispose()


@pytest.mark.postgres
def test_scores_aggregated_in_the_warehouse_equal_the_imported_ones(
    store: Store, warehouse_url: str, tmp_path: Path
) -> None:
    store.add_config("web", "builtin")
    store.add_config("web", "builtin", {"operator": "and"})
    records = cascade_records()
    _load(warehouse_url, records)
    warehouse = Warehouse(warehouse_url, searches="logs_q", events="logs_e",
                          columns={"session_id": "sid"}, hit_column="hit_ids")  # fmt: skip
    runs = store.score_online(metrics=METRICS, warehouse=warehouse)
    assert [(r.config_version, r.started_at.day) for r in runs] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    with Store.init(f"sqlite:///{tmp_path / 'imported.db'}") as imported:
        imported.add_config("web", "builtin")
        imported.add_config("web", "builtin", {"operator": "and"})
        imported.import_events([write_jsonl(tmp_path / "log.jsonl", records)])
        expected = imported.score_online(metrics=METRICS, engine="pandas")
    assert [r.queries_total for r in runs] == [r.queries_total for r in expected]
    for got, want in zip(runs, expected, strict=True):
        assert got.means.keys() == want.means.keys()
        for name, value in want.means.items():
            assert got.means[name] == pytest.approx(value, rel=1e-12), name


def test_events_table_of_a_project_file(tmp_path: Path) -> None:
    path = tmp_path / "evalplat.toml"
    assert project_warehouse(path) is None
    path.write_text('[events]\nurl = "trino://u@h:8080/hive/ubi"\nsearches = "ubi.q"\n'
                    'hits = "hit_ids"\n[events.columns]\nsession_id = "sid"\n')  # fmt: skip
    found = project_warehouse(path)
    assert found == Warehouse("trino://u@h:8080/hive/ubi", "ubi.q", "ubi_events",
                              {"session_id": "sid"}, "hit_ids")  # fmt: skip
    path.write_text('[events]\nurl = "trino://u@h/c"\nsearches = "q; DROP TABLE x"\n')
    with pytest.raises(InputError, match=r"\[events\] searches: must be a table name"):
        project_warehouse(path)


def test_a_warehouse_without_its_driver_is_one_line(store: Store) -> None:
    store.add_config("web", "builtin")
    with pytest.raises(InputError, match=r"\[events\] url: .*bigquery"):
        store.score_online(warehouse=Warehouse("bigquery://project/dataset"))


@pytest.mark.postgres
def test_rows_the_statement_would_misread_are_refused_naming_the_table(
    store: Store, warehouse_url: str
) -> None:
    store.add_config("web", "builtin")
    _load(warehouse_url, cascade_records(sessions=5, days=1))
    warehouse = Warehouse(warehouse_url, searches="logs_q", events="logs_e",
                          columns={"session_id": "sid"}, hit_column="hit_ids")  # fmt: skip
    bad_rows = [
        ("INSERT INTO logs_q VALUES ('x', 's', NULL, 'web', '{d1}')",
         "searches table logs_q: 1 row with no timestamp"),
        ("INSERT INTO logs_q VALUES ('x', NULL, now(), 'web', '{d1}')",
         "searches table logs_q: 1 row with no session_id"),
        ("INSERT INTO logs_q VALUES ('x', 's', '0001-01-01T00:00Z', 'web', '{d1}')",
         "searches table logs_q: 1 row with a timestamp outside 1970-01-01"),
        ("INSERT INTO logs_e VALUES ('x', 'click', now(), 0, NULL)",
         "events table logs_e: 1 row with a position below 1"),
        ("INSERT INTO logs_e VALUES ('x', 'rating', now(), 1, 'NaN')",
         "events table logs_e: 1 row with a value that is not a finite number"),
        ("INSERT INTO logs_e VALUES (NULL, 'click', now(), 1, '-Infinity')",
         "events table logs_e: 1 row with no query_id"),
    ]  # fmt: skip
    engine = create_engine(warehouse_url)
    try:
        for statement, problem in bad_rows:
            with engine.begin() as connection:
                connection.execute(text(statement))
            with pytest.raises(InputError, match=rf"^\[events\] {problem}"):
                store.score_online(metrics=["online:CTR"], warehouse=warehouse)
            with engine.begin() as connection:
                for table in ("logs_q", "logs_e"):
                    connection.execute(text(f"DELETE FROM {table} WHERE query_id = 'x' "
                                            "OR query_id IS NULL"))  # fmt: skip
        assert store.score_online(metrics=["online:CTR"], warehouse=warehouse)
    finally:
        engine.dispose()
