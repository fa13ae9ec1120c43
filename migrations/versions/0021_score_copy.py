"""score copy: an evaluation's per-query scores as Arrow IPC

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02

A comparison reads both runs' per-query scores, and the leaderboard and the run pages read
every run's: a hundred thousand rows each for 10,000 queries and ten measures, about a quarter
of a second through the ``query_score`` table on SQLite. The same columns in Arrow's own format
are one fetch of a blob. Evaluations stored before this revision have no copy and are read from
the table as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "score_copy",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluation.id"],
            name=op.f("fk_score_copy_evaluation_id_evaluation"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("evaluation_id", "part", name=op.f("pk_score_copy")),
    )
    if op.get_bind().dialect.name == "postgresql":
        # Arrow IPC gains little from the server's compression, which halves the write speed
        op.execute("ALTER TABLE score_copy ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("score_copy")
