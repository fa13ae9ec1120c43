"""engine alerts: an operational alert whose subject is the engine several configs search

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06

One outage of an engine that several configs search opened an operational alert per config
(issue 53, item 18). ``alert.engine`` names the engine (``evalplat.searchers.engines``) of an
operational alert that stands for all of them; it is null on every other alert.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.add_column(sa.Column("engine", sa.String(length=500), nullable=True))


def downgrade() -> None:
    # an earlier schema keys operational alerts by config: an engine's alert stays the alert
    # of the config it was first seen on
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.drop_column("engine")
