"""Nights in the store: when each night began and ended, the alert events that were its own, and
the (config, test set) pairs its project file ran.

A night (``evalplat nightly``) records its start and its pairs before it writes anything, and
its end once its last alert event is stamped, before its reports and deliveries
(``begin_night``, ``end_night``); a pair an earlier night of a file ran and its latest does not
has ended (``ended_pairs``). With an ``[online]`` table, each config's pair on the ``online``
test set is among them, so the table's going ends them too. The alert table stamps each event of
an alert's life (``opened_at``, ``resolved_at``, ``retired_at``: one of each at most, as an
alert opens and ends once), so the events of a night are the stamps between its start and its
end, or after its start while it runs or when it was killed. They are read here and nowhere
else; the index's "Last night" section shows those of the latest night.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import and_, select, update

from evalplat.db.operations import Alert, Night
from evalplat.store.alerts import AlertInfo, _infos
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.testsets import ONLINE_TEST_SET

# The events of an alert's life a night can cause, in the order the index lists them.
NIGHT_EVENTS = ("opened", "resolved", "retired")


@dataclass(frozen=True)
class NightEvent:
    event: str  # opened | resolved | retired
    at: datetime
    alert: AlertInfo  # as it is now


@dataclass(frozen=True)
class NightRecord:
    id: int
    started_at: datetime
    finished_at: datetime | None  # None while it runs, or when it was killed
    events: tuple[NightEvent, ...]  # opened, then resolved, then retired; each by time


def ended_reason(config: str, test_set: str, file: str, configs: Collection[str]) -> str:
    """Why the (config, test set) pair a project ran before is no longer run by its ``file``,
    whose configs are now ``configs``: the one wording of the index's "Ended" rows and of the
    alerts the night retires with them (``evalplat.nightly.retire``). A config's pair on the
    ``online`` test set is run while the file has an ``[online]`` table."""
    if config not in configs:
        return f"config {config} is no longer in {file}"
    if test_set == ONLINE_TEST_SET:
        return f"the [online] table is no longer in {file}"
    return f"test set {test_set} is no longer run for {config}"


class NightsMixin(StoreBase):
    def begin_night(self, file: str | None = None, pairs: Sequence[tuple[str, str]] = ()) -> int:
        """Record that a night begins now, with the (config, test set) ``pairs`` its project
        ``file`` runs; return its id (for ``end_night``)."""
        subjects = None if file is None else {"file": file, "pairs": [list(p) for p in pairs]}
        with self.session() as session:
            night = Night(started_at=utcnow(), subjects=subjects)
            session.add(night)
            session.flush()
            return night.id

    def ended_pairs(self) -> dict[tuple[str, str], tuple[datetime, str]]:
        """(config, test set) → (when, why) of each pair an earlier night of a project file ran
        and that file's latest night no longer runs, nor the latest of any other project file
        sharing the database: when is the start of the first night of that file without it
        since it last ran it. Nights that recorded no pairs are passed over."""
        with self.session() as session:
            nights = session.execute(
                select(Night.started_at, Night.subjects)
                .where(Night.subjects.is_not(None))
                .order_by(Night.id)
            ).all()
        by_file: dict[str, list[tuple[datetime, set[tuple[str, str]]]]] = {}
        for started_at, subjects in nights:
            pairs = {(str(config), str(test_set)) for config, test_set in subjects["pairs"]}
            by_file.setdefault(str(subjects["file"]), []).append((started_at, pairs))
        running = {pair for of_file in by_file.values() for pair in of_file[-1][1]}
        ended: dict[tuple[str, str], tuple[datetime, str]] = {}
        for file, of_file in by_file.items():
            configs = {config for config, _ in of_file[-1][1]}
            for index in range(len(of_file) - 1):
                for pair in of_file[index][1] - running:
                    reason = ended_reason(*pair, Path(file).name, configs)
                    ended[pair] = (of_file[index + 1][0], reason)  # the latest night wins
        return ended

    def end_night(self, night_id: int) -> None:
        """Record that the night ``night_id`` has ended now."""
        with self.session() as session:
            session.execute(update(Night).where(Night.id == night_id).values(finished_at=utcnow()))

    def last_night(self) -> NightRecord | None:
        """The latest night begun and the alert events stamped within it (None before the
        first night). An alert still pending was never announced: its stamp is no event."""
        with self.session() as session:
            night = session.scalar(select(Night).order_by(Night.id.desc()).limit(1))
            if night is None:
                return None
            stamps: dict[str, Any] = {
                "opened": Alert.opened_at,
                "resolved": Alert.resolved_at,
                "retired": Alert.retired_at,
            }
            found: list[tuple[str, datetime, Alert]] = []
            for event in NIGHT_EVENTS:
                column = stamps[event]
                within = [column >= night.started_at]
                if night.finished_at is not None:
                    within.append(column <= night.finished_at)
                query = select(Alert).where(and_(*within))
                if event == "opened":
                    query = query.where(Alert.state != "pending")
                rows = session.scalars(query.order_by(column, Alert.id)).all()
                found += [(event, getattr(row, column.key), row) for row in rows]
            infos = {info.id: info for info in _infos(session, [row for *_, row in found])}
            events = tuple(NightEvent(event, at, infos[row.id]) for event, at, row in found)
            return NightRecord(night.id, night.started_at, night.finished_at, events)
