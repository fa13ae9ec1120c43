"""alert recent outcomes: what a confirmation rule (k of n, clear m) reads of a key's nights

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06

A gate may open its alert on k regressed nights of the last n and resolve it after m clear
nights (``evalplat.alerts.confirmation``), so a key must remember its latest outcomes, not only
a streak. ``alert.recent`` keeps them ("1" regressed, "0" clear, oldest first). Existing rows
read as empty: an open alert's next outcome decides as under ``consecutive``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recent", sa.String(length=60), nullable=True))


def downgrade() -> None:
    # an earlier schema counts only a streak: a pending alert's clear nights are forgotten
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.drop_column("recent")
