"""Offline against online in the store: the inputs of ``evalplat.comparison.agreement``, and
the online runs of one A/B pair on one day.

For each config version, its latest complete offline run on a test set (the highest run id;
rescores count, the run's newest evaluation is read) gives the offline means; its online runs
(trigger ``online``, daily windows, on the reserved test set) since a moment give the KPIs per
day with the sessions they count. Both are read as columns (``evalplat.db.bulk.read_frame``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, cast, func, select

from evalplat.comparison.agreement import DEFAULT_KPI, DEFAULT_METRIC, DEFAULT_PERMUTATIONS
from evalplat.db.bulk import read_frame
from evalplat.db.evaluations import Evaluation, MetricMean
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase
from evalplat.store.configs import resolve_config_version
from evalplat.store.events import ONLINE_TRIGGER
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.agreement import Agreement

_MEANS = {"version": "str", "metric": "str", "value": "float64", "topics": "int64"}


@dataclass(frozen=True)
class OnlineAgreement:
    """The agreement of offline metrics on ``test_set`` with online KPIs since ``since``."""

    test_set: str
    since: datetime | None
    versions: list[str]  # versions with an offline run and an online run
    rows: list[Agreement]

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_set": self.test_set,
            "since": None if self.since is None else self.since.isoformat(),
            "versions": self.versions,
            "agreement": [row.to_dict() for row in self.rows],
        }


class OnlineAgreementMixin(StoreBase):
    def agreement_inputs(
        self, test_set: str, since: datetime | None = None
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``offline`` (``version, metric, value``) and ``online`` (``version, day, kpi, value,
        sessions``) as ``evalplat.comparison.agreement`` takes them (module doc)."""
        from evalplat.comparison.agreement import OFFLINE_COLUMNS, ONLINE_COLUMNS

        if test_set.strip() == ONLINE_TEST_SET:
            raise InputError(f"--testset: '{ONLINE_TEST_SET}' holds the online runs; name the "
                             "offline test set to compare them with")  # fmt: skip
        with self.session() as session:
            if session.scalar(select(TestSet.id).where(TestSet.name == test_set)) is None:
                raise NotFoundError(f"no test set named '{test_set}'")
            offline_runs = (
                select(func.max(Run.id))
                .select_from(Run)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .where(TestSet.name == test_set, Run.status == "complete")
                .where(Run.trigger != ONLINE_TRIGGER)
                .group_by(Run.config_version_id)
            )
            offline = read_frame(
                session,
                _means(Run.id.in_(offline_runs)),
                list(_MEANS),
                _MEANS,
            )
            online_runs = (
                select(Run.id)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .where(TestSet.name == ONLINE_TEST_SET, Run.trigger == ONLINE_TRIGGER)
            )
            if since is not None:
                online_runs = online_runs.where(Run.started_at >= since)
            days = {
                run_id: started.date().isoformat()
                for run_id, started, options in session.execute(
                    select(Run.id, Run.started_at, Run.options).where(Run.id.in_(online_runs))
                )
                if (options or {}).get("online", {}).get("window") == "day"
            }
            online = read_frame(
                session,
                _means(Run.id.in_(online_runs), with_run=True),
                ["run_id", *_MEANS],
                {"run_id": "int64", **_MEANS},
            )
        online = online[online["run_id"].isin(list(days))]
        online = online.assign(day=online["run_id"].map(days)).rename(
            columns={"metric": "kpi", "topics": "sessions"}
        )
        return offline[OFFLINE_COLUMNS].reset_index(drop=True), online[ONLINE_COLUMNS].reset_index(
            drop=True
        )

    def online_agreement(
        self,
        test_set: str,
        *,
        since: datetime | None = None,
        metrics: Sequence[str] | None = None,
        kpis: Sequence[str] | None = None,
        pairs: Sequence[tuple[str, str]] | None = None,
        samples: int = DEFAULT_PERMUTATIONS,
        seed: int = 0,
    ) -> OnlineAgreement:
        """How offline metrics on ``test_set`` agree with online KPIs across config versions
        (``evalplat.comparison.agreement``): the (metric, KPI) ``pairs`` a project chose, else
        every one of ``metrics`` against every one of ``kpis``; with neither, nDCG@10 (else the
        first gateable metric stored) against online:CTR (else the first KPI stored). ``samples``
        random orderings test tau above 8 versions (below, every ordering is counted)."""
        from evalplat.comparison.agreement import agreement

        chosen = check_pairs(pairs or [], "agreement") if pairs else None
        chosen_metrics = [name for name, _ in check_pairs([(m, None) for m in metrics or []])]
        chosen_kpis = [name for _, name in check_pairs([(None, k) for k in kpis or []])]
        offline, online = self.agreement_inputs(test_set, since)
        versions = sorted(set(offline["version"]) & set(online["version"]))
        if chosen is None:
            if not chosen_metrics:
                chosen_metrics = _default(offline["metric"], DEFAULT_METRIC, gateable=True)
            if not chosen_kpis:
                chosen_kpis = _default(online["kpi"], DEFAULT_KPI, gateable=False)
            chosen = [(m, k) for m in chosen_metrics for k in chosen_kpis]
        rows = agreement(offline, online, pairs=chosen, samples=samples, seed=seed)
        return OnlineAgreement(test_set=test_set, since=since, versions=versions, rows=rows)

    def online_pair(self, baseline: str, candidate: str, day: str | None = None) -> OnlinePair:
        """The daily online runs of two config versions (``NAME`` or ``NAME@VER``) on ``day``
        (``YYYY-MM-DD``), by default the latest day both were online."""
        with self.session() as session:
            days = [_online_days(session, ref) for ref in (baseline, candidate)]
        shared = sorted(set(days[0]) & set(days[1]))
        if day is None:
            if not shared:
                raise NotFoundError(f"{baseline} and {candidate} have no online day in common; "
                                    "score their events with `evalplat events score`")  # fmt: skip
            day = shared[-1]
        for ref, runs in zip((baseline, candidate), days, strict=True):
            if day not in runs:
                raise NotFoundError(f"{ref} has no online run on {day}")
        return OnlinePair(day=day, baseline_run=days[0][day], candidate_run=days[1][day])


@dataclass(frozen=True)
class OnlinePair:
    """One A/B pair: the online runs of two config versions on the same day."""

    day: str
    baseline_run: int
    candidate_run: int


def check_pairs(
    pairs: Sequence[tuple[str | None, str | None]], where: str | None = None
) -> list[tuple[str, str]]:
    """The pairs with canonical names; an offline metric that is an online measure, or a KPI
    that is not one, is refused (``where`` names the option or key in the message; by default
    ``--metric`` and ``--kpi``)."""
    from evalplat.metrics import parse

    checked = []
    for metric, kpi in pairs:
        names = []
        for name, online, option in ((metric, False, "--metric"), (kpi, True, "--kpi")):
            if name is None:
                names.append("")
                continue
            measure = parse(name)
            label = where or option
            if online and measure.spec.unit != "session":
                raise InputError(f"{label}: {measure} is not an online measure (online:CTR, ...)")
            if not online and measure.spec.unit == "session":
                raise InputError(f"{label}: {measure} is an online measure; a pair names an "
                                 "offline metric, then a KPI")  # fmt: skip
            names.append(str(measure))
        checked.append((names[0], names[1]))
    return checked


def _default(stored: Any, default: str, *, gateable: bool) -> list[str]:
    """``[default]`` when stored, else the first stored name (gateable ones for offline
    metrics: coverage and counts predict nothing), else none."""
    from evalplat.metrics import parse

    present = sorted({str(n) for n in stored if not gateable or parse(str(n)).gateable})
    if default in present:
        return [default]
    return present[:1]


def _online_days(session: Any, ref: str) -> dict[str, int]:
    """{day: online run id} of the config version ``ref`` names (daily windows only)."""
    _, version = resolve_config_version(session, ref)
    rows = session.execute(
        select(Run.id, Run.started_at, Run.options)
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
        .where(TestSet.name == ONLINE_TEST_SET, Run.trigger == ONLINE_TRIGGER)
        .where(Run.config_version_id == version.id)
    )
    return {
        started.date().isoformat(): run_id
        for run_id, started, options in rows
        if (options or {}).get("online", {}).get("window") == "day"
    }


def _means(runs: Any, *, with_run: bool = False) -> Any:
    """Each mean of the newest evaluation of the chosen runs, named by ``NAME@VER``."""
    newest = (
        select(Evaluation.run_id, func.max(Evaluation.id).label("evaluation_id"))
        .group_by(Evaluation.run_id)
        .subquery()
    )
    label = Config.name + "@" + cast(ConfigVersion.version, String)
    columns = [label, MetricMean.metric, MetricMean.value, MetricMean.topics]
    return (
        select(*([Run.id] if with_run else []), *columns)
        .select_from(Run)
        .join(newest, newest.c.run_id == Run.id)
        .join(MetricMean, MetricMean.evaluation_id == newest.c.evaluation_id)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .join(Config, ConfigVersion.config_id == Config.id)
        .where(runs)
        .order_by(Run.id, MetricMean.metric)
    )
