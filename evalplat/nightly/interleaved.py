"""A night's interleaved experiments: score ``online:Preference``, gate it, feed its alert.

For each ``[[online.interleaving]]`` experiment (candidate, baseline) of the ``[online]`` table,
a night:

1. scores the candidate's preference per UTC day (``Store.score_preference``) from the last day
   it scored before (that day may have grown) onwards, as the A/B step scores its arms;
2. takes the experiment's latest day and, for each ``[[gates]]`` entry on ``online:Preference``,
   decides: **regression** when the bootstrap interval over sessions lies wholly below
   ``-max_drop`` (0 by default): the candidate is credibly worse by more than the threshold;
   improvement when it lies wholly above ``max_drop``; unchanged otherwise. Fewer sessions than
   ``[online] min_sessions`` is "insufficient data": logged, never gated, the alert left as it is;
3. keeps the verdict on the day's run (history shows it) and feeds the experiment's judged
   days (every stored day judged alike, "insufficient data" days left out) to the
   ``regression`` alert of (candidate config, test set ``online``, ``online:Preference``) by
   the day rule (``evalplat.nightly.day_rule``): opened once when the regression holds over
   ``open_days`` of ``open_window`` judged days, resolved after ``resolve_days`` clear days.
   When the experiment's traffic ends the alert is retired after ``retire_after_days``
   (``evalplat.nightly.retire``), and its last day is not judged again.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from evalplat.nightly.day_rule import follow
from evalplat.nightly.project import PREFERENCE
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.comparison.verdicts import Gate
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import Project
    from evalplat.store import PreferenceDay, Store
    from evalplat.store.alerts import AlertEvent


def interleaved_night(
    store: Store, project: Project, channels: list[Channel], emit: LogFunction
) -> list[AlertEvent]:
    """Score, gate and alert each interleaved experiment of ``project`` (module doc)."""
    spec = project.online
    if spec is None:
        return []
    gates = [g for g in project.online_gates() if g.metric == PREFERENCE]
    names = [channel.name for channel in channels]
    events: list[AlertEvent] = []
    for candidate, baseline in spec.interleaving:
        config = candidate.partition("@")[0]
        since = last_interleaved_day(store, config)
        days = store.score_preference(candidate, baseline, since=since)
        emit({"step": "interleaving_score", "candidate": candidate, "baseline": baseline,
              "days": len(days),
              "since": None if since is None else since.date().isoformat()})  # fmt: skip
        if not days:
            continue
        ended = _ended(store, project, days[-1].day)
        if ended:
            emit({"step": "interleaving", "candidate": candidate, "baseline": baseline,
                  "day": days[-1].day, "verdict": "ended", "detail": ended})  # fmt: skip
            continue  # its traffic ended: the alert is retired, not judged again
        latest = [d for d in days if d.day == days[-1].day]
        day = min(latest, key=lambda d: d.high)  # two candidate versions that day: the worst
        for gate in gates:
            verdict = _verdict(day, gate, spec.min_sessions)
            emit({"step": "interleaving", "candidate": day.candidate, "baseline": day.baseline,
                  "day": day.day, "sessions": day.sessions,
                  "preference": round(day.preference, 4),
                  "interval": [round(day.low, 4), round(day.high, 4)],
                  "verdict": verdict})  # fmt: skip
            if verdict == "insufficient data":
                continue  # too few sessions: shown, never gated, the alert left as it is
            store.record_preference_verdict(day.run_id, verdict)
            judged = _judged_days(store, config, day.baseline, gate, spec.min_sessions)
            for event in follow(store, gate.confirmation, config, PREFERENCE, judged,
                                _details(day, gate), names):  # fmt: skip
                emit({"step": "alert", "event": event.event, "kind": event.alert.kind,
                      "alert": event.alert.id, "config": config, "testset": ONLINE_TEST_SET,
                      "metric": PREFERENCE})  # fmt: skip
                events.append(event)
    return events


def _ended(store: Store, project: Project, day: str) -> str | None:
    """Why the experiment whose latest day is ``day`` has ended, or None while it goes on: the
    project's logs have gone on ``retire_after_days`` days without it (as an A/B arm ends)."""
    from evalplat.store.online_arms import day_runs

    assert project.online is not None
    starts = [
        run.started_at
        for spec in project.configs
        for run in [*day_runs(store, spec.name), *interleaved_runs(store, spec.name)]
    ]
    latest = max(starts, default=None)
    days = project.online.retire_after_days
    if latest is None or (latest.date() - date.fromisoformat(day)).days < days:
        return None
    return f"no searches since {day} ([online] retire_after_days = {days})"


def _judged_days(
    store: Store, config: str, baseline: str, gate: Gate, min_sessions: int
) -> list[bool]:
    """Per judged day of the experiment (the candidate config against ``baseline``'s config),
    oldest first, whether it regressed: each stored day judged by the gate as the night judges
    its latest day (the worst of the candidate's versions that day)."""
    against = baseline.partition("@")[0]
    by_day: dict[str, list[PreferenceDay]] = {}
    for found in store.preference_days(config):
        if found.baseline.partition("@")[0] == against:
            by_day.setdefault(found.day, []).append(found)
    verdicts = [_verdict(min(days, key=lambda d: d.high), gate, min_sessions)
                for _, days in sorted(by_day.items())]  # fmt: skip
    return [v == "regression" for v in verdicts if v != "insufficient data"]


def _verdict(day: PreferenceDay, gate: Gate, min_sessions: int) -> str:
    if day.sessions < min_sessions:
        return "insufficient data"
    threshold = gate.max_drop or 0.0
    if day.high < -threshold:
        return "regression"
    if day.low > threshold:
        return "improvement"
    return "unchanged"


def last_interleaved_day(store: Store, config: str) -> datetime | None:
    """Start of the latest day scored for the config as an interleaving candidate."""
    starts = [run.started_at for run in interleaved_runs(store, config)]
    return max(starts, default=None)


def interleaved_runs(store: Store, config: str) -> list[Any]:
    """The config's ``online:Preference`` runs (one per day and experiment)."""
    return [
        run
        for run in store.list_runs(config)
        if run.trigger == "online" and run.options.get("online", {}).get("window") == "interleaved"
    ]


def _details(day: PreferenceDay, gate: Gate) -> dict[str, Any]:
    """What the alert says: the experiment, the day, the preference and its interval."""
    return {
        "config": day.candidate.partition("@")[0],
        "test_set": ONLINE_TEST_SET,
        "metric": PREFERENCE,
        "baseline": 0.0,  # no preference either way
        "candidate": day.preference,
        "delta": day.preference,
        "relative_delta": None,
        "p_value": day.p_value,
        "test": "bootstrap",
        "baseline_run": None,
        "candidate_run": day.run_id,
        "comparison_id": None,
        "changes": [
            f"interleaved on {day.day}: {day.candidate} against {day.baseline}, "
            f"{day.sessions} sessions ({day.searches} searches): {day.wins} won, {day.ties} tied, "
            f"{day.losses} lost; 95% interval [{day.low:+.4f}, {day.high:+.4f}], gate max_drop "
            f"{gate.max_drop or 0.0:g}"
        ],
    }
