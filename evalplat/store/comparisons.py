"""Comparisons, baselines, history and unjudged documents in the store.

Rules kept here (the pure computation is ``evalplat.comparison.compare_scores``):

- Two runs are compared on their latest evaluations, which must be against the **same test set
  version**; otherwise the comparison is refused with the ``rescore`` command that fixes it.
- Runs that are not ``complete`` are refused (``OperationalError``, exit 3) unless
  ``allow_partial``; a ``running`` run is always refused.
- Every comparison is stored (``comparison`` + one ``comparison_metric`` row per metric) with
  the options and gates that reproduce it; per-query deltas and movers are recomputed from the
  stored per-query scores when it is loaded back.
- **Baselines**: one per (config, test set). ``set_baseline`` pins one. Without a pinned one,
  the config's first complete run on the test set is adopted (and stored, unpinned) the first
  time a baseline of that config is asked for: by ``baseline``/``baselines``/``history`` or a
  ``CONFIG@baseline`` reference given to ``compare_runs``. Adopting on read rather than when a
  run finishes gives the same run (the first complete one) and keeps the run life cycle free of
  baseline policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.comparison import (
    CompareOptions,
    ComparisonResult,
    Gate,
    MetricComparison,
    compare_scores,
)
from evalplat.db.models import (
    Baseline,
    Comparison,
    ComparisonMetric,
    Config,
    ConfigVersion,
    Evaluation,
    Judgment,
    Query,
    QueryScore,
    Result,
    Run,
    TestSet,
    TestSetVersion,
)
from evalplat.errors import InputError, NotFoundError, OperationalError
from evalplat.store.base import utcnow
from evalplat.store.run_rows import RunInfo, latest_evaluations, resolve_run, run_infos
from evalplat.store.runs import RunsMixin

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.metrics.registry import Metric


@dataclass(frozen=True)
class BaselineInfo:
    """The baseline run of a config on a test set; ``pinned`` False when it was automatic."""

    config: str
    test_set: str
    run_id: int
    pinned: bool
    set_at: datetime

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["set_at"] = self.set_at.isoformat()
        return data


@dataclass(frozen=True)
class HistoryPoint:
    """One run of a config: its means and, when stored, the verdict of its latest comparison
    with the config's baseline."""

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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["started_at"] = self.started_at.isoformat()
        return data


class ComparisonsMixin(RunsMixin):
    # ── comparing ────────────────────────────────────────────────────────────────────────────

    def compare_runs(
        self,
        baseline_ref: str | int,
        candidate_ref: str | int,
        *,
        metrics: Sequence[str | Metric] | None = None,
        gates: Sequence[Gate] | None = None,
        options: CompareOptions | None = None,
        overlap_k: int = 10,
    ) -> ComparisonResult:
        """Compare two stored runs, store the comparison, and return it (with its ``id``)."""
        from evalplat.overlap import rank_overlap

        options = options or CompareOptions()
        with self.session() as session:
            for ref in (baseline_ref, candidate_ref):
                name, _, which = str(ref).strip().rpartition("@")
                if which == "baseline":
                    _adopt_first_baselines(session, name)
        with self.session() as session:
            ids = [resolve_run(session, ref) for ref in (baseline_ref, candidate_ref)]
            runs = [session.get(Run, run_id) for run_id in ids]
            evaluations = latest_evaluations(session, ids)
            for run in runs:
                if run is not None:
                    _check_comparable(session, run, evaluations.get(run.id), options)
            eval_a, eval_b = evaluations[ids[0]], evaluations[ids[1]]
            _check_same_version(session, ids, eval_a, eval_b)
            labels = [_label(session, run_id) for run_id in ids]
            test_set = _version_name(session, eval_a)
            pruned = any(run is not None and run.results_pruned_at for run in runs)
        scores_a, scores_b = self._scores(eval_a), self._scores(eval_b)
        overlap = None
        if not pruned:
            overlap, _ = rank_overlap(
                self.load_results(ids[0]), self.load_results(ids[1]), k=overlap_k
            )
        result = compare_scores(scores_a, scores_b, metrics, gates, options, overlap=overlap)
        now = utcnow()
        with self.session() as session:
            row = Comparison(
                baseline_evaluation_id=eval_a,
                candidate_evaluation_id=eval_b,
                options={
                    "compare": asdict(options),
                    "gates": [asdict(g) for g in result.gates],
                    "metrics": [m.metric for m in result.metrics],
                },
                verdict=result.verdict,
                overlap=None if overlap is None else overlap.to_dict(),
                created_at=now,
            )
            session.add(row)
            session.flush()
            for metric in result.metrics:
                values = metric.to_dict()
                for key in ("higher_is_better", "max_drop", "max_relative_drop", "alpha"):
                    values.pop(key)
                session.add(ComparisonMetric(comparison_id=row.id, **values))
            comparison_id = row.id
        return replace(
            result,
            id=comparison_id,
            baseline_run_id=ids[0],
            candidate_run_id=ids[1],
            baseline_label=labels[0],
            candidate_label=labels[1],
            test_set=test_set,
            created_at=now.isoformat(),
        )

    def load_comparison(self, comparison_id: int) -> ComparisonResult:
        """A stored comparison, with per-query deltas and movers recomputed from the scores."""
        from evalplat.comparison import OverlapSummary

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
            test_set = _version_name(session, row.baseline_evaluation_id)
            stored = {m.metric: m for m in metric_rows}
            saved_options = dict(row.options)
            evaluations = (row.baseline_evaluation_id, row.candidate_evaluation_id)
            created_at, overlap_data = row.created_at, row.overlap
        options = CompareOptions(**saved_options["compare"])
        gates = [Gate(**g) for g in saved_options["gates"]]
        order = saved_options.get("metrics", list(stored))
        fresh = compare_scores(
            self._scores(evaluations[0]), self._scores(evaluations[1]), order, gates, options
        )
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
                )
            )
        return replace(
            fresh,
            metrics=tuple(metrics),
            overlap=None if overlap_data is None else OverlapSummary(**overlap_data),
            verdict=row.verdict,
            id=comparison_id,
            baseline_run_id=run_ids[0],
            candidate_run_id=run_ids[1],
            baseline_label=labels[0],
            candidate_label=labels[1],
            test_set=test_set,
            created_at=created_at.isoformat(),
        )

    def _scores(self, evaluation_id: int) -> pd.DataFrame:
        import pandas as pd

        with self.session() as session:
            rows = session.execute(
                select(QueryScore.query_id, QueryScore.metric, QueryScore.value).where(
                    QueryScore.evaluation_id == evaluation_id
                )
            ).all()
        return pd.DataFrame([tuple(r) for r in rows], columns=["query_id", "metric", "value"])

    # ── baselines ────────────────────────────────────────────────────────────────────────────

    def set_baseline(self, config: str, run_ref: str | int) -> BaselineInfo:
        """Pin ``run_ref`` as the baseline of ``config`` on the run's test set."""
        with self.session() as session:
            run = session.get(Run, resolve_run(session, run_ref))
            if run is None:  # resolve_run raised already; keeps the type checker informed
                raise NotFoundError(f"no run {run_ref}")
            config_id, test_set_id = _run_keys(session, run)
            config_row = session.scalar(select(Config).where(Config.name == config))
            if config_row is None:
                raise NotFoundError(f"no config named '{config}'")
            if config_row.id != config_id:
                raise InputError(f"run {run.id} is not a run of config '{config}'")
            if run.status != "complete":
                raise InputError(
                    f"run {run.id} is {run.status}; only a complete run can be a baseline"
                )
            row = session.scalar(
                select(Baseline).where(
                    Baseline.config_id == config_id, Baseline.test_set_id == test_set_id
                )
            )
            if row is None:
                row = Baseline(config_id=config_id, test_set_id=test_set_id, run_id=run.id)
                session.add(row)
            row.run_id, row.pinned, row.set_at = run.id, True, utcnow()
            session.flush()
            return _baseline_info(session, row)

    def baselines(self, config: str | None = None) -> list[BaselineInfo]:
        """Baselines of one config (every test set) or of all configs, by config then test set."""
        with self.session() as session:
            query = select(Baseline).join(Config, Baseline.config_id == Config.id)
            if config is not None:
                if session.scalar(select(Config.id).where(Config.name == config)) is None:
                    raise NotFoundError(f"no config named '{config}'")
                query = query.where(Config.name == config)
            for name in [config] if config else session.scalars(select(Config.name)).all():
                _adopt_first_baselines(session, name)
            rows = session.scalars(query.order_by(Config.name, Baseline.test_set_id)).all()
            return [_baseline_info(session, row) for row in rows]

    def baseline(self, config: str, test_set: str) -> BaselineInfo | None:
        """The baseline of ``config`` on ``test_set``, or None."""
        for info in self.baselines(config):
            if info.test_set == test_set:
                return info
        return None

    # ── history and unjudged documents ──────────────────────────────────────────────────────

    def history(self, config: str, test_set: str | None = None) -> list[HistoryPoint]:
        """Every finished run of ``config`` (on ``test_set`` when given), oldest first, with its
        means and the verdict of its latest stored comparison against the baseline."""
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
            _adopt_first_baselines(session, config)
            baselines = {
                b.test_set_id: b.run_id
                for b in session.scalars(select(Baseline).where(Baseline.config_id == config_id))
            }
            infos = {info.id: info for info in self._run_infos(session, [r[0] for r in rows])}
            points = []
            for run, version, label, ts_name, ts_version, ts_id in rows:
                verdict, comparison_id = _verdict_against(session, baselines.get(ts_id), run.id)
                points.append(
                    HistoryPoint(
                        run_id=run.id,
                        status=run.status,
                        config_version=version,
                        label=label,
                        test_set=ts_name,
                        test_set_version=ts_version,
                        started_at=infos[run.id].started_at,
                        means=infos[run.id].means,
                        is_baseline=baselines.get(ts_id) == run.id,
                        verdict=verdict,
                        comparison_id=comparison_id,
                    )
                )
            return points

    def _run_infos(self, session: Session, runs: Sequence[Run]) -> list[RunInfo]:
        return run_infos(session, runs)

    def unjudged(self, run_ref: str | int, k: int = 10) -> pd.DataFrame:
        """Documents in the top ``k`` of a run that have no judgment in the test set version
        it was scored against: ``query_id, query, doc_id, rank``, by query then rank."""
        import pandas as pd

        if k < 1:
            raise InputError(f"--k must be 1 or more, got {k}")
        with self.session() as session:
            run_id = resolve_run(session, run_ref)
            run = session.get(Run, run_id)
            if run is not None and run.results_pruned_at is not None:
                raise InputError(f"run {run_id}: its results were pruned by the retention policy")
            evaluation_id = latest_evaluations(session, [run_id]).get(run_id)
            version_id = run.test_set_version_id if run is not None else None
            if evaluation_id is not None:
                evaluation = session.get(Evaluation, evaluation_id)
                version_id = evaluation.test_set_version_id if evaluation else version_id
            judged = select(Judgment.doc_id).where(
                Judgment.test_set_version_id == version_id,
                Judgment.query_id == Result.query_id,
                Judgment.doc_id == Result.doc_id,
            )
            rows = session.execute(
                select(Result.query_id, Query.text, Result.doc_id, Result.rank)
                .outerjoin(
                    Query,
                    (Query.test_set_version_id == version_id) & (Query.query_id == Result.query_id),
                )
                .where(Result.run_id == run_id, Result.rank <= k, ~judged.exists())
                .order_by(Result.query_id, Result.rank)
            ).all()
        frame = pd.DataFrame(
            [tuple(r) for r in rows], columns=["query_id", "query", "doc_id", "rank"]
        )
        frame["query"] = frame["query"].fillna("")
        return frame


# ── helpers (session level) ──────────────────────────────────────────────────────────────────


def _check_comparable(
    session: Session, run: Run, evaluation_id: int | None, options: CompareOptions
) -> None:
    if run.status == "running":
        raise OperationalError(f"run {run.id} is still running; compare it when it finishes")
    if run.status != "complete" and not options.allow_partial:
        raise OperationalError(
            f"run {run.id} is {run.status} ({run.queries_failed} failed queries): a "
            f"{run.status} run is not compared as if complete; finish it with "
            f"`evalplat run --resume {run.id}` or pass --allow-partial"
        )
    if evaluation_id is None:
        raise OperationalError(f"run {run.id} has no scores; score it with `evalplat rescore`")


def _check_same_version(session: Session, ids: list[int], eval_a: int, eval_b: int) -> None:
    version_a = session.get(Evaluation, eval_a)
    version_b = session.get(Evaluation, eval_b)
    if version_a is None or version_b is None:
        raise NotFoundError("evaluation vanished while comparing")
    if version_a.test_set_version_id != version_b.test_set_version_id:
        name_a, name_b = _version_name(session, eval_a), _version_name(session, eval_b)
        raise InputError(
            f"run {ids[0]} was scored against {name_a} and run {ids[1]} against {name_b}: "
            f"comparing different judgments is meaningless; rescore one on the other's "
            f"version first, e.g. `evalplat rescore {ids[0]} --testset {name_b}`"
        )


def _version_name(session: Session, evaluation_id: int) -> str:
    row = session.execute(
        select(TestSet.name, TestSetVersion.version)
        .join(TestSetVersion, TestSetVersion.test_set_id == TestSet.id)
        .join(Evaluation, Evaluation.test_set_version_id == TestSetVersion.id)
        .where(Evaluation.id == evaluation_id)
    ).one()
    return f"{row[0]}@{row[1]}"


def _label(session: Session, run_id: int) -> str:
    row = session.execute(
        select(Config.name, ConfigVersion.version, ConfigVersion.label)
        .join(ConfigVersion, ConfigVersion.config_id == Config.id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .where(Run.id == run_id)
    ).one()
    label = f" ({row[2]})" if row[2] else ""
    return f"run {run_id}: {row[0]}@{row[1]}{label}"


def _run_keys(session: Session, run: Run) -> tuple[int, int]:
    """(config id, test set id) of a run."""
    row = session.execute(
        select(ConfigVersion.config_id, TestSetVersion.test_set_id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .where(Run.id == run.id)
    ).one()
    return int(row[0]), int(row[1])


def _adopt_first_baselines(session: Session, config: str) -> None:
    """Store, unpinned, the first complete run of ``config`` on every test set that has no
    baseline for it yet. Unknown config names are left to the caller to report."""
    config_id = session.scalar(select(Config.id).where(Config.name == config))
    if config_id is None:
        return
    has_baseline = select(Baseline.test_set_id).where(Baseline.config_id == config_id)
    firsts = session.execute(
        select(TestSetVersion.test_set_id, func.min(Run.id))
        .join(Run, Run.test_set_version_id == TestSetVersion.id)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .where(
            ConfigVersion.config_id == config_id,
            Run.status == "complete",
            TestSetVersion.test_set_id.not_in(has_baseline),
        )
        .group_by(TestSetVersion.test_set_id)
    ).all()
    for test_set_id, run_id in firsts:
        session.add(
            Baseline(
                config_id=config_id,
                test_set_id=test_set_id,
                run_id=run_id,
                pinned=False,
                set_at=utcnow(),
            )
        )
    if firsts:
        session.flush()


def _baseline_info(session: Session, row: Baseline) -> BaselineInfo:
    config = session.scalar(select(Config.name).where(Config.id == row.config_id))
    test_set = session.scalar(select(TestSet.name).where(TestSet.id == row.test_set_id))
    return BaselineInfo(
        config=str(config),
        test_set=str(test_set),
        run_id=row.run_id,
        pinned=row.pinned,
        set_at=row.set_at,
    )


def _verdict_against(
    session: Session, baseline_run: int | None, run_id: int
) -> tuple[str | None, int | None]:
    """Verdict and id of the latest stored comparison of ``run_id`` with ``baseline_run``.

    Without one, the latest comparison that has ``run_id`` as its candidate at all: a config
    judged against another config's baseline (nightly's ``compare_to``, or a manual
    ``compare``) still shows that verdict and links its page.
    """
    cand_eval = select(Evaluation.id).where(Evaluation.run_id == run_id)
    latest = (
        select(Comparison.verdict, Comparison.id)
        .where(Comparison.candidate_evaluation_id.in_(cand_eval))
        .order_by(Comparison.id.desc())
        .limit(1)
    )
    if baseline_run is not None:
        base_eval = select(Evaluation.id).where(Evaluation.run_id == baseline_run)
        row = session.execute(
            latest.where(Comparison.baseline_evaluation_id.in_(base_eval))
        ).first()
        if row is not None:
            return row[0], row[1]
    row = session.execute(latest).first()
    return (None, None) if row is None else (row[0], row[1])
