"""rating tasks: pairs graded in the browser by invited raters (``evalplat rate``)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25

Tasks, their pairs, the invites (token stored hashed) and every rater's grade as it is given;
guidelines per test set. See ``evalplat.db.rating``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def _time(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "rating_guidelines",
        sa.Column("test_set_id", sa.Integer(), nullable=False),
        sa.Column("markdown", sa.Text(), nullable=False),
        _time("updated_at"),
        sa.ForeignKeyConstraint(
            ["test_set_id"],
            ["test_set.id"],
            name=op.f("fk_rating_guidelines_test_set_id_test_set"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("test_set_id", name=op.f("pk_rating_guidelines")),
    )
    op.create_table(
        "rating_task",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("test_set_id", sa.Integer(), nullable=False),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("scale_low", sa.Integer(), nullable=False),
        sa.Column("scale_high", sa.Integer(), nullable=False),
        sa.Column("raters_per_pair", sa.Integer(), nullable=False),
        sa.Column("show_rank", sa.Boolean(), nullable=False),
        sa.Column("grade_rule", sa.String(length=60), nullable=False),
        sa.Column("judge", sa.String(length=40), nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        _time("created_at"),
        _time("closed_at", nullable=True),
        sa.Column("closed_version", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["test_set_id"],
            ["test_set.id"],
            name=op.f("fk_rating_task_test_set_id_test_set"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_task")),
        sa.UniqueConstraint("name", name=op.f("uq_rating_task_name")),
    )
    op.create_table(
        "rating_pair",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=200), nullable=False),
        sa.Column("doc_id", sa.String(length=200), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("settled_grade", sa.Integer(), nullable=True),
        sa.Column("settled_by", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["rating_task.id"],
            name=op.f("fk_rating_pair_task_id_rating_task"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_pair")),
        sa.UniqueConstraint(
            "task_id", "query_id", "doc_id", name=op.f("uq_rating_pair_task_id_query_id_doc_id")
        ),
    )
    op.create_table(
        "rating_invite",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("rater", sa.String(length=40), nullable=False),
        sa.Column("role", sa.String(length=10), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf", sa.String(length=64), nullable=False),
        _time("created_at"),
        _time("expires_at"),
        _time("revoked_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["rating_task.id"],
            name=op.f("fk_rating_invite_task_id_rating_task"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_invite")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_rating_invite_token_hash")),
    )
    op.create_table(
        "rating_grade",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("rater", sa.String(length=40), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("unsure", sa.Boolean(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        _time("graded_at"),
        sa.ForeignKeyConstraint(
            ["pair_id"],
            ["rating_pair.id"],
            name=op.f("fk_rating_grade_pair_id_rating_pair"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_grade")),
        sa.UniqueConstraint("pair_id", "rater", name=op.f("uq_rating_grade_pair_id_rater")),
    )


def downgrade() -> None:
    for table in ("rating_grade", "rating_invite", "rating_pair", "rating_task"):
        op.drop_table(table)
    op.drop_table("rating_guidelines")
