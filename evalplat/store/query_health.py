"""The store's read for query health: a config's runs on a test set over a window, columnar.

A handful of queries, whatever the number of runs and queries: the window's runs, one read of
``query_score`` for all of them, one of ``run_query``, the test set's queries, the latest run of
every config on the test set and their top ``k`` with a judged flag. The figures are computed
by :mod:`evalplat.comparison.query_health`, from plain frames.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, select

from evalplat.db.bulk import read_frame, typed_frame
from evalplat.db.evaluations import Evaluation, MetricMean, QueryScore
from evalplat.db.models import (
    Config,
    ConfigVersion,
    Query,
    Result,
    Run,
    RunQuery,
    TestSet,
    TestSetVersion,
)
from evalplat.db.operations import RunTarget
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.configs import resolve_config_version
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.refs import parse_version_ref

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session

    from evalplat.comparison.query_health import HealthInputs
    from evalplat.comparison.targets import Target

FINISHED = ("complete", "partial")


class QueryHealthMixin(StoreBase):
    """``Store.query_health_inputs``: what the monthly read of a config needs.

    The top ``k`` of the configs' latest runs is the same for every config on a test set: the
    last one read is kept, keyed by those runs (and whether their results were pruned), the
    version and ``k``, so a report site with twenty configs reads it once, not twenty times.
    So are those runs' scores of the metric read (the peers every config's gaps are measured
    against), keyed by their evaluations and the metric: one read of twenty configs' scores,
    not twenty.
    """

    def _queries(self, session: Session, version_id: int | None) -> pd.DataFrame:
        """``query_id, text, weight, tags`` of a test set version. Every config's page of the
        test set reads the same queries, so the last version read is kept, keyed as
        ``_judgments`` keys its judgments (hash and creation time). The frame is shared."""
        import pandas as pd

        version = None if version_id is None else session.get(TestSetVersion, version_id)
        stamp = None if version is None else (version.content_hash, version.created_at)
        cached = self._queries_cache
        if stamp is not None and cached is not None and cached[0] == (version_id, stamp):
            frame: pd.DataFrame = cached[1]
            return frame
        frame = pd.DataFrame(
            session.execute(
                select(Query.query_id, Query.text, Query.weight, Query.tags).where(
                    Query.test_set_version_id == version_id
                )
            ).all(),
            columns=["query_id", "text", "weight", "tags"],
        )
        if stamp is not None and not session.info.get("wrote"):  # committed rows only
            self._queries_cache = ((version_id, stamp), frame)
        return frame

    def query_health_inputs(
        self,
        config: str,
        test_set: str,
        since: timedelta,
        metric: str | None = None,
        k: int = 10,
        window: str = "",
        target: Target | None = None,
    ) -> HealthInputs:
        """The frames of :class:`~evalplat.comparison.query_health.HealthInputs` for
        ``config`` on ``test_set`` over the runs started in the last ``since``.

        The target the fix list measures against is ``target`` (on all queries, of the metric
        read), or else the one the latest run of the window was checked against, if any."""

        from evalplat.comparison.query_health import HealthInputs

        if k < 1:
            raise InputError(f"--k must be 1 or more, got {k}")
        from evalplat.store.testsets import ONLINE_TEST_SET

        if test_set.strip() == ONLINE_TEST_SET:
            raise InputError(
                f"--testset {ONLINE_TEST_SET}: its runs are scored per session of a log, not per "
                "query; query health is for test sets of queries (searches per query text: "
                "`evalplat online agreement --testset T --report FILE`)"
            )
        start = utcnow() - since
        ref = parse_version_ref(config, "config reference")
        one_version, config = "@" in config, ref.name
        with self.session() as session:
            if session.scalar(select(Config.id).where(Config.name == config)) is None:
                raise NotFoundError(f"no config named '{config}'")
            # ``NAME@VER`` (``@latest``: the current version) reads that version's runs alone
            version = resolve_config_version(session, ref)[1].version if one_version else None
            if session.scalar(select(TestSet.id).where(TestSet.name == test_set)) is None:
                raise NotFoundError(f"no test set named '{test_set}'")
            window_runs = session.execute(
                select(Config.name, Run.id, Run.results_pruned_at, ConfigVersion.version)
                .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
                .join(Config, ConfigVersion.config_id == Config.id)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .where(TestSet.name == test_set, Run.status.in_(FINISHED), Run.started_at >= start)
                .order_by(Run.started_at, Run.id)
            ).all()
            own = [(run_id, v) for name, run_id, _, v in window_runs
                   if name == config and version in (None, v)]  # fmt: skip
            runs, versions = tuple(r for r, _ in own), tuple(v for _, v in own)
            if not runs:
                named = config if version is None else f"{config}@{version}"
                raise NotFoundError(
                    f"config '{named}' has no finished run on test set '{test_set}' "
                    f"in the last {window or since}"
                )
            latest_of = {name: run_id for name, run_id, _, _ in window_runs}  # oldest first
            latest_of[config] = runs[-1]  # the version read, when one is named
            evaluations = latest_evaluations(session, [*runs, *latest_of.values()])
            name = _metric(session, evaluations, runs, metric)
            version_id = session.scalar(
                select(Evaluation.test_set_version_id).where(
                    Evaluation.id == evaluations.get(runs[-1], -1)
                )
            ) or session.scalar(select(Run.test_set_version_id).where(Run.id == runs[-1]))
            scores = _scores(session, [evaluations[r] for r in runs if r in evaluations], name)
            peer_evaluations = {evaluations[r]: c for c, r in latest_of.items() if r in evaluations}
            peers_key = (tuple(peer_evaluations.items()), name)
            if self._peers_cache is None or self._peers_cache[0] != peers_key:
                peers = _scores(session, list(peer_evaluations), name)
                peers["config"] = peers.pop("evaluation_id").map(peer_evaluations)
                self._peers_cache = (peers_key, peers[["config", "query_id", "value"]])
            peers = self._peers_cache[1]
            records = read_frame(
                session,
                select(RunQuery.run_id, RunQuery.query_id, RunQuery.results_count)
                .add_columns(RunQuery.status)
                .where(RunQuery.run_id.in_(runs)),
                ["run_id", "query_id", "results_count", "status"],
                {"run_id": "int64", "query_id": "str", "results_count": "float64", "status": "str"},
            )
            queries = self._queries(session, version_id).copy()
            # every config's page of the test set reads the same top k: read once per store
            pruned = {run_id: when for _, run_id, when, _ in window_runs}
            key = (tuple((r, c, pruned[r]) for c, r in latest_of.items()), version_id, k)
            if self._top_cache is None or self._top_cache[0] != key:
                latest = {r: c for c, r in latest_of.items()}
                self._top_cache = (key, _top(session, latest, version_id, k))
            top = self._top_cache[1]
            target = _target(session, runs[-1], name, target)
            judged_on = _judged_on(session, runs, evaluations)
            rankings = _rankings(
                session, _next_to_changes(runs, judged_on), pruned, records, _cutoff(name)
            )
        scores["run_id"] = scores.pop("evaluation_id").map({evaluations[r]: r for r in runs})
        return HealthInputs(
            config=config,
            test_set=test_set,
            metric=name,
            higher_is_better=_higher_is_better(name),
            runs=runs,
            scores=scores,
            records=records,
            queries=queries,
            peers=peers.copy(),
            top=top,
            k=k,
            window=window,
            notes=_notes(name),
            target=target,
            judged_on=judged_on,
            rankings=rankings,
            versions=versions,
        )


def _metric(
    session: Session, evaluations: dict[int, int], runs: tuple[int, ...], asked: str | None
) -> str:
    """The metric asked for (canonical), or the first the latest run was scored with."""
    from evalplat.metrics.names import parse

    ids = [evaluations[r] for r in runs if r in evaluations]
    scored = sorted(
        set(session.scalars(select(MetricMean.metric).where(MetricMean.evaluation_id.in_(ids))))
    )
    if asked is not None:
        name = str(parse(asked))
        if name not in scored:
            listed = ", ".join(scored) or "none"
            raise InputError(f"--metric: {name} was not scored in the window; scored: {listed}")
        return name
    latest = session.get(Run, runs[-1])
    options = latest.options if latest is not None and isinstance(latest.options, dict) else {}
    for candidate in [*(options.get("metrics") or []), "nDCG@10", *scored]:
        if str(candidate) in scored:
            return str(candidate)
    raise NotFoundError("no run in the window has scores")


def _target(session: Session, run_id: int, metric: str, given: Target | None) -> Target | None:
    from evalplat.comparison.targets import Target

    if given is not None:
        if given.segment is not None or given.metric != metric:
            raise InputError(
                f"--target {given.label}: the read is of {metric} on all queries; give a "
                f"target on {metric} without a segment"
            )
        return given
    kept = session.scalar(
        select(RunTarget).where(
            RunTarget.run_id == run_id, RunTarget.metric == metric, RunTarget.segment == ""
        )
    )
    return None if kept is None else Target(metric, kept.bound, kept.target_value)


def _scores(session: Session, evaluation_ids: list[int], metric: str) -> pd.DataFrame:
    """``evaluation_id, query_id, value`` of ``metric``: one columnar read (COPY on PostgreSQL,
    Arrow on SQLite), never a Python object per score."""
    return read_frame(
        session,
        select(QueryScore.evaluation_id, QueryScore.query_id, QueryScore.value).where(
            QueryScore.evaluation_id.in_(evaluation_ids), QueryScore.metric == metric
        ),
        ["evaluation_id", "query_id", "value"],
        {"evaluation_id": "int64", "query_id": "str", "value": "float64"},
    )


# the columns of ``_top``'s rows, whichever way they are read, and their types
_TOP_TYPES = {"run_id": "int64", "query_id": "str", "doc_id": "str", "rank": "int64",
              "judged": "float64", "title": "str", "text": "str"}  # fmt: skip


def _top(session: Session, latest: dict[int, str], version_id: int | None, k: int) -> pd.DataFrame:
    """The top ``k`` of each config's latest run, judged or not on ``version_id`` (graded by a
    person: :mod:`evalplat.store.people_judged`), with each document's title and the start of
    its text (:mod:`evalplat.store.annotation_texts`)."""
    from evalplat.store.annotation_texts import corpus_of, fill_from_hits

    corpus = corpus_of(session, version_id)
    frame = None if corpus is not None else _top_of_copies(session, latest, version_id, k)
    if frame is not None:
        frame = typed_frame(frame[list(_TOP_TYPES)], _TOP_TYPES)
    else:
        frame = _top_of_rows(session, latest, version_id, k, corpus)
    frame = fill_from_hits(session, frame, latest, k, "run_id")
    frame.insert(0, "config", frame.pop("run_id").map(latest))
    frame["judged"] = frame.pop("judged").notna()
    return frame


def _top_of_copies(
    session: Session, latest: dict[int, str], version_id: int | None, k: int
) -> pd.DataFrame | None:
    """``_top``'s rows without document columns from the copies of the runs' results and of
    the version's judgments (``evalplat.store.copies``), in the order the table's key gives
    them (run, query, rank); None when a run or the version has no copy. A comparison's
    coding reads the same copies: this is one decode of each and a join in Arrow, where the
    rows' query scans every result of every run for its top ``k``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.store.copies import read_judgment_table, read_result_table
    from evalplat.store.people_judged import keeps_several, people_rows

    if version_id is None or keeps_several(session, version_id):
        return None  # who graded a pair of several grades is in the rows (``rating``)
    judged = read_judgment_table(session, version_id)
    if judged is None:
        return None
    judged = people_rows(judged)
    keys = pa.schema([("query_id", pa.string()), ("doc_id", pa.string())])
    parts = []
    for run_id in sorted(latest):
        table = read_result_table(session, run_id)
        if table is None:
            return None
        top = table.filter(pc.less_equal(table.column("rank"), k))
        run = pa.array(np.full(top.num_rows, run_id, dtype=np.int64))
        ids = top.select(["query_id", "doc_id"]).cast(keys)  # a copy's text may be large
        parts.append(ids.append_column("rank", top.column("rank")).append_column("run_id", run))
    tops = pa.concat_tables(parts)
    people = judged.select(["query_id", "doc_id"]).cast(keys)
    people = people.append_column("judged", pa.array(np.ones(people.num_rows)))
    joined = tops.join(people, ["query_id", "doc_id"], use_threads=False)
    order = [("run_id", "ascending"), ("query_id", "ascending"), ("rank", "ascending")]
    frame: pd.DataFrame = joined.sort_by(order).to_pandas()
    frame["title"], frame["text"] = "", ""
    return frame


def _top_of_rows(
    session: Session,
    latest: dict[int, str],
    version_id: int | None,
    k: int,
    corpus: int | None,
) -> pd.DataFrame:
    """``_top``'s rows as the ``result`` table's query gives them, with document columns."""
    from evalplat.store.annotation_texts import with_document_columns
    from evalplat.store.people_judged import people_judged

    judged = people_judged(session, version_id, Result.query_id, Result.doc_id)
    statement = (
        select(Result.run_id, Result.query_id, Result.doc_id, Result.rank)
        .add_columns(case((judged, 1.0), else_=None).label("judged"))
        .where(Result.run_id.in_(list(latest)), Result.rank <= k)
    )
    statement = with_document_columns(statement, corpus)
    return read_frame(session, statement, list(_TOP_TYPES), _TOP_TYPES)


def _judged_on(
    session: Session, runs: tuple[int, ...], evaluations: dict[int, int]
) -> tuple[int, ...]:
    """The test set version each run was last scored on (its own version when never scored)."""
    scored = dict(
        session.execute(
            select(Evaluation.id, Evaluation.test_set_version_id).where(
                Evaluation.id.in_([evaluations[r] for r in runs if r in evaluations])
            )
        ).all()
    )
    own = dict(
        session.execute(select(Run.id, Run.test_set_version_id).where(Run.id.in_(runs))).all()
    )
    return tuple(int(scored.get(evaluations.get(r, -1), own[r])) for r in runs)


def _next_to_changes(runs: tuple[int, ...], judged_on: tuple[int, ...]) -> list[int]:
    """The runs on either side of a change of judgment version: only there can a value move
    without the ranking moving."""
    ends: set[int] = set()
    for pair in range(len(runs) - 1):
        if judged_on[pair] != judged_on[pair + 1]:
            ends.update((runs[pair], runs[pair + 1]))
    return sorted(ends)


def _cutoff(metric: str) -> int | None:
    """The depth a metric reads (None: the whole ranking): a ranking that changed below it
    does not change the metric."""
    from evalplat.metrics.names import parse

    try:
        return parse(metric).cutoff
    except InputError:
        return None


def _rankings(
    session: Session,
    run_ids: list[int],
    pruned: dict[int, Any],
    records: pd.DataFrame,
    cutoff: int | None,
) -> pd.DataFrame:
    """``run_id, query_id, ranking`` of ``run_ids`` whose results are stored: the ranked doc
    ids down to ``cutoff`` joined into one string per query, empty for a query that returned
    nothing."""
    import pandas as pd

    kept = [r for r in run_ids if pruned.get(r) is None]
    if not kept:
        return pd.DataFrame(columns=["run_id", "query_id", "ranking"])
    query = select(Result.run_id, Result.query_id, Result.doc_id, Result.rank).where(
        Result.run_id.in_(kept)
    )
    results = read_frame(
        session,
        query if cutoff is None else query.where(Result.rank <= cutoff),
        ["run_id", "query_id", "doc_id", "rank"],
        {"run_id": "int64", "query_id": "str", "doc_id": "str", "rank": "int64"},
    ).sort_values(["run_id", "query_id", "rank"], kind="stable")
    joined = results.groupby(["run_id", "query_id"], sort=False)["doc_id"].agg("\x1f".join)
    asked = records.loc[records["run_id"].isin(kept), ["run_id", "query_id"]]
    frame = asked.drop_duplicates().set_index(["run_id", "query_id"])
    frame["ranking"] = joined.reindex(frame.index).fillna("")
    return frame.reset_index()


def _higher_is_better(metric: str) -> bool:
    from evalplat.metrics.names import parse

    try:
        return parse(metric).higher_is_better
    except InputError:
        return True


def _notes(metric: str) -> tuple[str, ...]:
    from evalplat.metrics.names import parse

    try:
        gains = parse(metric).gains
    except InputError:
        return ()
    if not gains:
        return ()
    shown = ", ".join(f"grade {g} gains {v:g}" for g, v in sorted(gains.items()))
    return (
        f"A grade-to-gain map is in force for {metric}: {shown}; other grades gain their grade.",
    )
