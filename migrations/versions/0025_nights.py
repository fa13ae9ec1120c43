"""nights: when each night began and ended, so that its alert events can be told apart

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05

An alert stores when it opened, resolved and retired, but nothing said which night did it. A
night now records when it began and when it ended; the events of the latest night are the
alerts' events between the two (the index's "Last night" section).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "night",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_night")),
    )


def downgrade() -> None:
    op.drop_table("night")
