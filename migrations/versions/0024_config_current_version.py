"""a config's current version: the one its project file (or the last ``config add``) holds

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04

Until this revision a config's name stood for its highest-numbered version, so a rollback (the
project file back at the content of an earlier version) left the name on the version rolled
back from. The current version is now stored once, on the config, and written only where a
version is added or named again by its content. Configs stored before keep their
highest-numbered version as the current one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("config", sa.Column("current_version", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE config SET current_version = (SELECT max(config_version.version) "
        "FROM config_version WHERE config_version.config_id = config.id)"
    )


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite 3.35 and later, PostgreSQL): a batch rebuild of ``config``
    # would drop the table that every config version's foreign key points at.
    op.execute("ALTER TABLE config DROP COLUMN current_version")
