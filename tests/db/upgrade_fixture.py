"""A database as a released evalplat left it, kept as rows, for the upgrade test
(``tests/db/test_upgrade_keeps_data.py``): three nights of two configs of the small nightly
project (a regression alert opened, then resolved), every table's rows at the revision the file
names.

Made by the evalplat of that revision, never edited by hand:
``python -m tests.db.upgrade_fixture tests/db/fixtures/upgrade_REV.json``. A later evalplat
loads the rows into a database migrated to that revision and upgrades it to its head.
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, MetaData, select

BINARY = "base64:"


def dump(engine: Engine) -> dict[str, Any]:
    """Every table's columns and rows (datetimes ISO, bytes base64), with the revision."""
    from evalplat.db import migrate

    metadata = MetaData()
    metadata.reflect(engine)
    tables: dict[str, Any] = {}
    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            if table.name == "alembic_version":
                continue
            rows = connection.execute(select(table).order_by(*table.primary_key.columns)).all()
            tables[table.name] = {
                "columns": [column.name for column in table.columns],
                "rows": [[_plain(value) for value in row] for row in rows],
            }
    return {"revision": migrate.current_revision(engine), "tables": tables}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return BINARY + base64.b64encode(bytes(value)).decode("ascii")
    return value


def make(target: Path) -> None:
    from evalplat.db.engine import create_db_engine
    from evalplat.nightly.job import run_nightly
    from evalplat.nightly.project import load_project
    from tests.nightly.small_project import write_project

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'evalplat.db'}"
        for modes in ({"alpha": "good", "beta": "good"}, {"alpha": "bad", "beta": "tail"},
                      {"alpha": "good", "beta": "tail"}):  # fmt: skip
            path = write_project(Path(folder) / "project", modes, reports="")
            run_nightly(load_project(path), db_url=url, log=lambda _step: None)
        engine = create_db_engine(url)
        data = dump(engine)
        engine.dispose()
    target.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n", "utf-8")


if __name__ == "__main__":
    make(Path(sys.argv[1]))
