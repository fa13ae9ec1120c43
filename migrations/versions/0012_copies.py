"""result and judgment copies: a finished run's results and a version's judgments as Arrow IPC

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23

Reading a million-row run and its test set's million judgments back through the ``result`` and
``judgment`` tables is most of a comparison's database time; a copy of the same columns in
Arrow's own format is read in a tenth of it. Runs and versions written before this revision
have no copy and are read from the tables as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "result_copy",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["run.id"], name=op.f("fk_result_copy_run_id_run"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "part", name=op.f("pk_result_copy")),
    )
    op.create_table(
        "judgment_copy",
        sa.Column("test_set_version_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["test_set_version_id"],
            ["test_set_version.id"],
            name=op.f("fk_judgment_copy_test_set_version_id_test_set_version"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("test_set_version_id", "part", name=op.f("pk_judgment_copy")),
    )
    if op.get_bind().dialect.name == "postgresql":
        # Arrow IPC gains little from the server's compression, which halves the write speed
        for table in ("result_copy", "judgment_copy"):
            op.execute(f"ALTER TABLE {table} ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("judgment_copy")
    op.drop_table("result_copy")
