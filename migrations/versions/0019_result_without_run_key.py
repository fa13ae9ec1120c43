"""a run's results without a foreign key to the run: one check per write, not one per row

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-25

PostgreSQL checked ``result.run_id`` against ``run`` row by row (a ``SELECT ... FOR KEY SHARE``
for every one of a run's million results), most of the time of writing them. Nothing deletes
runs, so the key's ``ON DELETE CASCADE`` never fired; every writer of results now checks and
locks the run's row once per transaction instead (``evalplat.store.runs.lock_run``). On
SQLite the table is rebuilt (batch mode): a one-off copy of every stored result.
"""

from __future__ import annotations

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("result") as batch:
        batch.drop_constraint("fk_result_run_id_run", type_="foreignkey")


def downgrade() -> None:
    # results of a run that no longer exists would break the key: they go first
    op.execute("DELETE FROM result WHERE run_id NOT IN (SELECT id FROM run)")
    with op.batch_alter_table("result") as batch:
        batch.create_foreign_key(
            "fk_result_run_id_run", "run", ["run_id"], ["id"], ondelete="CASCADE"
        )
