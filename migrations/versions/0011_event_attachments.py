"""event attachments: Parquet logs read in place (`events attach`) instead of stored row by row

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23

One row per attached file: where it is, which column holds what, the config versions its
config references were attributed to when it was attached, and its size and modification time,
so scoring can refuse a file that changed since.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "online_attachment",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("layout", sa.JSON(), nullable=False),
        sa.Column("configs", sa.JSON(), nullable=False),
        sa.Column("searches", sa.Integer(), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attached_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_attachment")),
        sa.UniqueConstraint("path", name=op.f("uq_online_attachment_path")),
    )


def downgrade() -> None:
    op.drop_table("online_attachment")
