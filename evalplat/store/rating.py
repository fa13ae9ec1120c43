"""Rating tasks in the store: tasks, invites, and each rater's grades, written as given.

A grade is one row per (pair, rater), replaced when the rater grades the pair again, and
committed before the answer goes back to the browser: a closed tab or a killed server loses
nothing. How tasks are made, ordered and closed is ``evalplat.rating``; tables are
``evalplat.db.rating``.

**Concurrent posts.** A grade's transaction holds the task's row shared and the pair's row
exclusively (``SELECT ... FOR SHARE`` / ``FOR UPDATE`` on PostgreSQL; on SQLite every writer
holds the database from its first statement, ``BEGIN IMMEDIATE``). Two posts of one pair
therefore run one after the other: the second sees the first's row, so the task's raters per
pair and one grade per rater and pair hold, and a post the pair has no room for is refused
(``RatingConflictError``, answered 409) instead of failing on the unique key. Closing takes
the task's row exclusively, so it waits for the grades in flight and every later post finds
the task closing (:meth:`RatingMixin.take_rating_grades`): a grade answered "saved" is in the
version the task closes into.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import func, select, update

from evalplat.db.models import Query, TestSet
from evalplat.db.rating import (
    RatingGrade,
    RatingGuidelines,
    RatingInvite,
    RatingPair,
    RatingTask,
)
from evalplat.errors import InputError, NotFoundError
from evalplat.metrics.numbers import counted
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.testsets import resolve_test_set_version

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd
    from sqlalchemy.orm import Session

    from evalplat.store.rating_views import GradeRow, PairRow

T = TypeVar("T")


class RatingConflictError(InputError):
    """A grade or a settlement the task cannot take now: the task is closing or closed, or the
    pair already has its raters. The rating app answers 409 with the message."""


@dataclass(frozen=True)
class RatingTaskInfo:
    id: int
    name: str
    test_set: str
    base_version: int
    run_id: int | None
    scale: tuple[int, int]
    raters_per_pair: int
    show_rank: bool
    grade_rule: str
    judge: str | None
    status: str
    pairs: int
    closed_version: int | None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "scale": list(self.scale)}


@dataclass(frozen=True)
class InviteInfo:
    task: str
    rater: str
    role: str
    csrf: str
    expires_at: datetime


class RatingMixin(StoreBase):
    def create_rating_task(
        self,
        name: str,
        test_set: str,
        pairs: pd.DataFrame,
        *,
        run_id: int | None,
        scale: tuple[int, int],
        raters_per_pair: int,
        show_rank: bool,
        grade_rule: str,
        judge: str | None,
        guidelines: str | None,
    ) -> RatingTaskInfo:
        """A new open task over ``pairs`` (``query_id, doc_id, rank``) of the latest version
        of ``test_set``; ``guidelines`` (Markdown) replace the test set's, when given."""
        with self.session(write=True) as session:
            if session.scalar(select(RatingTask.id).where(RatingTask.name == name)) is not None:
                raise InputError(f"a rating task named {name!r} already exists")
            owner, version = resolve_test_set_version(session, test_set)
            known = set(
                session.scalars(
                    select(Query.query_id).where(Query.test_set_version_id == version.id)
                )
            )
            strangers = sorted(set(pairs["query_id"].astype(str)) - known)
            if strangers:
                raise InputError(
                    f"query {strangers[0]!r} is not in {owner.name}@{version.version}: a task "
                    "grades documents of the test set's own queries"
                )
            task = RatingTask(
                name=name,
                test_set_id=owner.id,
                base_version=version.version,
                run_id=run_id,
                scale_low=scale[0],
                scale_high=scale[1],
                raters_per_pair=raters_per_pair,
                show_rank=show_rank,
                grade_rule=grade_rule,
                judge=judge,
                status="open",
                created_at=utcnow(),
            )
            session.add(task)
            session.flush()
            session.add_all(
                RatingPair(
                    task_id=task.id,
                    query_id=str(q),
                    doc_id=str(d),
                    rank=None if r is None or r != r else int(r),
                )
                for q, d, r in zip(pairs["query_id"], pairs["doc_id"], pairs["rank"], strict=True)
            )
            if guidelines is not None:
                session.merge(
                    RatingGuidelines(test_set_id=owner.id, markdown=guidelines, updated_at=utcnow())
                )
            session.flush()
            return _task_info(session, task)

    def rating_task(self, name: str) -> RatingTaskInfo:
        with self.session() as session:
            return _task_info(session, _task(session, name))

    def rating_tasks(self) -> list[RatingTaskInfo]:
        with self.session() as session:
            tasks = session.scalars(select(RatingTask).order_by(RatingTask.id)).all()
            return [_task_info(session, t) for t in tasks]

    def rating_guidelines(self, task: str) -> str:
        """The Markdown guidelines of the task's test set ("" when it has none)."""
        with self.session() as session:
            row = session.get(RatingGuidelines, _task(session, task).test_set_id)
            return "" if row is None else row.markdown

    def add_rating_invite(
        self, task: str, rater: str, role: str, token_hash: str, csrf: str, expires_at: datetime
    ) -> None:
        with self.session(write=True) as session:
            row = _task(session, task)
            if row.status != "open":
                raise InputError(f"rating task {task!r} is closed: nobody can be invited")
            session.add(
                RatingInvite(
                    task_id=row.id,
                    rater=rater,
                    role=role,
                    token_hash=token_hash,
                    csrf=csrf,
                    created_at=utcnow(),
                    expires_at=expires_at,
                )
            )

    def revoke_rating_invites(self, task: str, rater: str) -> int:
        """Revoke every live invite of ``rater`` to ``task``; how many were live."""
        with self.session(write=True) as session:
            task_id = _task(session, task).id
            result = session.execute(
                update(RatingInvite)
                .where(
                    RatingInvite.task_id == task_id,
                    RatingInvite.rater == rater,
                    RatingInvite.revoked_at.is_(None),
                )
                .values(revoked_at=utcnow())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def rating_invite(self, token_hash: str) -> InviteInfo | None:
        """The invite holding this token hash, if it is live: not revoked, not expired, and
        its task still open. None for anything else (the caller answers 403)."""
        with self.session() as session:
            row = session.execute(
                select(RatingInvite, RatingTask.name, RatingTask.status)
                .join(RatingTask, RatingTask.id == RatingInvite.task_id)
                .where(RatingInvite.token_hash == token_hash)
            ).first()
        if row is None:
            return None
        invite, task, status = row
        if invite.revoked_at is not None or invite.expires_at <= utcnow() or status != "open":
            return None
        return InviteInfo(task, invite.rater, invite.role, invite.csrf, invite.expires_at)

    def rating_pairs(self, task: str) -> list[PairRow]:
        """The task's pairs, by pair id."""
        from evalplat.store.rating_views import pair_rows

        with self.session() as session:
            return pair_rows(session, _task(session, task).id)

    def rating_grades(self, task: str) -> list[GradeRow]:
        """Every grade given in the task, by pair id and rater."""
        from evalplat.store.rating_views import grade_rows

        with self.session() as session:
            return grade_rows(session, _task(session, task).id)

    def record_rating_grade(
        self, task: str, pair_id: int, rater: str, grade: int | None, unsure: bool, note: str | None
    ) -> None:
        """Store ``rater``'s grade of the pair (replacing theirs), committed on return; a task
        not open, or a pair with its raters, raises ``RatingConflictError`` (module doc)."""
        with self.session(write=True) as session:
            row = _open_task(session, task)
            pair = _locked_pair(session, row, task, pair_id)
            existing = session.scalar(
                select(RatingGrade).where(
                    RatingGrade.pair_id == pair_id, RatingGrade.rater == rater
                )
            )
            if existing is None and _raters_of(session, pair.id) >= row.raters_per_pair:
                raters = counted(row.raters_per_pair, "rater")
                raise RatingConflictError(
                    f"pair {pair_id} already has its {raters}: go on to the next pair"
                )
            if existing is None:
                existing = RatingGrade(pair_id=pair_id, rater=rater)
                session.add(existing)
            existing.grade, existing.unsure, existing.note = grade, unsure, note
            existing.graded_at = utcnow()

    def settle_rating_pair(self, task: str, pair_id: int, grade: int, lead: str) -> None:
        """The lead's final grade of a pair the raters disagree on."""
        with self.session(write=True) as session:
            pair = _locked_pair(session, _open_task(session, task), task, pair_id)
            pair.settled_grade, pair.settled_by = grade, lead

    def take_rating_grades(
        self, task: str, judgments: Callable[[list[PairRow], list[GradeRow], dict[int, str]], T]
    ) -> T:
        """Begin closing ``task``: in one transaction holding the task's row, read its pairs,
        grades and settlers, give them to ``judgments`` (which may refuse them by raising), and
        mark the task ``closing``, so that no grade is taken after the ones read; its result is
        returned. A task left ``closing`` by a failure is read again the same way; a closed one
        is refused."""
        from evalplat.store.rating_views import grade_rows, pair_rows

        with self.session(write=True) as session:
            row = _task(session, task, lock=True)
            if row.status == "closed":
                raise InputError(
                    f"rating task {task!r} is already closed (version {row.closed_version})"
                )
            pairs = pair_rows(session, row.id)
            grades = grade_rows(session, row.id)
            result = judgments(pairs, grades, _settlers(session, row.id))
            row.status = "closing"
            return result

    def rating_raters(self, task: str) -> list[str]:
        """Every name invited to the task as a rater (revoked or not)."""
        with self.session() as session:
            task_id = _task(session, task).id
            names = session.scalars(
                select(RatingInvite.rater)
                .where(RatingInvite.task_id == task_id, RatingInvite.role == "rater")
                .distinct()
            ).all()
        return sorted(names)

    def mark_rating_task_closed(self, task: str, version: int) -> None:
        with self.session(write=True) as session:
            row = _task(session, task, lock=True)
            row.status, row.closed_at, row.closed_version = "closed", utcnow(), version


def _task(session: Session, name: str, *, lock: bool = False, share: bool = False) -> RatingTask:
    """The task named ``name``; with ``lock`` its row held until the transaction ends (with
    ``share``, shared with other sharers: the grades posted at once)."""
    query = select(RatingTask).where(RatingTask.name == name)
    if lock or share:
        query = query.with_for_update(read=share).execution_options(populate_existing=True)
    task = session.scalar(query)
    if task is None:
        raise NotFoundError(f"no rating task named {name!r}")
    return task


def _open_task(session: Session, name: str) -> RatingTask:
    """The task, held shared until the transaction ends (closing waits for it); a task that
    is closing or closed raises ``RatingConflictError``."""
    task = _task(session, name, share=True)
    if task.status != "open":
        raise RatingConflictError(f"rating task {name!r} is {task.status}: it takes no more grades")
    return task


def _locked_pair(session: Session, task: RatingTask, name: str, pair_id: int) -> RatingPair:
    """The task's pair ``pair_id``, its row held until the transaction ends."""
    pair = session.scalar(
        select(RatingPair)
        .where(RatingPair.id == pair_id, RatingPair.task_id == task.id)
        .with_for_update()
    )
    if pair is None:
        raise NotFoundError(f"pair {pair_id} is not in rating task {name!r}")
    return pair


def _raters_of(session: Session, pair_id: int) -> int:
    total = session.scalar(
        select(func.count()).select_from(RatingGrade).where(RatingGrade.pair_id == pair_id)
    )
    return int(total or 0)


def _settlers(session: Session, task_id: int) -> dict[int, str]:
    rows = session.execute(
        select(RatingPair.id, RatingPair.settled_by).where(
            RatingPair.task_id == task_id, RatingPair.settled_by.is_not(None)
        )
    ).all()
    return {int(p): str(lead) for p, lead in rows}


def _task_info(session: Session, task: RatingTask) -> RatingTaskInfo:
    test_set = session.get(TestSet, task.test_set_id)
    pairs = session.scalar(
        select(func.count()).select_from(RatingPair).where(RatingPair.task_id == task.id)
    )
    return task_info(task, "" if test_set is None else test_set.name, int(pairs or 0))


def task_info(task: RatingTask, test_set: str, pairs: int) -> RatingTaskInfo:
    return RatingTaskInfo(
        id=task.id,
        name=task.name,
        test_set=test_set,
        base_version=task.base_version,
        run_id=task.run_id,
        scale=(task.scale_low, task.scale_high),
        raters_per_pair=task.raters_per_pair,
        show_rank=task.show_rank,
        grade_rule=task.grade_rule,
        judge=task.judge,
        status=task.status,
        pairs=pairs,
        closed_version=task.closed_version,
    )
