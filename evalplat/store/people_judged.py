"""The one rule for "a person has graded this pair", read by every list of pairs to grade.

A judge's grades (source ``llm:<judge>``, :data:`evalplat.testsets.raters.MODEL_PREFIX`) are
kept beside people's, and are only read by a figure whose grades let them in. A pair only a
judge graded is still a pair for people to grade: ``evalplat unjudged``, ``rate task
--from-run`` and query health's judge-these list all offer it. People's grades are those of
any other source, and grades that named none.

Where a version keeps one grade per pair, the ``judgment`` row's ``source`` says whose it is.
Where it keeps several (``grade_rule`` set), ``judgment`` holds the resolved grade, whose
source is empty when sources were mixed: the ``rating`` rows then say who graded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import false, or_, select

from evalplat.db.models import Judgment, Rating, TestSetVersion
from evalplat.testsets.raters import MODEL_PREFIX

if TYPE_CHECKING:
    import pyarrow as pa
    from sqlalchemy import ColumnElement, SQLColumnExpression
    from sqlalchemy.orm import Session


def keeps_several(session: Session, version_id: int | None) -> bool:
    """Whether the version keeps every source's grade of a pair (``rating`` rows)."""
    version = None if version_id is None else session.get(TestSetVersion, version_id)
    return version is not None and version.grade_rule is not None


def people_judged(
    session: Session,
    version_id: int | None,
    query_id: SQLColumnExpression[str],
    doc_id: SQLColumnExpression[str],
) -> ColumnElement[bool]:
    """A condition true where a person graded (``query_id``, ``doc_id``) in the version: an
    ``EXISTS`` to correlate with the statement that selects those columns."""
    if version_id is None:
        return false()
    if keeps_several(session, version_id):
        return (
            select(Rating.doc_id)
            .where(
                Rating.test_set_version_id == version_id,
                Rating.query_id == query_id,
                Rating.doc_id == doc_id,
                ~Rating.source.startswith(MODEL_PREFIX, autoescape=True),
            )
            .exists()
        )
    return (
        select(Judgment.doc_id)
        .where(
            Judgment.test_set_version_id == version_id,
            Judgment.query_id == query_id,
            Judgment.doc_id == doc_id,
            or_(
                Judgment.source.is_(None),
                ~Judgment.source.startswith(MODEL_PREFIX, autoescape=True),
            ),
        )
        .exists()
    )


def people_rows(table: pa.Table) -> pa.Table:
    """The same rule on a one-grade version's judgments as Arrow (``query_id, doc_id, grade,
    source``, the version's copy): the rows people graded."""
    import pyarrow as pa
    import pyarrow.compute as pc

    source = table.column("source")
    if pa.types.is_null(source.type):  # no row named a source: all people's
        return table
    by_model = pc.fill_null(pc.starts_with(source, MODEL_PREFIX), False)
    return table.filter(pc.invert(by_model))
