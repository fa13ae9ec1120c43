"""outbox claims: who is delivering a batch, and until when

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24

Two deliverers (a night and ``evalplat alerts deliver``, or two of the latter) used to read the
same pending rows and both send them. A deliverer now claims a batch's rows before sending:
``claimed_by`` names it (``host:pid:token``) and ``claimed_until`` is when the claim lapses, so
the rows of a deliverer killed mid-send are taken over after it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.drop_column("claimed_until")
        batch_op.drop_column("claimed_by")
