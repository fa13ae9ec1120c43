"""Row counts of every table: what a refused night must leave exactly as it was."""

from __future__ import annotations

from sqlalchemy import func, select

from evalplat.db.engine import create_db_engine
from evalplat.db.metadata import METADATA


def table_counts(url: str) -> dict[str, int]:
    engine = create_db_engine(url)
    with engine.connect() as connection:
        counts = {
            t.name: connection.execute(select(func.count()).select_from(t)).scalar_one()
            for t in METADATA.sorted_tables
        }
    engine.dispose()
    return counts
