"""Per-query offline scores and online click-through of config versions, from the store.

The inputs of ``evalplat.comparison.query_clicks``: each version's latest complete offline run on
a test set (the highest run id, as ``online agreement`` picks it) gives its per-query values of
one metric (the run's newest evaluation) and the test set's query texts (the evaluated test set
versions, the newest text of an id winning); the stored searches give, per version and raw text,
searches and clicked searches, counted in SQL so that a large log leaves the database as one row
per distinct text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from evalplat.db.bulk import read_frame
from evalplat.db.evaluations import Evaluation, QueryScore
from evalplat.db.events import OnlineEvent, OnlineQuery
from evalplat.db.models import Config, ConfigVersion, Query, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.metrics.online import CLICK
from evalplat.store.base import StoreBase
from evalplat.store.events import ONLINE_TRIGGER
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session

    from evalplat.comparison.query_clicks import QueryClicks


class OnlineQueriesMixin(StoreBase):
    def query_clicks(
        self,
        test_set: str,
        metric: str = "nDCG@10",
        *,
        versions: Sequence[str] | None = None,
        since: datetime | None = None,
    ) -> QueryClicks:
        """Per-query ``metric`` of each version's latest offline run on ``test_set`` next to the
        click-through of its searches (since ``since``) on the same queries, joined by
        normalised text (``evalplat.comparison.query_clicks``). ``versions`` (``NAME@VER``
        labels) limits the versions; by default every one with an offline run and searches."""
        from evalplat.comparison.query_clicks import query_clicks
        from evalplat.metrics import parse

        name = str(parse(metric))
        if parse(name).spec.unit == "session":
            raise InputError(f"--metric {name}: an online measure; name an offline metric")
        if test_set.strip() == ONLINE_TEST_SET:
            raise InputError(f"'{ONLINE_TEST_SET}' holds the online runs; name an offline test set")
        with self.session() as session:
            if session.scalar(select(TestSet.id).where(TestSet.name == test_set)) is None:
                raise NotFoundError(f"no test set named '{test_set}'")
            evaluations = _latest_offline(session, test_set)
            offline = _per_query(session, evaluations, name)
            queries = _queries(session, evaluations)
            searches = _searches(session, since)
        chosen = (
            list(versions)
            if versions is not None
            else sorted(set(offline["version"]) & set(searches["version"]))
        )
        return query_clicks(name, queries, searches, offline, chosen)


def _label(name: str, version: int) -> str:
    return f"{name}@{version}"


def _latest_offline(session: Session, test_set: str) -> dict[int, str]:
    """{newest evaluation id of each version's latest complete offline run: version label}."""
    latest = (
        select(func.max(Run.id))
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
        .where(TestSet.name == test_set, Run.status == "complete", Run.trigger != ONLINE_TRIGGER)
        .group_by(Run.config_version_id)
    )
    rows = session.execute(
        select(func.max(Evaluation.id), Config.name, ConfigVersion.version)
        .join(Run, Evaluation.run_id == Run.id)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .join(Config, ConfigVersion.config_id == Config.id)
        .where(Run.id.in_(latest))
        .group_by(Run.id, Config.name, ConfigVersion.version)
    ).all()
    return {evaluation: _label(name, version) for evaluation, name, version in rows}


def _per_query(session: Session, evaluations: dict[int, str], metric: str) -> pd.DataFrame:
    """``version, query_id, value`` of ``metric`` in the chosen evaluations."""
    frame = read_frame(
        session,
        select(QueryScore.evaluation_id, QueryScore.query_id, QueryScore.value).where(
            QueryScore.evaluation_id.in_(list(evaluations)), QueryScore.metric == metric
        ),
        ["evaluation_id", "query_id", "value"],
        {"evaluation_id": "int64", "query_id": "str", "value": "float64"},
    )
    frame.insert(0, "version", frame.pop("evaluation_id").map(evaluations))
    return frame


def _queries(session: Session, evaluations: dict[int, str]) -> pd.DataFrame:
    """``query_id, text`` of the test set versions the evaluations scored against."""
    import pandas as pd

    versions = select(Evaluation.test_set_version_id).where(Evaluation.id.in_(list(evaluations)))
    rows = session.execute(
        select(Query.query_id, Query.text)
        .where(Query.test_set_version_id.in_(versions))
        .order_by(Query.test_set_version_id)
    ).all()
    texts = {str(query_id): text or "" for query_id, text in rows}  # the newest version last
    return pd.DataFrame({"query_id": list(texts), "text": list(texts.values())})


def _searches(session: Session, since: datetime | None) -> pd.DataFrame:
    """``version, user_query, searches, clicked``: stored searches per version and raw text."""
    import pandas as pd

    clicked = (
        select(OnlineEvent.query_id.label("search"))
        .where(OnlineEvent.action == CLICK)
        .distinct()
        .subquery()
    )
    statement = (
        select(
            Config.name,
            ConfigVersion.version,
            OnlineQuery.user_query,
            func.count(OnlineQuery.id),
            func.count(clicked.c.search),
        )
        .join(ConfigVersion, OnlineQuery.config_version_id == ConfigVersion.id)
        .join(Config, ConfigVersion.config_id == Config.id)
        .outerjoin(clicked, clicked.c.search == OnlineQuery.query_id)
        .group_by(Config.name, ConfigVersion.version, OnlineQuery.user_query)
    )
    if since is not None:
        statement = statement.where(OnlineQuery.timestamp >= since)
    rows = [
        (_label(name, version), text or "", int(searches), int(clicks))
        for name, version, text, searches, clicks in session.execute(statement)
    ]
    return pd.DataFrame(rows, columns=["version", "user_query", "searches", "clicked"]).astype(
        {"searches": "int64", "clicked": "int64"}
    )
