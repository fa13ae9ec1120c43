"""comparison segments: each metric of a comparison over the queries carrying a tag

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "comparison_segment",
        sa.Column("comparison_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(length=80), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("queries", sa.Integer(), nullable=False),
        sa.Column("baseline", sa.Float(), nullable=False),
        sa.Column("candidate", sa.Float(), nullable=False),
        sa.Column("delta", sa.Float(), nullable=False),
        sa.Column("relative_delta", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("test", sa.String(length=20), nullable=False),
        sa.Column("p_value", sa.Float(), nullable=True),
        sa.Column("p_corrected", sa.Float(), nullable=True),
        sa.Column("gated", sa.Boolean(), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("note", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["comparison_id"],
            ["comparison.id"],
            name=op.f("fk_comparison_segment_comparison_id_comparison"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "comparison_id", "metric", "segment", name=op.f("pk_comparison_segment")
        ),
    )


def downgrade() -> None:
    op.drop_table("comparison_segment")
