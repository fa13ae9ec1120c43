"""on SQLite, an evaluation's per-query scores stored once, in key order: a WITHOUT ROWID table

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02

``query_score`` is keyed by (evaluation, metric, query) and written in that order, a hundred
thousand rows for each evaluation of 10,000 queries and ten measures. As a rowid table SQLite
keeps every row twice, once under its hidden rowid and once in the key's index; as a WITHOUT
ROWID table the key's B-tree is the table and the rows are kept once (2M scores: 141 to 78 MB).
PostgreSQL has no rowid and nothing changes there. On SQLite the table is rebuilt (batch mode):
a one-off copy of every stored score.
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _rebuild(with_rowid=False)


def downgrade() -> None:
    _rebuild(with_rowid=True)


def _rebuild(*, with_rowid: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table(
        "query_score", recreate="always", table_kwargs={"sqlite_with_rowid": with_rowid}
    ):
        pass
