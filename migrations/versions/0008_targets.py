"""run targets: each run's verdict against the target of a metric

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22

``run_target`` holds, per run and metric, the figure, its bootstrap interval and the verdict
(met, at_risk, missed) against the target in force. Alerts gain the kinds ``target`` and
``drift``; ``alert.kind`` is a plain string column, so that needs no change of schema.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_target",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(length=80), nullable=False),
        sa.Column("bound", sa.String(length=3), nullable=False),
        sa.Column("target_value", sa.Float(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("verdict", sa.String(length=10), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["run.id"], name=op.f("fk_run_target_run_id_run"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "metric", name=op.f("pk_run_target")),
    )


def downgrade() -> None:
    op.drop_table("run_target")
    op.execute("DELETE FROM alert WHERE kind IN ('target', 'drift')")
