"""interleaved searches: the merged hits and the config version that contributed each

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25

One row per interleaved search (``online_interleaved``): its two config versions, the method
(team draft or balanced), the hits shown and, per hit, the version whose turn placed it (and
for balanced interleaving each version's rank of it). Its clicks stay in ``online_event``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "online_interleaved",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=200), nullable=False),
        sa.Column("version_a", sa.Integer(), nullable=False),
        sa.Column("version_b", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=20), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("client_id", sa.String(length=200), nullable=True),
        sa.Column("user_query", sa.Text(), nullable=False),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("hit_ids", sa.JSON(), nullable=False),
        sa.Column("teams", sa.JSON(), nullable=False),
        sa.Column("ranks", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_a"],
            ["config_version.id"],
            name=op.f("fk_online_interleaved_version_a_config_version"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_b"],
            ["config_version.id"],
            name=op.f("fk_online_interleaved_version_b_config_version"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_interleaved")),
        sa.UniqueConstraint("query_id", name=op.f("uq_online_interleaved_query_id")),
    )
    op.create_index(op.f("ix_online_interleaved_version_a"), "online_interleaved", ["version_a"])
    op.create_index(op.f("ix_online_interleaved_version_b"), "online_interleaved", ["version_b"])
    op.create_index(op.f("ix_online_interleaved_timestamp"), "online_interleaved", ["timestamp"])


def downgrade() -> None:
    for column in ("timestamp", "version_b", "version_a"):
        op.drop_index(op.f(f"ix_online_interleaved_{column}"), table_name="online_interleaved")
    op.drop_table("online_interleaved")
