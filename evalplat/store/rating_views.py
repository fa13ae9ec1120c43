"""What the rating pages read, each in one session: a rater's whole state for a screen (the
task, their invite, the pairs, every grade, the pair shown), a pair's texts, and a judge's
grades of the task's pairs.

Grades and pairs are read as plain rows, not frames: the rating server never imports pandas,
so a stranger's post finds it at the size of the store and the web framework alone
(tests/rating/test_bodies.py).

A page costs one session, not one per question: on SQLite each session opens a connection, and
a rater waits for every page (scripts/bench_rating.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from evalplat.db.models import Document, Query, Result, TestSet, TestSetVersion
from evalplat.db.rating import RatingGrade, RatingInvite, RatingPair, RatingTask
from evalplat.errors import NotFoundError
from evalplat.store.base import StoreBase, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from evalplat.store.rating import InviteInfo, RatingTaskInfo


@dataclass(frozen=True)
class PairView:
    """What the rating screen shows of one pair (every text untrusted)."""

    pair_id: int
    query_id: str
    query: str
    doc_id: str
    rank: int | None
    title: str
    text: str
    fields: dict[str, str]


@dataclass(frozen=True, slots=True)
class GradeRow:
    """One rater's grade of one pair (``grade`` None when they answered unsure)."""

    pair_id: int
    query_id: str
    doc_id: str
    rater: str
    grade: int | None
    unsure: bool
    note: str | None


@dataclass(frozen=True, slots=True)
class PairRow:
    """One pair of a task, with the lead's grade once they settled it."""

    pair_id: int
    query_id: str
    doc_id: str
    rank: int | None
    settled_grade: int | None


@dataclass(frozen=True)
class RaterState:
    """A live invite's view of its task: every pair id, every grade given (all raters), and
    the pair asked for (None when none was)."""

    task: RatingTaskInfo
    invite: InviteInfo
    pair_ids: list[int]
    grades: list[GradeRow]
    view: PairView | None


class RatingViewsMixin(StoreBase):
    def rating_state(
        self, task: str, token_hash: str, pair_id: int | None = None
    ) -> RaterState | None:
        """The state behind a live invite of ``task`` holding ``token_hash``: None when there
        is no such invite, or it is revoked or expired, or the task is closed (all 403)."""
        from evalplat.store.rating import InviteInfo, task_info

        with self.session() as session:
            live = _live_invite(session, task, token_hash)
            if live is None:
                return None
            found, invite, test_set = live
            pair_ids = list(
                session.scalars(select(RatingPair.id).where(RatingPair.task_id == found.id))
            )
            view = None if pair_id is None else _pair_view(session, found, pair_id)
            return RaterState(
                task=task_info(found, test_set, len(pair_ids)),
                invite=InviteInfo(
                    found.name, invite.rater, invite.role, invite.csrf, invite.expires_at
                ),
                pair_ids=pair_ids,
                grades=grade_rows(session, found.id),
                view=view,
            )

    def rating_access(self, task: str, token_hash: str) -> tuple[RatingTaskInfo, InviteInfo] | None:
        """The task and the live invite holding ``token_hash``, in one query (no pairs, no
        grades): what a grade post needs; None as for :meth:`rating_state`, except that a task
        closing or closed is returned (the post is told so, not refused as a stranger)."""
        from evalplat.store.rating import InviteInfo, task_info

        with self.session() as session:
            live = _live_invite(session, task, token_hash, open_only=False)
        if live is None:
            return None
        found, invite, test_set = live
        return (
            task_info(found, test_set, 0),
            InviteInfo(found.name, invite.rater, invite.role, invite.csrf, invite.expires_at),
        )

    def rating_pair_view(self, task: str, pair_id: int) -> PairView:
        """The query text, the document (title, text, fields) and the fields the task's run
        stored with the hit, for one pair of the task."""
        with self.session() as session:
            found = session.scalar(select(RatingTask).where(RatingTask.name == task))
            if found is None:
                raise NotFoundError(f"no rating task named {task!r}")
            return _pair_view(session, found, pair_id)

    def rating_judge_grades(self, task: str, judge: str) -> dict[tuple[str, str], int]:
        """(query id, doc id) → the grade of ``llm:JUDGE`` in the test set's latest version,
        for the task's pairs that the judge graded."""
        from evalplat.db.models import Judgment, Rating

        with self.session() as session:
            found = session.scalar(select(RatingTask).where(RatingTask.name == task))
            if found is None:
                raise NotFoundError(f"no rating task named {task!r}")
            version_id = session.scalar(
                select(TestSetVersion.id)
                .where(TestSetVersion.test_set_id == found.test_set_id)
                .order_by(TestSetVersion.version.desc())
                .limit(1)
            )
            pairs = select(RatingPair.query_id, RatingPair.doc_id).where(
                RatingPair.task_id == found.id
            )
            wanted = {(str(q), str(d)) for q, d in session.execute(pairs)}
            grades: dict[tuple[str, str], int] = {}
            for table in (Judgment, Rating):
                for q, d, g in session.execute(
                    select(table.query_id, table.doc_id, table.grade).where(
                        table.test_set_version_id == version_id, table.source == f"llm:{judge}"
                    )
                ):
                    if (str(q), str(d)) in wanted:
                        grades[(str(q), str(d))] = int(g)
        return grades


def grade_rows(session: Session, task_id: int) -> list[GradeRow]:
    """Every grade of the task, by pair id and rater."""
    rows = session.execute(
        select(
            RatingGrade.pair_id,
            RatingPair.query_id,
            RatingPair.doc_id,
            RatingGrade.rater,
            RatingGrade.grade,
            RatingGrade.unsure,
            RatingGrade.note,
        )
        .join(RatingPair, RatingPair.id == RatingGrade.pair_id)
        .where(RatingPair.task_id == task_id)
        .order_by(RatingGrade.pair_id, RatingGrade.rater)
    )
    return [GradeRow(*row) for row in rows]


def pair_rows(session: Session, task_id: int) -> list[PairRow]:
    """Every pair of the task, by pair id."""
    rows = session.execute(
        select(
            RatingPair.id,
            RatingPair.query_id,
            RatingPair.doc_id,
            RatingPair.rank,
            RatingPair.settled_grade,
        )
        .where(RatingPair.task_id == task_id)
        .order_by(RatingPair.id)
    )
    return [PairRow(*row) for row in rows]


def _pair_view(session: Session, task: RatingTask, pair_id: int) -> PairView:
    pair = session.get(RatingPair, pair_id)
    if pair is None or pair.task_id != task.id:
        raise NotFoundError(f"pair {pair_id} is not in rating task {task.name!r}")
    version = session.scalar(
        select(TestSetVersion).where(
            TestSetVersion.test_set_id == task.test_set_id,
            TestSetVersion.version == task.base_version,
        )
    )
    query = None if version is None else session.get(Query, (version.id, pair.query_id))
    document = None
    if version is not None and version.corpus_id is not None:
        document = session.get(Document, (version.corpus_id, pair.doc_id))
    fields: dict[str, str] = {}
    if document is not None and document.fields:
        fields.update({str(k): _text(v) for k, v in document.fields.items()})
    fields.update({str(k): _text(v) for k, v in _hit_fields(session, task.run_id, pair).items()})
    title = document.title if document is not None else fields.pop("title", "")
    text = document.text if document is not None else fields.pop("text", "")
    return PairView(
        pair.id,
        pair.query_id,
        "" if query is None else query.text,
        pair.doc_id,
        pair.rank,
        title or "",
        text or "",
        fields,
    )


def _hit_fields(session: Session, run_id: int | None, pair: RatingPair) -> dict[str, Any]:
    """The fields the task's run stored with this hit (the ``http`` searcher's hit fields)."""
    if run_id is None:
        return {}
    fields = session.scalar(
        select(Result.fields).where(
            Result.run_id == run_id, Result.query_id == pair.query_id, Result.doc_id == pair.doc_id
        )
    )
    return fields if isinstance(fields, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _live_invite(
    session: Session, task: str, token_hash: str, *, open_only: bool = True
) -> tuple[RatingTask, RatingInvite, str] | None:
    """The task and its invite holding ``token_hash`` with the task's test set, in one query;
    None when there is no such invite, or it is revoked or expired, or (``open_only``) the task
    is not open."""
    row = session.execute(
        select(RatingTask, RatingInvite, TestSet.name)
        .join(RatingInvite, RatingInvite.task_id == RatingTask.id)
        .join(TestSet, TestSet.id == RatingTask.test_set_id)
        .where(RatingTask.name == task, RatingInvite.token_hash == token_hash)
    ).first()
    if row is None:
        return None
    found, invite, test_set = row
    if invite.revoked_at is not None or invite.expires_at <= utcnow():
        return None
    if open_only and found.status != "open":
        return None
    return found, invite, test_set
