"""judge calibrations: each `judge calibrate` result, so gates can refuse an uncalibrated judge

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

A gate that lets model grades decide (``unjudged = "judge"`` or ``"grade"``) reads the judge's
latest row here: below its floor, or never calibrated, the judge is refused for gating.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_calibration",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("judge", sa.String(length=40), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_hash", sa.String(length=64), nullable=False),
        sa.Column("test_set", sa.String(length=200), nullable=False),
        sa.Column("floor", sa.Float(), nullable=False),
        sa.Column("gating", sa.Boolean(), nullable=False),
        sa.Column("refusal", sa.Text(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_calibration")),
    )
    with op.batch_alter_table("judge_calibration", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judge_calibration_judge"), ["judge"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("judge_calibration", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judge_calibration_judge"))
    op.drop_table("judge_calibration")
