"""Runs at the session level: the records a run is made of, and the helpers that every store
module shares to find runs, notice dead ones and describe them.

``resolve_run`` turns ``12``, ``CONFIG@latest``, ``CONFIG@baseline`` or ``CONFIG@2`` into a run id.
``observe_liveness`` marks as ``interrupted`` a ``running`` run whose heartbeat is older than
``stale_after`` seconds, or whose pid is gone on this host, and persists it unless the store is
read-only. ``run_infos`` builds the
``RunInfo`` that ``runs list`` / ``runs show`` print, with the means of the latest evaluation.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from evalplat.db.models import Config, ConfigVersion, Run, RunQuery, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.inputs.validation import ROW_ID_MAX, shown
from evalplat.store.base import utcnow
from evalplat.store.baseline_rows import baseline_rows
from evalplat.store.run_figures import run_figures
from evalplat.store.run_units import RunUnits

if TYPE_CHECKING:
    pass

FINAL_STATUSES = ("complete", "partial", "failed", "interrupted")
# A live runner refreshes its heartbeat every few seconds; two minutes of silence means it died
# (or its machine did) even when we cannot check its pid from here.
STALE_AFTER_SECONDS = 120.0
# Searcher kind recorded for config versions that only exist through ``import-run``.
IMPORT_KIND = "import"


@dataclass(frozen=True)
class QueryOutcome:
    """One query's result in a run: ``ok`` with its hits in rank order, or ``failed``."""

    query_id: str
    status: str  # ok | failed
    hits: Sequence[tuple[str, float | None]] = ()
    latency_ms: float | None = None
    attempts: int = 1
    error: str | None = None
    # document field values read from each hit, parallel to ``hits`` (None: none were read)
    fields: Sequence[Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class RunInfo(RunUnits):
    """What ``runs list`` / ``runs show`` and ``--json`` tell about a run."""

    id: int
    status: str
    config: str
    config_version: int
    config_version_id: int
    searcher: str
    test_set: str
    test_set_version: int
    test_set_version_id: int
    trigger: str
    depth: int
    queries_total: int
    queries_done: int
    queries_failed: int
    started_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime | None
    host: str | None
    pid: int | None
    error: str | None
    results_pruned_at: datetime | None
    evalplat_version: str
    options: dict[str, Any]
    # means of the latest evaluation, the test set version it was scored against and what the
    # figures were scored on (``evalplat.store.run_figures``): ``topics@3, people's grades``
    means: dict[str, float]
    scored_against_version: int | None
    scored_on: str | None = None
    grades: str | None = None  # the grades alone: ``people's grades``

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready. An online run's units are sessions: it has ``sessions``, ``searches``,
        ``events``, ``window`` and ``day`` in place of the query counts."""
        data = asdict(self)
        for key in ("started_at", "finished_at", "heartbeat_at", "results_pruned_at"):
            value = getattr(self, key)
            data[key] = None if value is None else value.isoformat()
        return self.with_units(data)


def run_id_text(text: str) -> str:
    """``#12`` and ``run:12`` are run 12 written so that no one reads a version in it: the
    digits; any other text unchanged."""
    for prefix in ("#", "run:"):
        if text.startswith(prefix) and text[len(prefix) :].isdigit():
            return text[len(prefix) :]
    return text


def resolve_run(session: Session, ref: str | int) -> int:
    """``12``, ``#12`` or ``run:12`` → run 12; ``CONFIG@latest`` → the latest complete run of
    the config's current version (``evalplat.store.configs``: a rollback included);
    ``CONFIG@3`` → the latest complete run of version 3 of the config (``@N`` is always a
    config version); ``CONFIG@baseline`` → its offline baseline run (the only one, or the most
    recently set when several test sets have one; never an online run)."""
    text = run_id_text(str(ref).strip())
    if text.isascii() and text.isdigit():
        if not 1 <= len(text.lstrip("0")) <= 10 or int(text) > ROW_ID_MAX:
            raise NotFoundError(f"no run with id {shown(text)} (run ids are 1 to {ROW_ID_MAX})")
        if session.get(Run, int(text)) is None:
            raise NotFoundError(f"no run with id {text}")
        return int(text)
    name, sep, which = text.rpartition("@")
    config, hash_sign, number = text.rpartition("#")
    if not sep and hash_sign and config and number.isdigit():
        raise InputError(
            f"invalid run reference {text!r}: a run id is written #{number} (or {number}) "
            f"alone; {config}@{number} is the latest complete run of version {number} of "
            f"config '{config}'"
        )
    digits = which.isascii() and which.isdigit()
    if not sep or not name or not (which in ("latest", "baseline") or digits):
        raise InputError(f"invalid run reference {text!r}: expected a run id (12 or #12), "
                         "CONFIG@latest, CONFIG@baseline or CONFIG@VERSION")  # fmt: skip
    config = session.scalar(select(Config).where(Config.name == name))
    if config is None:
        raise NotFoundError(f"no config named '{name}'")
    config_id = config.id
    if which == "baseline":
        return _baseline_run(session, config_id, name)
    latest = (
        select(Run.id)
        .join(ConfigVersion)
        .where(ConfigVersion.config_id == config_id, Run.status == "complete")
        .where(Run.trigger != "online")  # online runs (evalplat.store.events) are named by id
        .order_by(Run.id.desc())
        .limit(1)
    )
    if which == "latest":
        current = config.current_version
        found = session.scalar(latest.where(ConfigVersion.version == current))
        if found is None:
            raise NotFoundError(f"config '{name}' has no complete run of its current version "
                                f"{current} yet; run it with `evalplat run {name}`")  # fmt: skip
        return found
    version = int(which)
    known = list(
        session.scalars(
            select(ConfigVersion.version)
            .where(ConfigVersion.config_id == config_id)
            .order_by(ConfigVersion.version)
        )
    )
    if version not in known:
        listed = ", ".join(str(v) for v in known) or "none"
        raise NotFoundError(f"config '{name}' has no version {version} (has {listed})")
    found = session.scalar(latest.where(ConfigVersion.version == version))
    if found is None:
        raise NotFoundError(f"config '{name}' version {version} has no complete run yet")
    return found


def _baseline_run(session: Session, config_id: int, name: str) -> int:
    """The config's offline baseline: an online run (scored from events, on the ``online`` test
    set) has a baseline of its own for the online comparisons, but a ``@baseline`` reference is
    for comparing ranked results on judgments, so it never names one."""
    rows = baseline_rows(session, config_id)
    online = set(
        session.scalars(
            select(Run.id).where(Run.id.in_([r.run_id for r in rows]), Run.trigger == "online")
        )
    )
    offline = [row for row in rows if row.run_id not in online]
    if offline:
        return max(offline, key=lambda row: (row.set_at, row.run_id)).run_id
    if rows:
        raise NotFoundError(
            f"config '{name}' has no offline baseline (run {rows[0].run_id} is its online "
            f"baseline, named by id); set one with `evalplat baseline set {name} RUN`"
        )
    raise NotFoundError(
        f"config '{name}' has no baseline; set one with `evalplat baseline set {name} RUN`"
    )


def run_row(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFoundError(f"no run with id {run_id}")
    return run


def touch(session: Session, run_id: int) -> None:
    session.execute(
        update(Run)
        .where(
            Run.id == run_id,
            Run.status.in_(("running", "interrupted")),
            Run.host == socket.gethostname(),
            Run.pid == os.getpid(),
        )
        .values(heartbeat_at=utcnow(), status="running", finished_at=None)
    )


def observe_liveness(
    session: Session,
    runs: Sequence[Run],
    stale_after: float = STALE_AFTER_SECONDS,
    *,
    record: bool = True,
) -> None:
    """Mark as ``interrupted`` every ``running`` run whose process is evidently gone.

    With ``record=True`` the mark is persisted. With ``record=False`` (a read-only store) it is
    kept on the loaded rows only, for what the caller reads next; ``forget_liveness`` drops it
    before the session ends, so nothing is written.
    """
    now = utcnow()
    here = socket.gethostname()
    with session.no_autoflush:
        for run in runs:
            if run.status != "running":
                continue
            beat = _aware(run.heartbeat_at or run.started_at)
            dead_here = run.host == here and run.pid is not None and not _pid_alive(run.pid)
            if dead_here or (now - beat).total_seconds() > stale_after:
                failed = count_outcomes(session, run.id, "failed")
                run.status = "interrupted"
                run.finished_at = beat
                run.queries_failed = failed
                run.error = (
                    f"process {run.pid} on {run.host} stopped"
                    if dead_here
                    else f"no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC"
                )
    if record:
        session.flush()


def forget_liveness(session: Session, runs: Sequence[Run]) -> None:
    """Drop the unrecorded marks of ``observe_liveness(record=False)``: the rows read as stored."""
    for run in runs:
        if run in session.dirty:
            session.expire(run)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process with that pid exists
    except OSError:
        return True  # cannot tell (e.g. Windows semantics): rely on the heartbeat
    return True


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything evalplat writes is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def count_outcomes(session: Session, run_id: int, status: str) -> int:
    count = session.scalar(
        select(func.count())
        .select_from(RunQuery)
        .where(RunQuery.run_id == run_id, RunQuery.status == status)
    )
    return int(count or 0)


def run_infos(session: Session, runs: Sequence[Run]) -> list[RunInfo]:
    if not runs:
        return []
    ids = [run.id for run in runs]
    figures = run_figures(session, ids, "latest")
    done = dict(
        session.execute(
            select(RunQuery.run_id, func.count())
            .where(RunQuery.run_id.in_(ids))
            .group_by(RunQuery.run_id)
        ).all()
    )
    names = {
        row[0]: row[1:]
        for row in session.execute(
            select(Run.id, Config.name, ConfigVersion.version, ConfigVersion.searcher)
            .add_columns(TestSet.name, TestSetVersion.version)
            .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
            .join(Config, ConfigVersion.config_id == Config.id)
            .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
            .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
            .where(Run.id.in_(ids))
        )
    }
    infos = []
    for run in runs:
        config, config_version, searcher, test_set, test_set_version = names[run.id]
        infos.append(
            RunInfo(
                id=run.id,
                status=run.status,
                config=config,
                config_version=config_version,
                config_version_id=run.config_version_id,
                searcher=searcher,
                test_set=test_set,
                test_set_version=test_set_version,
                test_set_version_id=run.test_set_version_id,
                trigger=run.trigger,
                depth=run.depth,
                queries_total=run.queries_total,
                queries_done=int(done.get(run.id, 0)),
                queries_failed=run.queries_failed,
                started_at=_aware(run.started_at),
                finished_at=None if run.finished_at is None else _aware(run.finished_at),
                heartbeat_at=None if run.heartbeat_at is None else _aware(run.heartbeat_at),
                host=run.host,
                pid=run.pid,
                error=run.error,
                results_pruned_at=(
                    None if run.results_pruned_at is None else _aware(run.results_pruned_at)
                ),
                evalplat_version=run.evalplat_version,
                options=run.options or {},
                means=dict(figure.means) if (figure := figures.get(run.id)) else {},
                scored_against_version=None if figure is None else figure.judgment_version,
                scored_on=None if figure is None else figure.scored_on,
                grades=None if figure is None else figure.grades_text,
            )
        )
    return infos


def result_columns_of(run_id: int, outcomes: Sequence[QueryOutcome]) -> dict[str, Any] | None:
    """The ranked results of ``outcomes`` as the columns of the ``result`` table (ranks are the
    hits' positions, from 1), in the table's key order: by query id (code points, which is the
    byte order of their UTF-8), then rank. None when no outcome has hits.

    ``query_id``, ``rank``, ``doc_id`` and ``score`` are Arrow arrays, made without a Python
    step per hit: the hits' tuples go to Arrow as one struct column (a loop in C++), the
    query ids are repeated by a take and the ranks counted by NumPy. Made in Python lists, a
    night's 20 million hits cost a few seconds of the main thread, under the lock the search
    threads want. ``fields`` is JSON text per hit, or None when no hit has any."""
    import itertools

    import numpy as np
    import pyarrow as pa

    if not any(o.hits for o in outcomes):
        return None
    # a batch holds each query once; sorting its outcomes spares the bulk write sorting rows
    outcomes = sorted(outcomes, key=lambda o: o.query_id)
    counts = np.fromiter((len(o.hits) for o in outcomes), np.int64, len(outcomes))
    hits = pa.array(
        list(itertools.chain.from_iterable(o.hits for o in outcomes)), _hit_type(), from_pandas=True
    )
    first = np.cumsum(counts) - counts  # each query's first row
    rank = np.arange(1, len(hits) + 1, dtype=np.int64) - np.repeat(first, counts)
    queries = pa.array([o.query_id for o in outcomes], pa.string())
    return {
        "run_id": run_id,
        "query_id": queries.take(pa.array(np.repeat(np.arange(len(outcomes)), counts))),
        "rank": pa.array(rank),
        "doc_id": hits.field("doc_id"),
        "score": hits.field("score"),
        "fields": (
            [_fields_json(o.fields, r) for o in outcomes for r in range(1, len(o.hits) + 1)]
            if any(o.fields for o in outcomes)
            else None
        ),
    }


def _hit_type() -> Any:
    import pyarrow as pa

    return pa.struct([("doc_id", pa.string()), ("score", pa.float64())])


def _fields_json(fields: Sequence[Mapping[str, Any]] | None, rank: int) -> str | None:
    """The field values of the hit at ``rank`` (from 1) as JSON text; None when none were read."""
    if fields is None or rank > len(fields) or not fields[rank - 1]:
        return None
    return json.dumps(fields[rank - 1], ensure_ascii=False, sort_keys=True)
