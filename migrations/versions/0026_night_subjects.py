"""night subjects: the (config, test set) pairs each night ran, so that one that left is told

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05

The index moved a subject to its "Ended" section only when the night retired one of its
alerts; a config dropped from the project file without an open alert stayed among the live
rows for good. A night now records the pairs its project file runs and the file's name; a pair
that an earlier night ran and the latest one does not has ended. Nights stored before record
none and end nothing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("night", sa.Column("subjects", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE night DROP COLUMN subjects")
