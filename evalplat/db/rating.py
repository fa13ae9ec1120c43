"""Rating tasks: (query, document) pairs that invited people grade in the browser.

    test_set 1─1 rating_guidelines (Markdown shown to every rater of the test set's tasks)
    test_set 1─* rating_task 1─* rating_pair 1─* rating_grade (one per rater)
                 rating_task 1─* rating_invite (a rater's or a lead's way in)

An invite keeps only the SHA-256 of its token: the token itself is printed once, in the link,
and a copy of the database lets nobody in. ``csrf`` is the invite's anti-forgery value, sent
back by the page in a header with every grade. A grade row is written as it is given; a grade
of None with ``unsure`` set is the rater's "unsure", kept out of the test set when the task
closes. A lead settles a pair the raters disagree on (``settled_grade``); a closed task names
the test set version its grades became (``closed_version``). A task is ``open``, then
``closing`` once its grades are read (it takes no more), then ``closed``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from evalplat.db.schema import Base, ExternalId, Hash, Name, UTCDateTime
from evalplat.db.schema import created_column as _created
from evalplat.db.schema import id_column as _id

# "closing": the grades were read and the task takes no more (evalplat.store.rating)
TASK_STATES = ("open", "closing", "closed")
INVITE_ROLES = ("rater", "lead")


class RatingGuidelines(Base):
    __tablename__ = "rating_guidelines"

    test_set_id: Mapped[int] = mapped_column(
        ForeignKey("test_set.id", ondelete="CASCADE"), primary_key=True
    )
    markdown: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = _created()


class RatingTask(Base):
    __tablename__ = "rating_task"

    id: Mapped[int] = _id()
    name: Mapped[str] = mapped_column(Name, unique=True)
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_set.id", ondelete="CASCADE"))
    # the version the pairs were chosen from (its documents are what raters read)
    base_version: Mapped[int] = mapped_column(Integer)
    # the run whose top k the pairs came from: its stored hit fields are shown
    run_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scale_low: Mapped[int] = mapped_column(Integer)
    scale_high: Mapped[int] = mapped_column(Integer)
    raters_per_pair: Mapped[int] = mapped_column(Integer)
    show_rank: Mapped[bool] = mapped_column(Boolean)
    grade_rule: Mapped[str] = mapped_column(String(60))
    judge: Mapped[str | None] = mapped_column(String(40), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime] = _created()
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    closed_version: Mapped[int | None] = mapped_column(Integer, nullable=True)


class RatingPair(Base):
    __tablename__ = "rating_pair"
    __table_args__ = (UniqueConstraint("task_id", "query_id", "doc_id"),)

    id: Mapped[int] = _id()
    task_id: Mapped[int] = mapped_column(ForeignKey("rating_task.id", ondelete="CASCADE"))
    query_id: Mapped[str] = mapped_column(ExternalId)
    doc_id: Mapped[str] = mapped_column(ExternalId)
    rank: Mapped[int | None] = mapped_column(Integer, nullable=True)
    settled_grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    settled_by: Mapped[str | None] = mapped_column(String(40), nullable=True)


class RatingInvite(Base):
    __tablename__ = "rating_invite"

    id: Mapped[int] = _id()
    task_id: Mapped[int] = mapped_column(ForeignKey("rating_task.id", ondelete="CASCADE"))
    rater: Mapped[str] = mapped_column(String(40))
    role: Mapped[str] = mapped_column(String(10))
    token_hash: Mapped[str] = mapped_column(Hash, unique=True)
    csrf: Mapped[str] = mapped_column(Hash)
    created_at: Mapped[datetime] = _created()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class RatingGrade(Base):
    __tablename__ = "rating_grade"
    __table_args__ = (UniqueConstraint("pair_id", "rater"),)

    id: Mapped[int] = _id()
    pair_id: Mapped[int] = mapped_column(ForeignKey("rating_pair.id", ondelete="CASCADE"))
    rater: Mapped[str] = mapped_column(String(40))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    unsure: Mapped[bool] = mapped_column(Boolean)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    graded_at: Mapped[datetime] = _created()
