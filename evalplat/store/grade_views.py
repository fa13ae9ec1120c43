"""People's grades and a judge's in the store: the two views of a comparison's grades.

The pure part is ``evalplat.comparison.model_views``; here both runs are scored again from their
stored ranked results on each view of the version's grades (every rater's grade when the version
has several per pair), and the comparison is computed on each view and merged. A gate that
lets a judge in is checked against the judge's latest calibration first
(``evalplat.store.judge_grades``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select

from evalplat.comparison.verdicts import CompareOptions, ComparisonResult, Gate, compare_scores
from evalplat.db.bulk import read_frame
from evalplat.db.evaluations import Evaluation
from evalplat.db.models import Query, Rating, TestSetVersion
from evalplat.errors import NotFoundError
from evalplat.store.judge_grades import JudgeGradesMixin
from evalplat.store.runs import RunsMixin

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.guard import BoundScores
    from evalplat.comparison.model_views import GradeViews
    from evalplat.comparison.paired_latency import PairedTimings
    from evalplat.comparison.results import OverlapSummary
    from evalplat.metrics.registry import Metric


class GradeViewsMixin(RunsMixin, JudgeGradesMixin):
    def _grade_views(
        self,
        evaluation_ids: tuple[int, int],
        results: tuple[pd.DataFrame, pd.DataFrame],
        scores: tuple[pd.DataFrame, pd.DataFrame],
        judge: str | None,
    ) -> GradeViews | None:
        """Both views of the grades (``evalplat.comparison.model_views``) when the version holds
        a judge's grades or a gate lets one in; None otherwise (the stored scores are the
        people's). A version holding one judge's grades shows its view even when no gate
        lets it decide. The people's view is the stored scores (``evalplat.store.run_figures``),
        scored again only for evaluations stored before they were scored on people's grades."""
        from evalplat.comparison.model_views import build_views, model_sources
        from evalplat.store.run_figures import on_people_grades

        with self.session() as session:
            evaluation = session.get(Evaluation, evaluation_ids[0])
            if evaluation is None:
                raise NotFoundError(f"no evaluation {evaluation_ids[0]}")
            stored_people = all(
                on_people_grades(session.get(Evaluation, e)) for e in evaluation_ids
            )
            version = session.get(TestSetVersion, evaluation.test_set_version_id)
            if version is None:
                raise NotFoundError(f"no test set version {evaluation.test_set_version_id}")
            rule = version.grade_rule
            if rule is None:
                grades = self._judgments(session, version)
            else:
                grades = read_frame(
                    session,
                    select(Rating.query_id, Rating.doc_id, Rating.grade, Rating.source).where(
                        Rating.test_set_version_id == version.id
                    ),
                    ["query_id", "doc_id", "grade", "source"],
                    {"query_id": "str", "doc_id": "str", "grade": "int64"},
                )
            topics = list(
                session.scalars(
                    select(Query.query_id).where(Query.test_set_version_id == version.id)
                )
            )
        judges = model_sources(grades)
        if judge is None and not judges:
            return None
        if judge is None and len(judges) == 1:
            judge = judges.pop()  # shown beside the people's view; no gate lets it decide
        names = list(dict.fromkeys(scores[0]["metric"]))
        return build_views(
            grades, rule, results, scores, topics, names, judge, people_scored=stored_people
        )

    def _compare_views(
        self,
        views: GradeViews | None,
        stored: tuple[pd.DataFrame, pd.DataFrame],
        metrics: Sequence[str | Metric] | None,
        gates: Sequence[Gate] | None,
        options: CompareOptions,
        overlap: OverlapSummary | None,
        bound: BoundScores | None,
        weights: dict[str, float] | None,
        tags: dict[str, list[str]] | None,
        timings: PairedTimings | None = None,
    ) -> ComparisonResult:
        """The comparison on the stored scores, or on each view of the grades, merged."""
        from evalplat.comparison.model_views import merge_views

        def on(
            scores: tuple[pd.DataFrame, pd.DataFrame], limit: BoundScores | None
        ) -> ComparisonResult:
            return compare_scores(*scores, metrics, gates, options, overlap=overlap, bound=limit,
                                  weights=weights, tags=tags, timings=timings)  # fmt: skip

        if views is None:
            return on(stored, bound)
        human = on(views.human, views.human_bound)
        model = None if views.model is None else on(views.model, views.model_bound)
        return merge_views(human, model, views)
