"""The runs of a leaderboard and their scores, read from the store (the computation is
``evalplat.comparison.leaderboard``).

Which runs:

- **named**: run references as every command takes them (``12``, ``CONFIG@latest``,
  ``CONFIG@baseline``, ``CONFIG@VERSION``), in the order given;
- **--config-glob PATTERN**: the latest complete run of every config whose name matches the
  shell pattern (``bm25-*``), configs in name order;
- **--label LABEL**: the latest complete run of every config version carrying that label (the
  ``--label`` of ``config add``: a git sha, a ticket, the name of a tuning session), configs in
  name order.

``--testset NAME[@VERSION]`` narrows the last two to runs on that test set (version). Online
runs (scored from events) never join. Every run must be complete and scored on one test set
version: the first run's latest scores decide the version and every other run needs scores on
it, else the board is refused with the ``rescore`` that fixes it.

The baseline: ``--baseline RUN`` (it joins the board first when not named), else the first run
that is its config's pinned baseline ("production") on the test set, else the first that is its
config's baseline at all, else the first run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.comparison.verdicts import CompareOptions
from evalplat.db.models import (
    Config,
    ConfigVersion,
    Evaluation,
    Run,
    TestSet,
    TestSetVersion,
)
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase
from evalplat.store.baseline_rows import baseline_rows
from evalplat.store.comparable import check_comparable, version_name
from evalplat.store.refs import parse_version_ref
from evalplat.store.run_reads import scores_of
from evalplat.store.run_rows import evaluation_on, latest_evaluations, resolve_run
from evalplat.store.segments import query_facts

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.leaderboard import Leaderboard, LeaderboardOptions

__all__ = ["MAX_RUNS", "LeaderboardMixin"]

MAX_RUNS = 100  # beyond this the letters and the pairs are no longer readable


@dataclass(frozen=True)
class _Picked:
    run_ids: list[int]
    evaluations: list[int]
    labels: list[str]
    baseline: int
    test_set: str


class LeaderboardMixin(StoreBase):
    def leaderboard(
        self,
        refs: Sequence[str] = (),
        *,
        config_glob: str | None = None,
        label: str | None = None,
        testset: str | None = None,
        baseline: str | None = None,
        metrics: Sequence[str] | None = None,
        options: LeaderboardOptions | None = None,
    ) -> Leaderboard:
        """The leaderboard of the runs chosen one of three ways (module doc), on ``metrics``
        (default: the relevance metrics every run was scored with, as ``compare`` gates)."""
        from evalplat.comparison.leaderboard import leaderboard

        picked = self._pick_board(refs, config_glob, label, testset, baseline)
        scores = [self._board_scores(e) for e in picked.evaluations]
        chosen = list(metrics) if metrics else _default_metrics(scores)
        with self.session() as session:
            weights, _ = query_facts(session, picked.evaluations[0])
        return leaderboard(
            picked.labels, scores, chosen, baseline=picked.baseline, options=options,
            weights=weights, run_ids=picked.run_ids, test_set=picked.test_set,
        )  # fmt: skip

    def _pick_board(
        self,
        refs: Sequence[str],
        config_glob: str | None,
        label: str | None,
        testset: str | None,
        baseline: str | None,
    ) -> _Picked:
        ways = [w for w, given in (("run references", bool(refs)), ("--config-glob", config_glob
                is not None), ("--label", label is not None)) if given]  # fmt: skip
        if len(ways) != 1:
            got = f" (got {' and '.join(ways)})" if ways else ""
            raise InputError("name the runs one way: run references, --config-glob PATTERN or "
                             f"--label LABEL{got}")  # fmt: skip
        if testset is not None and refs:
            raise InputError("--testset narrows --config-glob or --label; runs named by "
                             "reference are taken as they are")  # fmt: skip
        with self.session() as session:
            if refs:
                ids = [resolve_run(session, ref) for ref in refs]
            else:
                ids = _latest_runs(session, config_glob, label, testset)
            first = None if baseline is None else resolve_run(session, baseline)
            if first is not None and first not in ids:
                ids.insert(0, first)
            repeated = next((r for r in ids if ids.count(r) > 1), None)
            if repeated is not None:
                raise InputError(f"run {repeated} is named twice; a leaderboard ranks runs once")
            if len(ids) < 2:
                raise InputError(f"a leaderboard needs two runs or more, got {len(ids)}")
            if len(ids) > MAX_RUNS:
                raise InputError(f"a leaderboard ranks at most {MAX_RUNS} runs, got {len(ids)}")
            online = session.scalar(
                select(Run.id).where(Run.id.in_(ids), Run.trigger == "online").limit(1)
            )
            if online is not None:
                raise InputError(
                    f"run {online} is an online run, scored over sessions: a leaderboard ranks "
                    "runs per query of a judged test set"
                )
            evaluations = _common_evaluations(session, ids)
            labels = _labels(session, ids)
            where = ids.index(first) if first is not None else _production(session, ids)
            return _Picked(ids, evaluations, labels, where, version_name(session, evaluations[0]))

    def site_leaderboard_runs(self) -> list[tuple[str, list[str]]]:
        """Per test set (name order), the runs of the report site's leaderboard: the latest
        complete run of every config on the newest version that two configs or more ran on,
        as run ids; test sets without such a version are left out."""
        from evalplat.store.testsets import ONLINE_TEST_SET

        with self.session() as session:
            rows = session.execute(
                select(TestSet.name, TestSetVersion.version, ConfigVersion.config_id,
                       func.max(Run.id))
                .join(TestSetVersion, TestSetVersion.test_set_id == TestSet.id)
                .join(Run, Run.test_set_version_id == TestSetVersion.id)
                .join(ConfigVersion, ConfigVersion.id == Run.config_version_id)
                .where(Run.status == "complete", Run.trigger != "online",
                       TestSet.name != ONLINE_TEST_SET)
                .group_by(TestSet.name, TestSetVersion.version, ConfigVersion.config_id)
            ).all()  # fmt: skip
        by_version: dict[tuple[str, int], list[int]] = {}
        for name, version, _, run_id in rows:
            by_version.setdefault((name, version), []).append(run_id)
        found: dict[str, list[str]] = {}
        for (name, _), run_ids in sorted(by_version.items(), reverse=True):
            if name not in found and len(run_ids) >= 2:
                found[name] = [str(r) for r in sorted(run_ids)]
        return sorted(found.items())

    def _board_scores(self, evaluation_id: int) -> pd.DataFrame:
        with self.session() as session:
            return scores_of(session, evaluation_id)


def _latest_runs(
    session: Session, pattern: str | None, label: str | None, testset: str | None
) -> list[int]:
    """The latest complete run of each matching config (``pattern``) or config version
    (``label``), configs in name order."""
    query = (
        select(Config.name, ConfigVersion.id, func.max(Run.id))
        .join(ConfigVersion, ConfigVersion.config_id == Config.id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .where(Run.status == "complete", Run.trigger != "online")
    )
    if testset is not None:
        ref = parse_version_ref(testset, "--testset")
        query = query.join(TestSetVersion, TestSetVersion.id == Run.test_set_version_id).join(
            TestSet, TestSet.id == TestSetVersion.test_set_id
        ).where(TestSet.name == ref.name)  # fmt: skip
        if ref.version is not None:
            query = query.where(TestSetVersion.version == ref.version)
    if label is not None:
        query = query.where(ConfigVersion.label == label)
    rows = session.execute(query.group_by(Config.name, ConfigVersion.id)).all()
    if pattern is not None:
        latest: dict[str, int] = {}
        for name, _, run_id in rows:
            if fnmatchcase(name, pattern):
                latest[name] = max(latest.get(name, 0), run_id)
        found = [latest[name] for name in sorted(latest)]
    else:
        found = [run_id for _, _, run_id in sorted(rows, key=lambda r: (r[0], r[2]))]
    if not found:
        what = f"config matches {pattern!r}" if pattern is not None else f"config version " \
               f"carries the label {label!r}"  # fmt: skip
        on = f" with a complete run on {testset}" if testset is not None else " with a complete run"
        raise NotFoundError(f"no {what}{on}")
    return found


def _common_evaluations(session: Session, ids: list[int]) -> list[int]:
    """Each run's scores on the first run's latest test set version (module doc)."""
    latest = latest_evaluations(session, ids)
    options = CompareOptions()
    for run_id in ids:
        run = session.get(Run, run_id)
        if run is not None:
            check_comparable(session, run, latest.get(run_id), options)
    first = session.get(Evaluation, latest[ids[0]])
    if first is None:
        raise NotFoundError("evaluation vanished while reading the leaderboard")
    chosen = [latest[ids[0]]]
    for run_id in ids[1:]:
        match = evaluation_on(session, run_id, first.test_set_version_id)
        if match is None:
            here, there = (
                version_name(session, latest[ids[0]]),
                version_name(session, latest[run_id]),
            )
            raise InputError(
                f"run {ids[0]} was scored against {here} and run {run_id} against {there}: a "
                f"leaderboard ranks runs on one test set version; rescore it first, e.g. "
                f"`evalplat rescore {run_id} --testset {here}`"
            )  # fmt: skip
        chosen.append(match)
    return chosen


def _labels(session: Session, ids: list[int]) -> list[str]:
    """``CONFIG@VERSION`` (with the version's label), ``#ID`` added where two runs share one."""
    rows = dict(
        (run_id, (name, version, tag))
        for run_id, name, version, tag in session.execute(
            select(Run.id, Config.name, ConfigVersion.version, ConfigVersion.label)
            .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
            .join(Config, ConfigVersion.config_id == Config.id)
            .where(Run.id.in_(ids))
        )
    )
    plain = [f"{rows[r][0]}@{rows[r][1]}" + (f" ({rows[r][2]})" if rows[r][2] else "") for r in ids]
    return [f"{text} #{run_id}" if plain.count(text) > 1 else text
            for text, run_id in zip(plain, ids, strict=True)]  # fmt: skip


def _production(session: Session, ids: list[int]) -> int:
    """Index of the first pinned baseline among ``ids``, else of the first baseline, else 0."""
    rows = [(row.run_id, row.pinned) for row in baseline_rows(session) if row.run_id in ids]
    pinned = {run_id for run_id, is_pinned in rows if is_pinned}
    any_baseline = {run_id for run_id, _ in rows}
    for wanted in (pinned, any_baseline):
        for index, run_id in enumerate(ids):
            if run_id in wanted:
                return index
    return 0


def _default_metrics(scores: list[pd.DataFrame]) -> list[str]:
    """The relevance metrics (``compare``'s default gates) aggregated as a mean that every
    run was scored with, in the first run's stored order."""
    from evalplat.comparison.thresholds import gated_by_default
    from evalplat.metrics.registry import parse

    # each run's metric names taken column-wise: iterating 100,000 Arrow-backed cells in
    # Python cost about 0.1 s a run on a night's leaderboard
    names = [set(frame["metric"].unique()) for frame in scores[1:]]
    common = [m for m in scores[0]["metric"].unique() if all(m in n for n in names)]
    chosen = [m for m in common if gated_by_default(parse(m)) and parse(m).aggregate == "mean"]
    if not chosen:
        raise InputError("the runs share no relevance metric aggregated as a mean; name one "
                         "with --metric")  # fmt: skip
    return chosen
