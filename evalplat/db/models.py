"""The tables of what is searched and what was searched: test sets with their versions, corpora
and judgments, configs with their versions, and runs with their results.

    test_set 1─* test_set_version *─1 corpus 1─* document
                 test_set_version 1─* query, judgment, rating
    config   1─* config_version
    run (config_version x test_set_version) 1─* result, run_query

The rest of the schema (PRODUCT.md "Concepts") has a module per table group: evaluations,
comparisons and baselines in ``evalplat.db.evaluations``; alerts, deliveries, the outbox, locks,
nights and run targets in ``evalplat.db.operations``; online events in ``evalplat.db.events``;
rating in ``evalplat.db.rating``; judge grades in ``evalplat.db.judge_grades``; the base and
column kinds in ``evalplat.db.schema``. ``evalplat.db.metadata`` loads them all, so its
``METADATA`` is the whole schema.

Versions are immutable and content-hashed; rows below a version are written once, in bulk, in
the transaction that creates the version. Per-query rows use the external query id (a string)
rather than a surrogate key, so that results, scores and judgments join on it directly and bulk
loads need no id round trips.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from evalplat.db.schema import (
    Base,
    ExternalId,
    Hash,
    Name,
    UTCDateTime,
)
from evalplat.db.schema import created_column as _created
from evalplat.db.schema import id_column as _id

# ── test sets ────────────────────────────────────────────────────────────────────────────────


class TestSet(Base):
    __tablename__ = "test_set"
    __test__ = False  # not a pytest class

    id: Mapped[int] = _id()
    name: Mapped[str] = mapped_column(Name, unique=True)
    created_at: Mapped[datetime] = _created()

    versions: Mapped[list[TestSetVersion]] = relationship(
        back_populates="test_set", order_by="TestSetVersion.version"
    )


class Corpus(Base):
    """A content-hashed document collection, shared by the test set versions that use it."""

    __tablename__ = "corpus"

    id: Mapped[int] = _id()
    content_hash: Mapped[str] = mapped_column(Hash, unique=True)
    documents_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = _created()


class Document(Base):
    __tablename__ = "document"

    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpus.id", ondelete="CASCADE"), primary_key=True
    )
    doc_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")
    fields: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class TestSetVersion(Base):
    __tablename__ = "test_set_version"
    __table_args__ = (
        UniqueConstraint("test_set_id", "version"),
        UniqueConstraint("test_set_id", "content_hash"),
    )
    __test__ = False

    id: Mapped[int] = _id()
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_set.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(Hash)
    corpus_id: Mapped[int | None] = mapped_column(ForeignKey("corpus.id"), nullable=True)
    queries_count: Mapped[int] = mapped_column(Integer)
    judgments_count: Mapped[int] = mapped_column(Integer)
    # Where the content came from (file names, format, import options): informational only.
    source: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How grades of one pair from several sources resolve (evalplat.testsets.raters);
    # None: one each.
    grade_rule: Mapped[str | None] = mapped_column(String(60), nullable=True)
    created_at: Mapped[datetime] = _created()
    # The version of the same test set this one was made from (``--add``, a judge, grades
    # carried onto a changed file); None for a version imported from files.
    parent_version: Mapped[int | None] = mapped_column(Integer, nullable=True)

    test_set: Mapped[TestSet] = relationship(back_populates="versions")
    corpus: Mapped[Corpus | None] = relationship()


class Query(Base):
    __tablename__ = "query"

    test_set_version_id: Mapped[int] = mapped_column(
        ForeignKey("test_set_version.id", ondelete="CASCADE"), primary_key=True
    )
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    text: Mapped[str] = mapped_column(Text, default="")
    weight: Mapped[float | None] = mapped_column(Float, nullable=True)
    tags: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)


class Judgment(Base):
    __tablename__ = "judgment"

    test_set_version_id: Mapped[int] = mapped_column(
        ForeignKey("test_set_version.id", ondelete="CASCADE"), primary_key=True
    )
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    doc_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    grade: Mapped[int] = mapped_column(Integer)
    source: Mapped[str | None] = mapped_column(String(40), nullable=True)


class Rating(Base):
    """Every source's grade of a pair, kept when some pair of the version has several (a second
    rater); ``judgment`` then holds the grades resolved by the version's ``grade_rule``.
    ``source`` is ``""`` for grades that named none."""

    __tablename__ = "rating"

    test_set_version_id: Mapped[int] = mapped_column(
        ForeignKey("test_set_version.id", ondelete="CASCADE"), primary_key=True
    )
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    doc_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    source: Mapped[str] = mapped_column(String(40), primary_key=True)
    grade: Mapped[int] = mapped_column(Integer)


# ── configs ──────────────────────────────────────────────────────────────────────────────────


class Config(Base):
    __tablename__ = "config"

    id: Mapped[int] = _id()
    name: Mapped[str] = mapped_column(Name, unique=True)
    created_at: Mapped[datetime] = _created()
    # the version the name stands for: the one last added or named again by its content
    # (a rollback included); written only by ``evalplat.store.configs.make_current``
    current_version: Mapped[int | None] = mapped_column(Integer, nullable=True)

    versions: Mapped[list[ConfigVersion]] = relationship(
        back_populates="config", order_by="ConfigVersion.version"
    )


class ConfigVersion(Base):
    """Searcher kind + parameters + label, hashed. ``${ENV}`` placeholders are kept verbatim."""

    __tablename__ = "config_version"
    __table_args__ = (
        UniqueConstraint("config_id", "version"),
        UniqueConstraint("config_id", "content_hash"),
    )

    id: Mapped[int] = _id()
    config_id: Mapped[int] = mapped_column(ForeignKey("config.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(Hash)
    searcher: Mapped[str] = mapped_column(String(40))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    label: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = _created()

    config: Mapped[Config] = relationship(back_populates="versions")


# ── runs and scores ──────────────────────────────────────────────────────────────────────────


class Run(Base):
    __tablename__ = "run"

    id: Mapped[int] = _id()
    config_version_id: Mapped[int] = mapped_column(ForeignKey("config_version.id"), index=True)
    test_set_version_id: Mapped[int] = mapped_column(ForeignKey("test_set_version.id"))
    status: Mapped[str] = mapped_column(String(20))
    trigger: Mapped[str] = mapped_column(String(20))
    depth: Mapped[int] = mapped_column(Integer)
    evalplat_version: Mapped[str] = mapped_column(String(40))
    # Liveness: the process writing the run refreshes the heartbeat; a "running" run whose
    # heartbeat is stale belongs to a dead process and is shown as interrupted.
    host: Mapped[str | None] = mapped_column(String(200), nullable=True)
    pid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    queries_total: Mapped[int] = mapped_column(Integer, default=0)
    queries_failed: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    results_pruned_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    options: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

    config_version: Mapped[ConfigVersion] = relationship()
    test_set_version: Mapped[TestSetVersion] = relationship()


class RunQuery(Base):
    """One query's outcome in a run: ok or failed, with latency and the error that stuck."""

    __tablename__ = "run_query"

    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    status: Mapped[str] = mapped_column(String(10))  # ok | failed
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    results_count: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)


class Result(Base):
    """One ranked document of one query of a run; ``rank`` starts at 1 and is the final order.

    ``fields``: document field values read from the hit by the searcher (the ``http``
    searcher's ``hit_fields``), name -> JSON value; NULL when the searcher read none.

    ``run_id`` has no foreign key: PostgreSQL checked one row by row, most of the time of
    writing a million results. Every writer checks and locks the run's row once per
    transaction instead (``evalplat.store.runs.lock_run``); nothing deletes runs.
    """

    __tablename__ = "result"
    # stored once, as the key's B-tree, on SQLite (migration 0020), and the few results with
    # hit fields indexed apart, so that asking for them reads no other result (migration 0023)
    __table_args__ = (
        Index(
            "ix_result_with_fields",
            "run_id",
            "query_id",
            "rank",
            sqlite_where=text("fields IS NOT NULL"),
            postgresql_where=text("fields IS NOT NULL"),
        ),
        {"sqlite_with_rowid": False},
    )

    run_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    rank: Mapped[int] = mapped_column(Integer, primary_key=True)
    doc_id: Mapped[str] = mapped_column(ExternalId)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    fields: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class ResultCopy(Base):
    """A finished run's ranked results (``query_id, doc_id, rank, score``) as Arrow IPC streams,
    ``part`` 0, 1, ... in order: read in one fetch instead of a million rows
    (``evalplat.store.copies``). ``result`` stays the record; this is a copy of it, made
    when the run finishes and dropped whenever its rows change (resume, retention)."""

    __tablename__ = "result_copy"

    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class JudgmentCopy(Base):
    """A test set version's judgments (``query_id, doc_id, grade, source``) as Arrow IPC streams,
    ``part`` 0, 1, ... in order, made when the version is imported (``evalplat.store.copies``);
    ``judgment`` stays the record."""

    __tablename__ = "judgment_copy"

    test_set_version_id: Mapped[int] = mapped_column(
        ForeignKey("test_set_version.id", ondelete="CASCADE"), primary_key=True
    )
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
