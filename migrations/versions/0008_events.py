"""online events: UBI query records and event records, attributed to config versions

Revision ID: 0008
Revises: 0005
Create Date: 2026-12-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "online_query",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=200), nullable=False),
        sa.Column("config_version_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("client_id", sa.String(length=200), nullable=True),
        sa.Column("user_query", sa.Text(), nullable=False),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("hit_ids", sa.JSON(), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["config_version_id"],
            ["config_version.id"],
            name=op.f("fk_online_query_config_version_id_config_version"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_query")),
        sa.UniqueConstraint("query_id", name=op.f("uq_online_query_query_id")),
    )
    op.create_index(
        op.f("ix_online_query_config_version_id"), "online_query", ["config_version_id"]
    )
    op.create_index(op.f("ix_online_query_timestamp"), "online_query", ["timestamp"])
    op.create_table(
        "online_event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("event_id", sa.String(length=64), nullable=False),
        sa.Column("query_id", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("client_id", sa.String(length=200), nullable=True),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("object_id", sa.String(length=200), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("value", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_event")),
        sa.UniqueConstraint("event_id", name=op.f("uq_online_event_event_id")),
    )
    op.create_index(op.f("ix_online_event_query_id"), "online_event", ["query_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_online_event_query_id"), table_name="online_event")
    op.drop_table("online_event")
    op.drop_index(op.f("ix_online_query_timestamp"), table_name="online_query")
    op.drop_index(op.f("ix_online_query_config_version_id"), table_name="online_query")
    op.drop_table("online_query")
