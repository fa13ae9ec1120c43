"""test set lineage: the version each derived test set version was made from

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24

A version made from another one (judgments added with ``--add``, a judge's grades, grades
carried onto a changed project file) records the version number it was made from, so a night
can tell which stored versions descend from the project file's. Versions imported from files
have none. Versions written before this revision get theirs from what their ``source`` already
said (``added_to`` for ``--add``, ``from_version`` for a judge).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("test_set_version", sa.Column("parent_version", sa.Integer(), nullable=True))
    table = sa.table(
        "test_set_version",
        sa.column("id", sa.Integer()),
        sa.column("source", sa.JSON()),
        sa.column("parent_version", sa.Integer()),
    )
    bind = op.get_bind()
    for row_id, source in bind.execute(sa.select(table.c.id, table.c.source)).all():
        if not isinstance(source, dict):
            continue
        parent = source.get("added_to", source.get("from_version"))
        if isinstance(parent, int):
            bind.execute(table.update().where(table.c.id == row_id).values(parent_version=parent))


def downgrade() -> None:
    with op.batch_alter_table("test_set_version") as batch:
        batch.drop_column("parent_version")
