"""What the rating pages show, gathered from the store into plain values: a rater's screen
for one pair, the task's progress and agreement, and the lead's disagreements.

A model judge's grade of a pair is part of a rater's screen only once that rater has graded
the pair: seen before, it would anchor the person's grade and the agreement measured between
them would mean nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.rating.tasks import (
    RaterAgreement,
    RaterProgress,
    agreement,
    assigned_pairs,
    disagreements,
    progress,
)
from evalplat.testsets.raters import weighted_kappa

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.rating import RatingTaskInfo
    from evalplat.store.rating_views import PairView, RaterState


@dataclass(frozen=True)
class Screen:
    pair: PairView
    position: int  # 1-based, in the rater's own order
    total: int
    graded: int
    prev_id: int | None
    next_id: int | None
    grade: int | None
    unsure: bool
    note: str
    judge_grade: int | None  # only once the rater graded this pair


@dataclass(frozen=True)
class JudgeAgreement:
    rater: str
    pairs: int
    kappa: float | None


@dataclass(frozen=True)
class Overview:
    pairs: int
    progress: list[RaterProgress]
    agreement: list[RaterAgreement]
    judge: list[JudgeAgreement]
    disagreements: int


@dataclass(frozen=True)
class Disagreement:
    pair: PairView
    grades: dict[str, int]
    settled: int | None


Given = dict[int, tuple[int | None, bool, str]]  # pair id -> (grade, unsure, note)


def _rater_state(state: RaterState) -> tuple[list[int], Given]:
    task, rater, grades = state.task, state.invite.rater, state.grades
    order = assigned_pairs(state.pair_ids, grades, rater, task.raters_per_pair)
    given = {g.pair_id: (g.grade, g.unsure, g.note or "") for g in grades if g.rater == rater}
    return order, given


def next_pair(state: RaterState) -> int | None:
    """The first pair on the rater's list they have not graded: where a reload resumes."""
    order, given = _rater_state(state)
    return next((p for p in order if p not in given), None)


def screen(store: Store, state: RaterState) -> Screen:
    """The screen of ``state``'s pair (``state.view``) for its rater."""
    from evalplat.errors import NotFoundError

    order, given = _rater_state(state)
    if state.view is None or state.view.pair_id not in order:
        raise NotFoundError("that pair is not on the rater's list")
    pair_id = state.view.pair_id
    at = order.index(pair_id)
    grade, unsure, note = given.get(pair_id, (None, False, ""))
    judged = judge_grade(store, state.task, pair_id) if pair_id in given else None
    return Screen(
        pair=state.view,
        position=at + 1,
        total=len(order),
        graded=sum(1 for p in order if p in given),
        prev_id=order[at - 1] if at > 0 else None,
        next_id=order[at + 1] if at + 1 < len(order) else None,
        grade=grade,
        unsure=unsure,
        note=note,
        judge_grade=judged,
    )


def judge_grade(store: Store, task: RatingTaskInfo, pair_id: int) -> int | None:
    """The task's judge's grade of the pair, if it has a judge and the judge graded it."""
    if task.judge is None:
        return None
    row = next((p for p in store.rating_pairs(task.name) if p.pair_id == pair_id), None)
    if row is None:
        return None
    return store.rating_judge_grades(task.name, task.judge).get((row.query_id, row.doc_id))


def task_overview(store: Store, task: RatingTaskInfo) -> Overview:
    pairs = store.rating_pairs(task.name)
    grades = store.rating_grades(task.name)
    pair_ids = [p.pair_id for p in pairs]
    judged: list[JudgeAgreement] = []
    if task.judge is not None:
        model = store.rating_judge_grades(task.name, task.judge)
        for rater in sorted({g.rater for g in grades if g.grade is not None}):
            both = [
                (g.grade, model[(g.query_id, g.doc_id)])
                for g in grades
                if g.rater == rater and g.grade is not None and (g.query_id, g.doc_id) in model
            ]
            kappa = weighted_kappa([a for a, _ in both], [b for _, b in both], task.scale)
            judged.append(JudgeAgreement(rater, len(both), kappa))
    return Overview(
        pairs=len(pair_ids),
        progress=progress(pair_ids, grades, store.rating_raters(task.name), task.raters_per_pair),
        agreement=agreement(grades, task.scale),
        judge=judged,
        disagreements=len(disagreements(grades)),
    )


def disagreement_rows(store: Store, task: RatingTaskInfo) -> list[Disagreement]:
    settled = {p.pair_id: p.settled_grade for p in store.rating_pairs(task.name)}
    found = disagreements(store.rating_grades(task.name))
    return [
        Disagreement(store.rating_pair_view(task.name, pair_id), grades, settled[pair_id])
        for pair_id, grades in sorted(found.items())
    ]


def render_markdown(text: str) -> str:
    """Guidelines as HTML: CommonMark with raw HTML disabled (shown as text), and links only
    to safe schemes (markdown-it's ``validateLink`` refuses ``javascript:`` and the like)."""
    from markdown_it import MarkdownIt

    html: str = MarkdownIt("commonmark", {"html": False}).render(text)
    return html
