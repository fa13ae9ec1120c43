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
version: the baseline's latest scores decide the version. A run named by reference without
scores on it is refused with the ``rescore`` that fixes it (that run onto the baseline's
version); a run found by pattern or label without them (a config dropped from the project,
whose last run is on older judgments) is left out, with a note.

The baseline: ``--baseline RUN`` (it joins the board first when not named), else production:
the run of the config the other configs are gated against (the baseline config of the latest
gating comparisons of the most other configs, as a night with ``compare_to`` stores them),
else the first run that is its config's pinned baseline, else the first that is its config's
baseline at all, else the first run.

Each run's verdict against the baseline is the comparison ``compare`` makes of the pair
(``Store.compare_runs``, not stored) with the gates given (default: the default rule set).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.comparison.verdicts import CompareOptions, Gate
from evalplat.db.evaluations import Comparison, Evaluation
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase
from evalplat.store.baseline_rows import baseline_rows
from evalplat.store.comparable import check_comparable, version_name
from evalplat.store.evaluation_rows import evaluation_on, latest_evaluations
from evalplat.store.refs import parse_version_ref
from evalplat.store.run_reads import scores_of
from evalplat.store.run_rows import resolve_run
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
    notes: tuple[str, ...] = ()


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
        gates_of: Callable[[str], list[Gate]] | None = None,
    ) -> Leaderboard:
        """The leaderboard of the runs chosen one of three ways (module doc), on ``metrics``
        (default: the relevance metrics every run was scored with, as ``compare`` gates), each
        run's verdict that of ``compare`` with the gates ``gates_of`` the test set gives (a
        project's stated ones; none given or stated: the default rule set)."""
        from dataclasses import replace

        from evalplat.comparison.leaderboard import (
            LeaderboardOptions,
            check_rankable,
            leaderboard,
        )
        from evalplat.metrics.names import parse

        options = options or LeaderboardOptions()
        picked = self._pick_board(refs, config_glob, label, testset, baseline)
        scores = [self._board_scores(e) for e in picked.evaluations]
        chosen = list(metrics) if metrics else _default_metrics(scores)
        check_rankable(chosen)
        with self.session() as session:
            weights, _ = query_facts(session, picked.evaluations[0])
        compare = CompareOptions(
            seed=options.seed,
            permutations=options.permutations,
            bootstrap=options.bootstrap,
            ci_level=options.ci_level,
        )
        first = picked.run_ids[picked.baseline]
        gates = gates_of(picked.test_set.rpartition("@")[0]) if gates_of else None
        if gates:
            names = {str(parse(m)) for m in chosen}
            gates = [g for g in gates if g.metric in names] or None
        against = [
            None if run_id == first else self.compare_runs(  # type: ignore[attr-defined]
                first, run_id, metrics=chosen, gates=gates, options=compare, record=False
            )
            for run_id in picked.run_ids
        ]  # fmt: skip
        board = leaderboard(
            picked.labels, scores, chosen, baseline=picked.baseline, options=options,
            weights=weights, run_ids=picked.run_ids, test_set=picked.test_set, against=against,
        )  # fmt: skip
        return replace(board, notes=picked.notes) if picked.notes else board

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
            where = ids.index(first) if first is not None else _production(session, ids)
            base = ids[where]  # the baseline's scores decide the version
            evaluations, left_out = _common_evaluations(session, ids, base, named=bool(refs))
            ids = [run_id for run_id in ids if run_id not in left_out]
            on = version_name(session, evaluations[ids.index(base)])
            notes = tuple(f"{label} is left out: it has no scores on {on}"
                          for label in _labels(session, left_out)) if left_out else ()  # fmt: skip
            if len(ids) < 2:
                raise InputError(f"a leaderboard needs two runs or more scored on {on}, "
                                 f"got {len(ids)}")  # fmt: skip
            return _Picked(ids, evaluations, _labels(session, ids), ids.index(base), on, notes)

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


def _common_evaluations(
    session: Session, ids: list[int], base: int, *, named: bool
) -> tuple[list[int], list[int]]:
    """Each run's scores on the latest test set version of the baseline (run ``base``), and
    the runs without scores on it: refused when ``named``, else left out (module doc)."""
    latest = latest_evaluations(session, ids)
    options = CompareOptions()
    for run_id in ids:
        run = session.get(Run, run_id)
        if run is not None:
            check_comparable(session, run, latest.get(run_id), options)
    first = session.get(Evaluation, latest[base])
    if first is None:
        raise NotFoundError("evaluation vanished while reading the leaderboard")
    chosen: list[int] = []
    left_out = []
    for run_id in ids:
        match = evaluation_on(session, run_id, first.test_set_version_id)
        if match is not None:
            chosen.append(match)
        elif not named:
            left_out.append(run_id)
        else:
            here, there = version_name(session, latest[base]), version_name(session, latest[run_id])
            raise InputError(
                f"run {base} (the baseline) was scored against {here} and run {run_id} "
                f"against {there}: a leaderboard ranks runs on one test set version; rescore "
                f"it first, e.g. `evalplat rescore {run_id} --testset {here}`"
            )  # fmt: skip
    return chosen, left_out


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
    """Index of production's run among ``ids`` (module doc), else of the first pinned
    baseline, else of the first baseline, else 0."""
    configs = dict(
        session.execute(
            select(Run.id, ConfigVersion.config_id)
            .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
            .where(Run.id.in_(ids))
        ).all()
    )
    gated_against = _gated_against(session)
    rows = [(row.run_id, row.pinned) for row in baseline_rows(session) if row.run_id in ids]
    pinned = {run_id for run_id, is_pinned in rows if is_pinned}
    any_baseline = {run_id for run_id, _ in rows}
    most = max((gated_against.get(configs[r], 0) for r in ids), default=0)
    production = {r for r in ids if most and gated_against.get(configs[r], 0) == most}
    for wanted in (production, pinned, any_baseline):
        for index, run_id in enumerate(ids):
            if run_id in wanted:
                return index
    return 0


def _gated_against(session: Session, recent: int = 2_000) -> dict[int, int]:
    """Per config id, how many other configs' latest gating comparison (of the ``recent``
    comparisons) has a baseline of that config: the night's ``compare_to``."""
    baseline_run, candidate_run = Evaluation.__table__.alias(), Evaluation.__table__.alias()
    base_config, cand_config = ConfigVersion.__table__.alias(), ConfigVersion.__table__.alias()
    base, cand = Run.__table__.alias(), Run.__table__.alias()
    rows = session.execute(
        select(Comparison.options, base_config.c.config_id, cand_config.c.config_id)
        .join(baseline_run, baseline_run.c.id == Comparison.baseline_evaluation_id)
        .join(candidate_run, candidate_run.c.id == Comparison.candidate_evaluation_id)
        .join(base, base.c.id == baseline_run.c.run_id)
        .join(cand, cand.c.id == candidate_run.c.run_id)
        .join(base_config, base_config.c.id == base.c.config_version_id)
        .join(cand_config, cand_config.c.id == cand.c.config_version_id)
        .order_by(Comparison.id.desc())
        .limit(recent)
    ).all()
    latest: dict[int, int] = {}  # candidate config -> baseline config of its latest gating one
    for options, baseline_config, candidate_config in rows:
        if (options or {}).get("gating") and candidate_config not in latest:
            latest[candidate_config] = baseline_config
    counts: dict[int, int] = {}
    for candidate_config, baseline_config in latest.items():
        if baseline_config != candidate_config:
            counts[baseline_config] = counts.get(baseline_config, 0) + 1
    return counts


def _default_metrics(scores: list[pd.DataFrame]) -> list[str]:
    """The relevance metrics (``compare``'s default gates) aggregated as a mean that every
    run was scored with, in the first run's stored order."""
    from evalplat.comparison.thresholds import gated_by_default
    from evalplat.metrics.names import parse

    # each run's metric names taken column-wise: iterating Arrow-backed cells one by one in
    # Python is slow at a night's leaderboard size (docs/performance.md)
    names = [set(frame["metric"].unique()) for frame in scores[1:]]
    common = [m for m in scores[0]["metric"].unique() if all(m in n for n in names)]
    chosen = [m for m in common if gated_by_default(parse(m)) and parse(m).aggregate == "mean"]
    if not chosen:
        raise InputError("the runs share no relevance metric aggregated as a mean; name one "
                         "with --metric")  # fmt: skip
    return chosen
