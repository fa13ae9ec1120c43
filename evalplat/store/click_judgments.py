"""Test set versions whose grades come from interaction logs (``evalplat testset from-events``).

The searches of the selection (every config, or some; from a time on) and their events are
read from the store, turned into judgments by a click model (``evalplat.events.click_models``),
and stored as a new version of the test set through ``import_test_set``: the same validation,
the same content hash (the same log gives the same version), nothing written on bad input.
Each judgment's ``source`` is ``clicks:MODEL``; the version's source records the model, its
parameters and what it was estimated from.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from evalplat.db.events import OnlineEvent, OnlineQuery
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.configs import resolve_config_version
from evalplat.store.testsets import ImportOutcome, TestSetsMixin, check_reserved

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session


class ClickJudgmentsMixin(TestSetsMixin, StoreBase):
    def test_set_from_events(
        self,
        name: str,
        *,
        model: str,
        min_impressions: int,
        configs: Sequence[str] | None = None,
        since: datetime | None = None,
        thresholds: Sequence[float] | None = None,
    ) -> ImportOutcome:
        """A new version of test set ``name`` graded by ``model`` from the stored events."""
        import numpy as np
        import pandas as pd

        from evalplat.events.click_models import DEFAULT_THRESHOLDS, check_model, click_judgments
        from evalplat.testsets.content import TestSetContent

        check_reserved(name)
        check_model(model)
        cuts = tuple(thresholds) if thresholds is not None else DEFAULT_THRESHOLDS[model]
        if since is not None and since.tzinfo is None:
            from evalplat.errors import InputError

            raise InputError("--since needs a time zone (Z or +hh:mm)")
        searches, events = self._click_frames(configs, since)
        estimated = click_judgments(
            searches, events, model=model, min_impressions=min_impressions, thresholds=cuts
        )
        queries = estimated.queries.assign(weight=np.nan, tags=None)
        judgments = estimated.judgments[["query_id", "doc_id", "grade", "source"]]
        provenance = {
            "kind": "events",
            "model": model,
            "min_impressions": min_impressions,
            "thresholds": list(cuts),
            "configs": sorted(configs) if configs else None,
            "since": None if since is None else since.isoformat(),
            "date": utcnow().isoformat(timespec="seconds"),
            **estimated.provenance(),
        }
        content = TestSetContent(queries=pd.DataFrame(queries), judgments=judgments)
        return self.import_test_set(name, content, source=provenance)

    def _click_frames(
        self, configs: Sequence[str] | None, since: datetime | None
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        import pandas as pd

        from evalplat.errors import InputError

        with self.session() as session:
            chosen = _version_ids(session, configs)
            statement = select(OnlineQuery.query_id, OnlineQuery.user_query, OnlineQuery.hit_ids)
            if chosen is not None:
                statement = statement.where(OnlineQuery.config_version_id.in_(chosen))
            if since is not None:
                statement = statement.where(OnlineQuery.timestamp >= since)
            searches = pd.DataFrame(
                session.execute(statement).all(), columns=["query_id", "user_query", "hit_ids"]
            )
            if searches.empty:
                raise InputError("no imported searches to estimate judgments from "
                                 "(import a log with `evalplat events import`)")  # fmt: skip
            picked = select(OnlineEvent.query_id, OnlineEvent.action, OnlineEvent.object_id,
                            OnlineEvent.position).join(
                OnlineQuery, OnlineQuery.query_id == OnlineEvent.query_id)  # fmt: skip
            if chosen is not None:
                picked = picked.where(OnlineQuery.config_version_id.in_(chosen))
            if since is not None:
                picked = picked.where(OnlineQuery.timestamp >= since)
            rows = session.execute(picked).all()
        events = pd.DataFrame(rows, columns=["query_id", "action", "object_id", "position"])
        events["position"] = events["position"].astype("float64")
        return searches, events


def _version_ids(session: Session, configs: Sequence[str] | None) -> list[int] | None:
    """Config version ids of ``configs`` (``NAME``: every version), or None for all."""
    if not configs:
        return None
    ids: list[int] = []
    for ref in configs:
        config, version = resolve_config_version(session, ref)
        ids += [version.id] if "@" in ref else [v.id for v in config.versions]
    return ids
