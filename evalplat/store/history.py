"""History and unjudged documents in the store: how a config's runs went over time, and which
top-ranked documents of a run nobody has judged yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.db.bulk import read_frame
from evalplat.db.evaluations import (
    Comparison,
    ComparisonMetric,
    ComparisonSegment,
    Evaluation,
    QueryScore,
)
from evalplat.db.models import Config, ConfigVersion, Query, Result, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.inputs.validation import DEPTH_MAX, check_number
from evalplat.store.base import StoreBase
from evalplat.store.baseline_rows import baseline_rows
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.run_figures import run_figures
from evalplat.store.run_rows import resolve_run, run_infos

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.metrics.registry import Metric


@dataclass(frozen=True)
class HistoryPoint:
    """One run of a config: its means and, when stored, the verdict of the comparison that
    gated it (else of its latest comparison with the config's baseline).

    ``means`` are the scores against the judgments the run was searched with (test set version
    ``judgment_version``), as recorded that night, on people's grades
    (``evalplat.store.run_figures``, ``searched``): a later ``rescore`` adds scores on other
    versions but does not move a run's point. History connects only points with the same
    ``judgment_version`` and marks where it changes."""

    run_id: int
    status: str
    config_version: int
    label: str | None
    test_set: str
    test_set_version: int
    started_at: datetime
    means: dict[str, float]
    is_baseline: bool
    verdict: str | None
    comparison_id: int | None
    judgment_version: int | None = None
    evaluation_id: int | None = None  # the evaluation ``means`` come from (not in the JSON)
    # what ``means`` were scored on (``evalplat.store.run_figures``): ``topics@3, people's grades``
    scored_on: str | None = None
    grades: str | None = None  # the grades alone: ``people's grades``

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("evaluation_id")
        data["started_at"] = self.started_at.isoformat()
        return data


class HistoryMixin(StoreBase):
    """A config's runs over time, and the unjudged documents of a run."""

    def history(self, config: str, test_set: str | None = None) -> list[HistoryPoint]:
        """Every finished run of ``config`` (on ``test_set`` when given), oldest first, with its
        means and the verdict of the comparison that gated it (``_verdict_against``)."""
        with self.session() as session:
            config_id = session.scalar(select(Config.id).where(Config.name == config))
            if config_id is None:
                raise NotFoundError(f"no config named '{config}'")
            query = (
                select(Run, ConfigVersion.version, ConfigVersion.label, TestSet.name)
                .add_columns(TestSetVersion.version, TestSet.id)
                .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .where(ConfigVersion.config_id == config_id, Run.status != "running")
                .order_by(Run.started_at, Run.id)
            )
            if test_set is not None:
                query = query.where(TestSet.name == test_set)
            rows = session.execute(query).all()
            baselines = {b.test_set_id: b.run_id for b in baseline_rows(session, config_id)}
            infos = {info.id: info for info in run_infos(session, [r[0] for r in rows])}
            figures = run_figures(session, [r[0].id for r in rows], "searched")
            points = []
            for run, version, label, ts_name, ts_version, ts_id in rows:
                verdict, comparison_id = _verdict_against(session, baselines.get(ts_id), run.id)
                figure = figures.get(run.id)
                evaluation_id = None if figure is None else figure.evaluation_id
                if verdict is None and evaluation_id is not None:
                    verdict = _gated_preference(session, run, evaluation_id)
                points.append(
                    HistoryPoint(
                        run_id=run.id,
                        status=run.status,
                        config_version=version,
                        label=label,
                        test_set=ts_name,
                        test_set_version=ts_version,
                        started_at=infos[run.id].started_at,
                        means={} if figure is None else dict(figure.means),
                        is_baseline=baselines.get(ts_id) == run.id,
                        verdict=verdict,
                        comparison_id=comparison_id,
                        judgment_version=None if figure is None else figure.judgment_version,
                        evaluation_id=evaluation_id,
                        scored_on=None if figure is None else figure.scored_on,
                        grades=None if figure is None else figure.grades_text,
                    )
                )
            return points

    def verdict_metrics(self, comparison_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """Per stored comparison, the gated metrics its overall verdict comes from: those whose
        own verdict is the comparison's (``AP``, or ``nDCG@10 [segment tail]`` for a segment, as
        its alert is keyed), metrics before segments; none for an ``unchanged`` comparison or
        one without a gated metric."""
        wanted = sorted(set(comparison_ids))
        found: dict[int, list[str]] = {}
        with self.session() as session:
            for i in range(0, len(wanted), 500):
                ids = wanted[i : i + 500]
                overall = select(Comparison.id, Comparison.verdict).where(Comparison.id.in_(ids))
                verdicts = {c: str(v) for c, v in session.execute(overall)}
                rows = session.execute(
                    select(ComparisonMetric.comparison_id, ComparisonMetric.metric,
                           ComparisonMetric.verdict)
                    .where(ComparisonMetric.comparison_id.in_(ids), ComparisonMetric.gated)
                    .order_by(ComparisonMetric.metric)
                ).all()  # fmt: skip
                segments = session.execute(
                    select(ComparisonSegment.comparison_id, ComparisonSegment.metric,
                           ComparisonSegment.verdict, ComparisonSegment.segment)
                    .where(ComparisonSegment.comparison_id.in_(ids), ComparisonSegment.gated)
                    .order_by(ComparisonSegment.metric, ComparisonSegment.segment)
                ).all()  # fmt: skip
                named = [(c, m, v) for c, m, v in rows]
                named += [(c, f"{m} [segment {s}]", v) for c, m, v, s in segments]
                for comparison_id, metric, verdict in named:
                    if verdict == verdicts[comparison_id] != "unchanged":
                        found.setdefault(comparison_id, []).append(str(metric))
        return {c: tuple(metrics) for c, metrics in found.items()}

    def history_segments(
        self, points: Sequence[HistoryPoint], metric: str | Metric
    ) -> tuple[pd.DataFrame, list[str]]:
        """``metric`` per segment for each run of ``points`` (``history``'s), from the per-query
        scores its means come from and the tags and weights of that evaluation's test set
        version (``evalplat.comparison.segment_history``): a frame ``run_id, segment, value,
        queries``, and every tag the runs' queries carry, sorted."""
        import pandas as pd

        from evalplat.comparison.segment_history import SEGMENT_COLUMNS, segment_values
        from evalplat.metrics.names import parse

        measure = parse(str(metric))
        evaluations = [p.evaluation_id for p in points if p.evaluation_id is not None]
        if not evaluations:
            return pd.DataFrame({name: [] for name in SEGMENT_COLUMNS}), []
        with self.session() as session:
            versions = session.execute(
                select(Evaluation.run_id, Evaluation.test_set_version_id).where(
                    Evaluation.id.in_(evaluations)
                )
            ).all()
            version_ids = sorted({version for _, version in versions})
            tagged = session.execute(
                select(Query.test_set_version_id, Query.query_id, Query.weight, Query.tags).where(
                    Query.test_set_version_id.in_(version_ids)
                )
            ).all()
            # one columnar read for every run (in groups of 500, under any driver's cap on
            # parameters): a read's fixed cost is most of a small one's, and a history page
            # reads every night of its window; ``segment_values`` keeps its own row order
            scores = pd.concat(
                [
                    read_frame(
                        session,
                        select(Evaluation.run_id, QueryScore.query_id, QueryScore.value)
                        .join(Evaluation, QueryScore.evaluation_id == Evaluation.id)
                        .where(QueryScore.evaluation_id.in_(evaluations[i : i + 500]))
                        .where(QueryScore.metric == str(measure)),
                        ["run_id", "query_id", "value"],
                        {"run_id": "int64", "query_id": "str", "value": "float64"},
                    )
                    for i in range(0, len(evaluations), 500)
                ],
                ignore_index=True,
            )
        queries = pd.DataFrame(
            [tuple(row) for row in tagged if row[3]],
            columns=["version_id", "query_id", "weight", "tags"],
        )
        runs = pd.DataFrame([tuple(row) for row in versions], columns=["run_id", "version_id"])
        queries = runs.merge(queries, on="version_id")
        known = sorted({str(tag) for tags in queries["tags"] for tag in tags})
        return segment_values(scores, queries, measure), known

    def unjudged(self, run_ref: str | int, k: int = 10) -> pd.DataFrame:
        """Documents in the top ``k`` of a run that no person graded in the test set version
        it was scored against (a judge's grade alone leaves a pair to grade,
        :mod:`evalplat.store.people_judged`): ``query_id, query, doc_id, rank, title, text``,
        by query then rank; ``title`` and ``text`` (its first 200 characters) so annotators
        can grade them (:mod:`evalplat.store.annotation_texts`)."""
        import pandas as pd

        from evalplat.store.annotation_texts import corpus_of, fill_from_hits, with_document_columns
        from evalplat.store.events import ONLINE_TRIGGER
        from evalplat.store.people_judged import people_judged

        check_number(k, "--k", minimum=1, maximum=DEPTH_MAX)
        with self.session() as session:
            run_id = resolve_run(session, run_ref)
            run = session.get(Run, run_id)
            if run is not None and run.results_pruned_at is not None:
                raise InputError(f"run {run_id}: its results were pruned by the retention policy")
            if run is not None and run.trigger == ONLINE_TRIGGER:
                raise InputError(f"run {run_id} is an online run: its units are sessions of a "
                                 "log, with no results to judge")  # fmt: skip
            evaluation_id = latest_evaluations(session, [run_id]).get(run_id)
            version_id = run.test_set_version_id if run is not None else None
            if evaluation_id is not None:
                evaluation = session.get(Evaluation, evaluation_id)
                version_id = evaluation.test_set_version_id if evaluation else version_id
            judged = people_judged(session, version_id, Result.query_id, Result.doc_id)
            statement = select(Result.query_id, Query.text, Result.doc_id, Result.rank).outerjoin(
                Query,
                (Query.test_set_version_id == version_id) & (Query.query_id == Result.query_id),
            )
            rows = session.execute(
                with_document_columns(statement, corpus_of(session, version_id))
                .where(Result.run_id == run_id, Result.rank <= k, ~judged)
                .order_by(Result.query_id, Result.rank)
            ).all()
            frame = pd.DataFrame(
                [tuple(r) for r in rows],
                columns=["query_id", "query", "doc_id", "rank", "title", "text"],
            )
            frame["query"] = frame["query"].fillna("")
            frame = fill_from_hits(session, frame, [run_id], k, None)
        return frame


def _verdict_against(
    session: Session, baseline_run: int | None, run_id: int
) -> tuple[str | None, int | None]:
    """Verdict and id of the comparison that speaks for ``run_id``.

    First the latest comparison a night gated the run with (stored with ``gating``): against
    what its config is gated against, its own baseline or its ``compare_to`` config's, so the
    verdict is the one its alerts came from. Else the latest stored comparison with
    ``baseline_run``; else the latest comparison that has ``run_id`` as its candidate at all
    (a manual ``compare`` against another config's baseline still shows and links).
    """
    cand_eval = select(Evaluation.id).where(Evaluation.run_id == run_id)
    latest = (
        select(Comparison.verdict, Comparison.id)
        .where(Comparison.candidate_evaluation_id.in_(cand_eval))
        .order_by(Comparison.id.desc())
    )
    for verdict, comparison_id, options in session.execute(latest.add_columns(Comparison.options)):
        if isinstance(options, dict) and options.get("gating"):
            return verdict, comparison_id
    if baseline_run is not None:
        base_eval = select(Evaluation.id).where(Evaluation.run_id == baseline_run)
        row = session.execute(
            latest.where(Comparison.baseline_evaluation_id.in_(base_eval)).limit(1)
        ).first()
        if row is not None:
            return row[0], row[1]
    row = session.execute(latest.limit(1)).first()
    return (None, None) if row is None else (row[0], row[1])


def _gated_preference(session: Session, run: Run, evaluation_id: int) -> str | None:
    """The verdict a night's gate gave an interleaved experiment's day (it has no comparison:
    ``evalplat.store.interleaving``), None for any other run."""
    if ((run.options or {}).get("online") or {}).get("window") != "interleaved":
        return None
    evaluation = session.get(Evaluation, evaluation_id)
    figures = (evaluation.options or {}).get("preference") if evaluation is not None else None
    verdict = figures.get("verdict") if isinstance(figures, dict) else None
    return verdict if isinstance(verdict, str) else None
