"""second raters: every source's grade of a pair, and the version's grade rule

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating",
        sa.Column("test_set_version_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=200), nullable=False),
        sa.Column("doc_id", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["test_set_version_id"],
            ["test_set_version.id"],
            name=op.f("fk_rating_test_set_version_id_test_set_version"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "test_set_version_id", "query_id", "doc_id", "source", name=op.f("pk_rating")
        ),
    )
    with op.batch_alter_table("test_set_version") as batch:
        batch.add_column(sa.Column("grade_rule", sa.String(length=60), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("test_set_version") as batch:
        batch.drop_column("grade_rule")
    op.drop_table("rating")
