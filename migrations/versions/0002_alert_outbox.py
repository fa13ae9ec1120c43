"""alert outbox and alert kinds

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

An alert's state change and one pending delivery per configured channel are written in one
transaction (``alert_outbox``), so a crash between the change and its delivery loses nothing.
Alerts gain a ``kind`` (regression, needs_judgments, operational); an operational alert (a run
that failed) has no baseline run, hence the nullable ``baseline_run_id``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=20), nullable=False, server_default="regression")
        )
        batch_op.alter_column("baseline_run_id", existing_type=sa.Integer(), nullable=True)
    op.create_table(
        "alert_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(length=20), nullable=False),
        sa.Column("channel", sa.String(length=200), nullable=False),
        sa.Column("idempotency_key", sa.String(length=64), nullable=False),
        sa.Column("message", sa.JSON(), nullable=False),
        sa.Column("batch", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_id"],
            ["alert.id"],
            name=op.f("fk_alert_outbox_alert_id_alert"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_outbox")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_alert_outbox_idempotency_key")),
    )
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_outbox_alert_id"), ["alert_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_alert_outbox_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_outbox_status"))
        batch_op.drop_index(batch_op.f("ix_alert_outbox_alert_id"))
    op.drop_table("alert_outbox")
    op.execute("DELETE FROM alert WHERE baseline_run_id IS NULL")
    with op.batch_alter_table("alert", schema=None) as batch_op:
        batch_op.alter_column("baseline_run_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column("kind")
