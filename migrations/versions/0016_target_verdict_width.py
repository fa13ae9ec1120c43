"""target verdicts that turn on unjudged documents: room for ``needs_judgments``

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-24

``run_target.verdict`` held ``met``, ``at_risk`` or ``missed`` in 10 characters; a miss that the
optimistic bound does not confirm is now kept as ``needs_judgments`` (15), so the column widens
to 20.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run_target") as batch:
        batch.alter_column(
            "verdict", existing_type=sa.String(length=10), type_=sa.String(length=20)
        )


def downgrade() -> None:
    # the older schema had no word for it: such a verdict goes back to the miss it was
    op.execute("UPDATE run_target SET verdict = 'missed' WHERE verdict = 'needs_judgments'")
    with op.batch_alter_table("run_target") as batch:
        batch.alter_column(
            "verdict", existing_type=sa.String(length=20), type_=sa.String(length=10)
        )
