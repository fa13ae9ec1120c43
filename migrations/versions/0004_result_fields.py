"""result fields: document field values a searcher read from each hit

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("result") as batch:
        batch.add_column(sa.Column("fields", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("result") as batch:
        batch.drop_column("fields")
