"""on SQLite, a run's results stored once, in key order: a WITHOUT ROWID table

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

A rowid table with a three-column primary key keeps each result twice: the row under a hidden
rowid, and the key (run, query, rank) again in the key's index. Results are always written and
read by that key, so SQLite's WITHOUT ROWID table, which is the key's B-tree itself, stores them
once. PostgreSQL has no rowid and nothing changes there. On SQLite the table is rebuilt (batch
mode): a one-off copy of every stored result.
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
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
        "result", recreate="always", table_kwargs={"sqlite_with_rowid": with_rowid}
    ):
        pass
