"""alert lifecycle: retired alerts, notes, and the project that owns an alert

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24

``alert.state`` gains ``retired`` (a plain string column: no change of schema). An alert records
when it was retired (``retired_at``), the note of a hand resolution or the reason of a retirement
(``note``), and the project file whose nights own it (``project``): only that project's nights
retire it when its subject leaves the file.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("project", sa.String(length=500), nullable=True))


def downgrade() -> None:
    # an earlier schema knows no retired state: a retired alert is kept as resolved
    op.execute(
        "UPDATE alert SET state = 'resolved', resolved_at = retired_at WHERE state = 'retired'"
    )
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.drop_column("project")
        batch_op.drop_column("note")
        batch_op.drop_column("retired_at")
