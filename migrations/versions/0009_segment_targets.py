"""segment targets: a run's verdict against a target judged on one segment (query tag)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

``run_target`` gains ``segment``, part of its primary key: ``""`` for a target on all queries
(every row kept so far), the tag for a target on that segment's queries.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run_target", recreate="always") as batch:
        batch.add_column(
            sa.Column("segment", sa.String(length=80), nullable=False, server_default="")
        )
        batch.drop_constraint("pk_run_target", type_="primary")
        batch.create_primary_key("pk_run_target", ["run_id", "metric", "segment"])


def downgrade() -> None:
    op.execute("DELETE FROM run_target WHERE segment <> ''")
    with op.batch_alter_table("run_target", recreate="always") as batch:
        batch.drop_constraint("pk_run_target", type_="primary")
        batch.create_primary_key("pk_run_target", ["run_id", "metric"])
        batch.drop_column("segment")
