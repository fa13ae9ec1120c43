"""Comparisons in the store: compare two stored runs, keep the result, load it back.

Rules kept here (the pure computation is ``evalplat.comparison.verdicts.compare_scores``):

- Two runs are compared on evaluations against the **same test set version**: the candidate's
  latest one and the baseline's scores on that version (kept from an earlier ``rescore``), or
  else the baseline's latest and the candidate's scores on that one. Without a common version
  the comparison is refused with the ``rescore`` command that fixes it.
- Runs that are not ``complete`` are refused (``OperationalError``, exit 3) unless
  ``allow_partial``; a ``running`` run is always refused.
- Every comparison is stored (``comparison`` + one ``comparison_metric`` row per metric) with
  the options and gates that reproduce it; per-query deltas and movers are recomputed from the
  stored per-query scores when it is loaded back.
- The optimistic bound (``evalplat.comparison.guard``) is scored here from both runs' ranked results
  and the version's judgments; its figures are kept in the comparison's options (``bounds``).
  Runs whose results were pruned have no bound: their gates use the Judged@k rule.
- A version holding a judge's grades is compared on people's grades and, beside them, with the
  judge's (``evalplat.store.grade_views``); gates choose which decides.
- A ``CONFIG@baseline`` reference names the config's baseline, pinned or computed (see
  ``evalplat.store.baselines``); history and unjudged documents live in
  ``evalplat.store.history``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.comparison.changes import Changes
from evalplat.comparison.verdicts import (
    BOUND_FIELDS,
    CompareOptions,
    ComparisonResult,
    Gate,
    MetricComparison,
    compare_scores,
)
from evalplat.db.evaluations import Comparison, ComparisonMetric, Evaluation
from evalplat.db.models import Config, ConfigVersion, Query, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import utcnow
from evalplat.store.baselines import BaselineInfo
from evalplat.store.changes import run_changes
from evalplat.store.comparable import (
    check_comparable,
    check_same_version,
    check_scored,
    matching_evaluations,
    version_name,
)
from evalplat.store.comparison_record import record_comparison
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.events import ONLINE_TRIGGER
from evalplat.store.grade_views import GradeViewsMixin
from evalplat.store.history import HistoryPoint
from evalplat.store.paired_timings import PairedTimingsMixin
from evalplat.store.run_facts import read_facts, stored_facts
from evalplat.store.run_reads import scores_of
from evalplat.store.run_rows import resolve_run
from evalplat.store.segments import load_segments, query_facts

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.coded import JudgedIds
    from evalplat.metrics.registry import Metric

__all__ = ["BaselineInfo", "ComparisonsMixin", "HistoryPoint", "StoredComparison"]


@dataclass(frozen=True)
class StoredComparison:
    """What replaying a stored comparison needs: its runs, test set version, metrics and the
    options and gates it was decided with (``Store.recent_comparisons``)."""

    id: int
    run_ids: tuple[int, int]
    baseline: str
    candidate: str
    test_set: str  # NAME@VER of the version both runs were scored on
    metrics: list[str]
    options: dict[str, Any]
    has_results: bool  # both runs' ranked results are stored (not pruned, not online)


class ComparisonsMixin(GradeViewsMixin, PairedTimingsMixin):
    # ── comparing ────────────────────────────────────────────────────────────────────────────

    def mean_deltas(
        self, baseline_ref: str | int, candidate_ref: str | int, *, metrics: Sequence[str]
    ) -> dict[str, float]:
        """Each metric's change of mean from one stored run to another, as ``compare_runs``
        would report its delta, checked as it checks them, but nothing tested or stored
        (``evalplat.comparison.deltas``): what a night logs since its previous night."""
        from evalplat.comparison.deltas import mean_deltas

        with self.session() as session:
            ids = [resolve_run(session, ref) for ref in (baseline_ref, candidate_ref)]
            evaluations = latest_evaluations(session, ids)
            for run_id in ids:
                run = session.get(Run, run_id)
                if run is not None:
                    check_comparable(session, run, evaluations.get(run_id), CompareOptions())
            eval_a, eval_b = matching_evaluations(session, ids, evaluations)
            check_same_version(session, ids, eval_a, eval_b)
            test_set = version_name(session, eval_a)
            weights, _ = query_facts(session, eval_a)
        scores = self._scores(eval_a), self._scores(eval_b)
        check_scored(scores, ids, test_set, metrics, None)
        return mean_deltas(*scores, metrics, weights)

    def compare_runs(
        self,
        baseline_ref: str | int,
        candidate_ref: str | int,
        *,
        metrics: Sequence[str | Metric] | None = None,
        gates: Sequence[Gate] | None = None,
        options: CompareOptions | None = None,
        overlap_k: int = 10,
        gating: bool = False,
        record: bool = True,
    ) -> ComparisonResult:
        """Compare two stored runs, store the comparison, and return it (with its ``id``);
        ``record=False`` returns it unstored (no ``id``), as the leaderboard asks for verdicts.

        ``gating`` marks the comparison a night gated the candidate with (against what its
        config is gated against: its own or its ``compare_to`` config's baseline); the report
        site shows that verdict for the run (``evalplat.store.history``)."""
        from evalplat.comparison.coded import code_pair
        from evalplat.comparison.guard import optimistic_bound
        from evalplat.comparison.model_views import gate_judge
        from evalplat.comparison.overlap import rank_overlap

        options = options or CompareOptions()
        judge = gate_judge(gates)
        refusal = None if judge is None else self.judge_gating(judge)
        if refusal is not None:
            raise InputError(f"gates with unjudged = judge or grade cannot use it: {refusal}")
        with self.session() as session:
            ids = [resolve_run(session, ref) for ref in (baseline_ref, candidate_ref)]
            runs = [session.get(Run, run_id) for run_id in ids]
            evaluations = latest_evaluations(session, ids)
            for run in runs:
                if run is not None:
                    check_comparable(session, run, evaluations.get(run.id), options)
            eval_a, eval_b = matching_evaluations(session, ids, evaluations)
            check_same_version(session, ids, eval_a, eval_b)
            labels = [_label(session, run_id) for run_id in ids]
            days = _online_days(session, ids)
            searches = _online_searches(session, ids)
            test_set = version_name(session, eval_a)
            changes = run_changes(session, ids[0], ids[1])
            pruned = any(run is not None and run.results_pruned_at for run in runs)
            # online runs (evalplat.store.events) have sessions, not ranked results
            online = any(run is not None and run.trigger == "online" for run in runs)
            pruned = pruned or online
            weights, tags = query_facts(session, eval_a)
        scores_a, scores_b = self._scores(eval_a), self._scores(eval_b)
        if not online:  # sessions' measures are checked where they are scored
            check_scored((scores_a, scores_b), ids, test_set, metrics, gates)
        overlap = None
        bound = None
        views = None
        if judge is not None and pruned:
            raise InputError(
                f"the ranked results of run {ids[0]} or {ids[1]} were pruned: model grades "
                "cannot be told from people's grades without them (gates with unjudged = "
                "judge or grade)"
            )
        if not pruned:
            results_a, results_b = self.load_results(ids[0]), self.load_results(ids[1])
            views = self._grade_views(
                (eval_a, eval_b), (results_a, results_b), (scores_a, scores_b), judge
            )
            if views is None:
                # the text ids coded once, for the overlap and the optimistic bound
                judgments, topics, version_key = self._judged_topics(eval_a)
                judged = self._judged_ids(version_key, judgments)
                coded = code_pair(judged, results_a, results_b, topics)
                overlap, _ = rank_overlap(results_a, results_b, k=overlap_k, coded=coded)
                bounded = _bounded(scores_a, metrics, gates)
                # only latency compared, say: nothing reads judgments, there is nothing to bound
                bound = optimistic_bound(
                    judgments, results_a, results_b, bounded, topics, coded=coded,
                ) if bounded else None  # fmt: skip
            else:
                overlap, _ = rank_overlap(results_a, results_b, k=overlap_k)
        timings = self.paired_timings(ids[0], ids[1])
        result = self._compare_views(
            views, (scores_a, scores_b), metrics, gates, options, overlap, bound, weights, tags,
            timings,
        )  # fmt: skip
        now = utcnow()
        with self.session() as session:
            facts = read_facts(session, ids, (scores_a, scores_b))
        comparison_id = None
        if record:
            with self.session() as session:
                comparison_id = record_comparison(
                    session, result, (eval_a, eval_b), options, changes, facts, overlap,
                    segmented=tags is not None, gating=gating, now=now,
                )  # fmt: skip
        return replace(
            result,
            id=comparison_id,
            baseline_run_id=ids[0],
            candidate_run_id=ids[1],
            baseline_label=labels[0],
            candidate_label=labels[1],
            test_set=test_set,
            created_at=now.isoformat(),
            changes=changes,
            facts=tuple(facts),
            days=days if result.online else None,
            searches=searches if result.online else None,
        )

    def load_comparison(self, comparison_id: int) -> ComparisonResult:
        """A stored comparison, with per-query deltas and movers recomputed from the scores."""
        from evalplat.comparison.verdicts import OverlapSummary

        with self.session() as session:
            row = session.get(Comparison, comparison_id)
            if row is None:
                raise NotFoundError(f"no comparison with id {comparison_id}")
            metric_rows = session.scalars(
                select(ComparisonMetric).where(ComparisonMetric.comparison_id == comparison_id)
            ).all()
            run_ids = [
                session.get(Evaluation, e).run_id  # type: ignore[union-attr]
                for e in (row.baseline_evaluation_id, row.candidate_evaluation_id)
            ]
            labels = [_label(session, run_id) for run_id in run_ids]
            days = _online_days(session, run_ids)
            searches = _online_searches(session, run_ids)
            test_set = version_name(session, row.baseline_evaluation_id)
            stored = {m.metric: m for m in metric_rows}
            saved_options = dict(row.options)
            evaluations = (row.baseline_evaluation_id, row.candidate_evaluation_id)
            created_at, overlap_data = row.created_at, row.overlap
            stored_changes = saved_options.get("changes")
            # comparisons stored before changes were recorded: the versions are immutable, so
            # diffing them now gives what the diff was then
            changes = (
                run_changes(session, run_ids[0], run_ids[1])
                if stored_changes is None
                else Changes.from_dict(stored_changes)
            )
            weights, tags = query_facts(session, evaluations[0])
        facts = stored_facts(
            saved_options.get("facts"),
            run_ids,
            lambda: [self._scores(e) for e in evaluations],
            self.session,
        )
        options = CompareOptions(**saved_options["compare"])
        gates = [Gate(**g) for g in saved_options["gates"]]
        order = saved_options.get("metrics", list(stored))
        # comparisons stored before weights and segments were used are read back as they were
        fresh = compare_scores(
            self._scores(evaluations[0]),
            self._scores(evaluations[1]),
            order,
            gates,
            options,
            weights=weights if saved_options.get("weighted") else None,
            tags=tags if saved_options.get("segmented") else None,
        )
        with self.session() as session:
            segments = load_segments(session, comparison_id, fresh.segments)
        bounds = saved_options.get("bounds") or {}
        metrics = []
        for computed in fresh.metrics:
            saved = stored.get(computed.metric)
            if saved is None:
                continue
            # The stored row is the record (verdicts as decided then); keep it verbatim.
            metrics.append(
                replace(
                    computed,
                    **{
                        field: getattr(saved, field)
                        for field in MetricComparison.__dataclass_fields__
                        if hasattr(ComparisonMetric, field)
                    },
                    **{
                        key: value
                        for key, value in (bounds.get(computed.metric) or {}).items()
                        if key in BOUND_FIELDS
                    },
                )
            )
        return replace(
            fresh,
            metrics=tuple(metrics),
            segments=segments,
            overlap=None if overlap_data is None else OverlapSummary(**overlap_data),
            verdict=row.verdict,
            id=comparison_id,
            baseline_run_id=run_ids[0],
            candidate_run_id=run_ids[1],
            baseline_label=labels[0],
            candidate_label=labels[1],
            test_set=test_set,
            created_at=created_at.isoformat(),
            changes=changes,
            facts=tuple(facts),
            days=days if fresh.online else None,
            searches=searches if fresh.online else None,
        )

    def recent_comparisons(self, test_set: str, limit: int) -> list[StoredComparison]:
        """The ``limit`` most recent comparisons on any version of ``test_set``, newest first."""
        with self.session() as session:
            rows = session.execute(
                select(Comparison, Evaluation.run_id)
                .join(Evaluation, Evaluation.id == Comparison.baseline_evaluation_id)
                .join(TestSetVersion, TestSetVersion.id == Evaluation.test_set_version_id)
                .join(TestSet, TestSet.id == TestSetVersion.test_set_id)
                .where(TestSet.name == test_set)
                .order_by(Comparison.created_at.desc(), Comparison.id.desc())
                .limit(limit)
            ).all()
            found = []
            for row, baseline_run in rows:
                candidate = session.get(Evaluation, row.candidate_evaluation_id)
                ids = (baseline_run, candidate.run_id if candidate else baseline_run)
                runs = [session.get(Run, run_id) for run_id in ids]
                found.append(
                    StoredComparison(
                        id=row.id,
                        run_ids=ids,
                        baseline=_label(session, ids[0]),
                        candidate=_label(session, ids[1]),
                        test_set=version_name(session, row.baseline_evaluation_id),
                        metrics=list(row.options.get("metrics", [])),
                        options=dict(row.options),
                        has_results=all(
                            run is not None
                            and run.results_pruned_at is None
                            and run.trigger != "online"
                            for run in runs
                        ),
                    )
                )
        return found

    def _judged_topics(
        self, evaluation_id: int
    ) -> tuple[pd.DataFrame, list[str], tuple[object, ...]]:
        """The judgments (``query_id, doc_id, grade``) and the query ids of the test set
        version ``evaluation_id`` was scored on, and the version's key (its id, hash and
        creation time, as ``_judgments`` keeps it)."""
        with self.session() as session:
            evaluation = session.get(Evaluation, evaluation_id)
            if evaluation is None:
                raise NotFoundError(f"no evaluation {evaluation_id}")
            version_id = evaluation.test_set_version_id
            version = session.get(TestSetVersion, version_id)
            if version is None:
                raise NotFoundError(f"no test set version {version_id}")
            judgments = self._judgments(session, version)[["query_id", "doc_id", "grade"]]
            topics = list(
                session.scalars(
                    select(Query.query_id).where(Query.test_set_version_id == version_id)
                )
            )
            key = (version.id, version.content_hash, version.created_at)
        return judgments, topics, key

    def _judged_ids(self, key: tuple[object, ...], judgments: pd.DataFrame) -> JudgedIds:
        """``judgments`` (``_judged_topics``' with its version's ``key``) coded for
        ``code_pair``, once per test set version: a night compares every config on one."""
        from evalplat.comparison.coded import judged_ids

        kept = self._judged_ids_cache
        if kept is not None and kept[0] == key:
            coded: JudgedIds = kept[1]
            return coded
        coded = judged_ids(judgments)
        self._judged_ids_cache = (key, coded)
        return coded

    def _scores(self, evaluation_id: int) -> pd.DataFrame:
        with self.session() as session:
            return scores_of(session, evaluation_id)


def _bounded(
    scores_a: pd.DataFrame, metrics: Sequence[str | Metric] | None, gates: Sequence[Gate] | None
) -> list[str]:
    """The metrics to score under the optimistic bound: those compared or gated that are
    gateable and read judgments."""
    from evalplat.metrics.names import parse

    names = [str(m) for m in metrics] if metrics else list(dict.fromkeys(scores_a["metric"]))
    names += [g.metric for g in gates or ()]
    return list(
        dict.fromkeys(
            str(parse(n)) for n in names
            if parse(n).gateable and parse(n).reads_judgments
        )
    )  # fmt: skip


def _online_days(session: Session, run_ids: Sequence[int]) -> tuple[str | None, str | None]:
    """The UTC day of each online run (its window's start); None for a run of queries."""
    days = []
    for run_id in run_ids:
        trigger, started = session.execute(
            select(Run.trigger, Run.started_at).where(Run.id == run_id)
        ).one()
        days.append(started.date().isoformat() if trigger == ONLINE_TRIGGER else None)
    return days[0], days[1]


def _online_searches(session: Session, run_ids: Sequence[int]) -> tuple[int | None, int | None]:
    """The searches of each online run's window (its options); None where not recorded."""
    counts: list[int | None] = []
    for run_id in run_ids:
        options = session.execute(select(Run.options).where(Run.id == run_id)).scalar_one()
        span = options.get("online") if isinstance(options, dict) else None
        searches = span.get("searches") if isinstance(span, dict) else None
        counts.append(searches if isinstance(searches, int) else None)
    return counts[0], counts[1]


def _label(session: Session, run_id: int) -> str:
    row = session.execute(
        select(Config.name, ConfigVersion.version, ConfigVersion.label)
        .join(ConfigVersion, ConfigVersion.config_id == Config.id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .where(Run.id == run_id)
    ).one()
    label = f" ({row[2]})" if row[2] else ""
    return f"run {run_id}: {row[0]}@{row[1]}{label}"
