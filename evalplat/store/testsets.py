"""Test sets in the store: import a validated content as an immutable version, list, load."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalplat.db.bulk import bulk_insert_frame, insert_columns, read_frame
from evalplat.db.models import Corpus, Document, Judgment, Query, Rating, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, claim_name, utcnow
from evalplat.store.copies import judgment_table, keep_judgments
from evalplat.store.refs import VersionRef, check_name, parse_version_ref, pick_version
from evalplat.testsets.raters import DEFAULT_GRADE_RULE

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.testsets.content import TestSetContent
    from evalplat.testsets.raters import Agreement


@dataclass(frozen=True)
class TestSetVersionInfo:
    """What listings and ``--json`` show of one test set version."""

    __test__ = False

    name: str
    version: int
    content_hash: str
    queries: int
    judgments: int
    documents: int
    created_at: datetime
    source: dict[str, Any] | None
    grade_rule: str | None = None  # set when some pair has grades from several sources
    parent: int | None = None  # the version this one was made from; None: imported from files

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data


@dataclass(frozen=True)
class ImportOutcome:
    version: TestSetVersionInfo
    created: bool  # False when identical content already existed as this version


# The test set every online run is scored on (evalplat.store.events): not for judgments.
ONLINE_TEST_SET = "online"


def check_reserved(name: str) -> None:
    """A valid test set name that is not the reserved ``online``."""
    check_name(name, "test set")
    if name.strip() == ONLINE_TEST_SET:
        raise InputError(
            f"test set name '{ONLINE_TEST_SET}' is reserved for online runs scored from events; "
            "choose another name"
        )


class TestSetsMixin(StoreBase):
    def import_test_set(
        self,
        name: str,
        content: TestSetContent,
        *,
        source: dict[str, Any] | None = None,
        parent: int | None = None,
    ) -> ImportOutcome:
        """Store ``content`` as a new version of test set ``name``, in one transaction;
        ``parent`` is the version it was made from (judgments added to it), if any.

        Identical content (same content hash) returns the existing version instead.
        """
        check_reserved(name)
        content_hash = content.content_hash()
        resolved = content.qrels
        rule = None
        if len(resolved) != len(content.judgments):  # some pair has several sources' grades
            rule = content.grade_rule or DEFAULT_GRADE_RULE
        with self.session(write=True) as session:
            test_set = claim_name(session, TestSet, name)
            existing = session.scalar(
                select(TestSetVersion).where(
                    TestSetVersion.test_set_id == test_set.id,
                    TestSetVersion.content_hash == content_hash,
                )
            )
            if existing is not None:
                return ImportOutcome(_info(session, test_set, existing), created=False)
            corpus = None if content.documents is None else _corpus(session, content)
            latest = session.scalar(
                select(func.max(TestSetVersion.version)).where(
                    TestSetVersion.test_set_id == test_set.id
                )
            )
            version = TestSetVersion(
                test_set_id=test_set.id,
                version=(latest or 0) + 1,
                content_hash=content_hash,
                corpus_id=None if corpus is None else corpus.id,
                queries_count=len(content.queries),
                judgments_count=len(resolved),
                source=source,
                grade_rule=rule,
                created_at=utcnow(),
                parent_version=parent,
            )
            session.add(version)
            session.flush()
            _insert_queries(session, version.id, content.queries)
            _insert_judgments(session, version.id, resolved)
            if rule is not None:
                _insert_ratings(session, version.id, content.judgments)
            return ImportOutcome(_info(session, test_set, version), created=True)

    def list_test_sets(self) -> list[TestSetVersionInfo]:
        """The latest version of every test set, by name."""
        with self.session() as session:
            rows = session.execute(
                select(TestSet, TestSetVersion)
                .join(TestSetVersion, TestSetVersion.test_set_id == TestSet.id)
                .order_by(TestSet.name, TestSetVersion.version.desc())
            ).all()
            latest: dict[str, TestSetVersionInfo] = {}
            for test_set, version in rows:
                if test_set.name not in latest:
                    latest[test_set.name] = _info(session, test_set, version)
            return list(latest.values())

    def test_set_versions(self, name: str) -> list[TestSetVersionInfo]:
        """Every version of test set ``name``, oldest first."""
        with self.session() as session:
            test_set = _test_set(session, name)
            return [_info(session, test_set, v) for v in test_set.versions]

    def test_set_version(self, ref: str | VersionRef) -> TestSetVersionInfo:
        """Resolve ``NAME`` (latest) or ``NAME@VER``."""
        with self.session() as session:
            test_set, version = resolve_test_set_version(session, ref)
            return _info(session, test_set, version)

    def rater_agreement(self, ref: str | VersionRef) -> list[Agreement]:
        """Weighted Cohen's kappa for every pair of sources that graded pairs of the version
        (``evalplat.testsets.raters``); empty when every pair has one grade. Over the scale of
        the rating task that closed into the version, when one did, as ``rate status``
        measured it."""
        from evalplat.db.rating import RatingTask
        from evalplat.testsets.raters import agreement_by_source

        with self.session() as session:
            _, version = resolve_test_set_version(session, ref)
            if version.grade_rule is None:
                return []
            ratings = _ratings(session, version.id)
            task = session.execute(
                select(RatingTask.scale_low, RatingTask.scale_high)
                .where(
                    RatingTask.test_set_id == version.test_set_id,
                    RatingTask.closed_version == version.version,
                )
                .order_by(RatingTask.id.desc())
                .limit(1)
            ).first()
        return agreement_by_source(ratings, None if task is None else (task[0], task[1]))

    def load_test_set(self, ref: str | VersionRef, *, documents: bool = True) -> TestSetContent:
        """The content of a version: queries, judgments and (unless ``documents=False``, for
        steps that never show or search document text) documents, as DataFrames.

        A version with one grade per pair never changes, and a night or a sweep runs many
        configs on it: the last one loaded is kept and given again (keyed as the judgments are,
        ``_judgments``), with what was computed of it since (``several_grades``, its hashes). The
        content is shared: callers must not modify its frames in place."""
        import pandas as pd

        from evalplat.testsets.content import TestSetContent

        with self.session() as session:
            _, version = resolve_test_set_version(session, ref)
            stamp = (version.id, version.content_hash, version.created_at, documents)
            if self._content_cache is not None and self._content_cache[0] == stamp:
                kept: TestSetContent = self._content_cache[1]
                return kept
            queries = _frame(
                session,
                select(Query.query_id, Query.text, Query.weight, Query.tags)
                .where(Query.test_set_version_id == version.id)
                .order_by(Query.query_id),
                ["query_id", "text", "weight", "tags"],
            )
            queries["weight"] = pd.to_numeric(queries["weight"]).astype("float64")
            queries["tags"] = [None if t is None else json.dumps(t) for t in queries["tags"]]
            if version.grade_rule is not None:
                judgments = _ratings(session, version.id)
            else:
                judgments = self._judgments(session, version)
            corpus = corpus_hash = None
            if version.corpus_id is not None and documents:
                corpus_hash = session.scalar(
                    select(Corpus.content_hash).where(Corpus.id == version.corpus_id)
                )
                corpus = _frame(
                    session,
                    select(Document.doc_id, Document.title, Document.text, Document.fields)
                    .where(Document.corpus_id == version.corpus_id)
                    .order_by(Document.doc_id),
                    ["doc_id", "title", "text", "fields"],
                )
                corpus["fields"] = [
                    None if f is None else json.dumps(f, sort_keys=True) for f in corpus["fields"]
                ]
            content = TestSetContent(
                queries=queries,
                judgments=judgments,
                documents=corpus,
                grade_rule=version.grade_rule,
                known_corpus_hash=corpus_hash,
            )
            if version.grade_rule is None:
                # the judgment table's key holds one grade per pair: no need to look for
                # repeated pairs among a million judgments (a pandas pass of 0.3-1 s)
                content.__dict__["several_grades"] = False
        if version.grade_rule is None:  # raters' grades of a version can still arrive
            self._content_cache = (stamp, content)
        return content

    def document_text(
        self, ref: str | VersionRef, doc_ids: Sequence[str]
    ) -> dict[str, tuple[str, str]]:
        """``doc_id → (title, text)`` of those of ``doc_ids`` that the version's corpus has."""
        found: dict[str, tuple[str, str]] = {}
        with self.session() as session:
            corpus_id = resolve_test_set_version(session, ref)[1].corpus_id
            if corpus_id is None:
                return found
            wanted = list(dict.fromkeys(str(d) for d in doc_ids))
            for start in range(0, len(wanted), 500):
                for doc_id, title, text in session.execute(
                    select(Document.doc_id, Document.title, Document.text).where(
                        Document.corpus_id == corpus_id,
                        Document.doc_id.in_(wanted[start : start + 500]),
                    )
                ):
                    found[doc_id] = (title or "", text or "")
        return found


def resolve_test_set_version(
    session: Session, ref: str | VersionRef
) -> tuple[TestSet, TestSetVersion]:
    parsed = parse_version_ref(ref, "test set reference") if isinstance(ref, str) else ref
    test_set = _test_set(session, parsed.name)
    return test_set, pick_version(test_set.versions, parsed, "test set")


def _test_set(session: Session, name: str) -> TestSet:
    test_set = session.scalar(select(TestSet).where(TestSet.name == name))
    if test_set is None:
        names = session.scalars(select(TestSet.name).order_by(TestSet.name)).all()
        hint = f"; known: {', '.join(names)}" if names else "; import one with `testset import`"
        raise NotFoundError(f"no test set named '{name}'{hint}")
    return test_set


def _info(session: Session, test_set: TestSet, version: TestSetVersion) -> TestSetVersionInfo:
    documents = 0
    if version.corpus_id is not None:
        corpus = session.get(Corpus, version.corpus_id)
        documents = corpus.documents_count if corpus is not None else 0
    return TestSetVersionInfo(
        name=test_set.name,
        version=version.version,
        content_hash=version.content_hash,
        queries=version.queries_count,
        judgments=version.judgments_count,
        documents=documents,
        created_at=version.created_at,
        source=version.source,
        grade_rule=version.grade_rule,
        parent=version.parent_version,
    )


def _corpus(session: Session, content: TestSetContent) -> Corpus:
    documents = content.documents
    if documents is None:
        raise ValueError("content has no documents")
    corpus_hash = content.corpus_hash()
    corpus = session.scalar(select(Corpus).where(Corpus.content_hash == corpus_hash))
    if corpus is not None:
        return corpus
    # Two test sets sharing one new corpus may be imported at once: one inserts it, the other
    # (on PostgreSQL, after waiting for the first to commit) finds it.
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    created = session.scalar(
        insert(Corpus)
        .values(content_hash=corpus_hash, documents_count=len(documents), created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["content_hash"])
        .returning(Corpus.id)
    )
    corpus = session.scalar(select(Corpus).where(Corpus.content_hash == corpus_hash))
    if corpus is None:
        raise ValueError("corpus row vanished")
    if created is None:
        return corpus
    frame = documents[["doc_id", "title", "text", "fields"]].copy()
    frame["title"] = frame["title"].fillna("")
    frame["text"] = frame["text"].fillna("")
    frame.insert(0, "corpus_id", corpus.id)
    bulk_insert_frame(session, Document, frame)
    return corpus


def _insert_queries(session: Session, version_id: int, queries: pd.DataFrame) -> None:
    frame = queries[["query_id", "text", "weight", "tags"]].copy()
    frame["text"] = frame["text"].fillna("")
    frame.insert(0, "test_set_version_id", version_id)
    bulk_insert_frame(session, Query, frame)


def _insert_judgments(session: Session, version_id: int, judgments: pd.DataFrame) -> None:
    """The version's judgments, and their copy (``evalplat.store.copies``), sorted once."""
    table = judgment_table(judgments)
    columns: dict[str, Any] = {"test_set_version_id": version_id}
    columns.update((name, table.column(name)) for name in table.column_names)
    insert_columns(session, Judgment, columns, key_sorted=True)
    keep_judgments(session, version_id, table)


def _insert_ratings(session: Session, version_id: int, judgments: pd.DataFrame) -> None:
    frame = judgments[["query_id", "doc_id", "grade"]].copy()
    frame["source"] = judgments["source"].fillna("").astype(str)
    frame.insert(0, "test_set_version_id", version_id)
    bulk_insert_frame(session, Rating, frame)


def _ratings(session: Session, version_id: int) -> pd.DataFrame:
    """Every source's grade, as imported (a source stored as ``""`` named none)."""
    frame = read_frame(
        session,
        select(Rating.query_id, Rating.doc_id, Rating.grade, Rating.source)
        .where(Rating.test_set_version_id == version_id)
        .order_by(Rating.query_id, Rating.doc_id, Rating.source),
        ["query_id", "doc_id", "grade", "source"],
        {"query_id": "str", "doc_id": "str", "grade": "int64", "source": "str"},
    )
    frame["source"] = [s or None for s in frame["source"]]
    return frame


def _frame(session: Session, statement: Any, columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    rows = session.execute(statement).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=columns)
