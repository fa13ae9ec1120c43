"""the results that carry a hit's fields, found without scanning every result: a partial index

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-03

Only the ``http`` searcher with ``hit_fields`` stores fields with its results, and most runs
store none; but the unjudged list and the query-health pages ask for the fields of a run's top
k, which read every result of the run to find none (1.3 to 1.8 s of a 20-config night of
10,000 queries). A partial index holds only the results whose ``fields`` are set, so that
question reads an empty index instead, and costs a write nothing when there are none. Both
databases keep such an index (SQLite and PostgreSQL alike).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

WITH_FIELDS = sa.text("fields IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_result_with_fields",
        "result",
        ["run_id", "query_id", "rank"],
        sqlite_where=WITH_FIELDS,
        postgresql_where=WITH_FIELDS,
    )


def downgrade() -> None:
    op.drop_index("ix_result_with_fields", table_name="result")
