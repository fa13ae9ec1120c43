"""``[online]`` of the project file: the A/B comparison a night makes over imported events
(see :mod:`evalplat.nightly.online`).

```toml
[online]
baseline = "web"             # the control arm: NAME (latest version) or NAME@VER
metrics = ["online:CTR"]     # optional: online measures scored (default: every one)
min_sessions = 30            # optional: fewer sessions on a side is "insufficient data"
retire_after_days = 7        # optional: an arm without searches this long has its alerts retired
agreement = [["nDCG@10", "online:CTR"]]  # optional: the pairs "Offline vs online" shows
open_days = 2                # optional: an online alert opens when open_days of the last
open_window = 3              #   open_window judged days regressed (the latest among them)
resolve_days = 2             # optional: and resolves after resolve_days clear days in a row

[[online.interleaving]]      # optional: an interleaved experiment, scored as online:Preference
candidate = "cand"           # NAME or NAME@VER, a config of this project
baseline = "web"             # optional: the other config (default: [online] baseline)
```

Gates and ``[metrics]`` names on online measures need this table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalplat.alerts.confirmation import MOST, Confirmation
from evalplat.comparison.verdicts import Gate
from evalplat.errors import InputError
from evalplat.nightly.day_rule import OPEN_DAYS, OPEN_WINDOW, RESOLVE_DAYS
from evalplat.nightly.project import ONLINE_KEYS, PREFERENCE, OnlineSpec, Project, is_online
from evalplat.nightly.project_values import DAYS_MAX, whole

Fail = Callable[[str, str | None, int, str | None], InputError]


def read_online(
    table: Any,
    fail: Fail,
    configs: set[str],
    metrics: tuple[str, ...],
    gates: tuple[Gate, ...],
) -> OnlineSpec | None:
    """``[online]``; a gate or metric on an online measure needs it."""
    from evalplat.events.sessions import DEFAULT_ONLINE_METRICS
    from evalplat.metrics import parse

    for index, gate in enumerate(gates):
        if not is_online(gate.metric):
            continue
        if table is None:
            raise fail(
                f"gate {gate.metric}: an online measure needs an [online] table naming "
                'the baseline arm (baseline = "NAME" or "NAME@VER")',
                "gates",
                index,
                "metric",
            )
        if gate.segment is not None:
            raise fail(
                f"gate {gate.metric}: online measures have no segments", "gates", index,
                "segment",
            )  # fmt: skip
    if table is None:
        online_names = [n for n in metrics if is_online(n)]
        if online_names:
            raise fail(
                f"{online_names[0]} is an online measure: it needs an [online] table naming "
                'the baseline arm (baseline = "NAME" or "NAME@VER")',
                "metrics",
                0,
                "names",
            )
        return None
    if not isinstance(table, dict):
        raise fail("must be a table", "online", 0, None)
    for key in table:
        if key not in ONLINE_KEYS:
            raise fail(f"unknown key; expected one of: {', '.join(sorted(ONLINE_KEYS))}",
                       "online", 0, key)  # fmt: skip
    baseline = table.get("baseline")
    if not isinstance(baseline, str) or not baseline.strip():
        raise fail('needs baseline = "NAME" or "NAME@VER" (a config of this project)', "online",
                   0, "baseline")  # fmt: skip
    name, at, version = baseline.strip().partition("@")
    if name not in configs:
        raise fail(
            f"baseline names '{name}', which is not a config of this project",
            "online", 0, "baseline",
        )  # fmt: skip
    if at and not (version.isdigit() and int(version) >= 1):
        raise fail('must be "NAME" or "NAME@VER" (VER a number)', "online", 0,
                        "baseline")  # fmt: skip
    names = table.get("metrics", list(DEFAULT_ONLINE_METRICS))
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise fail("must be a non-empty list of online measures", "online", 0, "metrics")
    try:
        chosen = tuple(str(parse(n)) for n in names)
    except InputError as error:
        raise fail(str(error), "online", 0, "metrics") from None
    for chosen_name in chosen:
        if not is_online(chosen_name):
            raise fail(f"{chosen_name} is not an online measure (online:...)",
                            "online", 0, "metrics")  # fmt: skip
        if chosen_name == PREFERENCE:
            raise fail(f"{PREFERENCE} is scored from interleaved searches: declare the "
                       "experiment in [[online.interleaving]]", "online", 0, "metrics")  # fmt: skip
    min_sessions = whole(table.get("min_sessions", 30), fail, "online", 0, "min_sessions",
                         minimum=1, unit="of sessions")  # fmt: skip
    retire = whole(table.get("retire_after_days", 7), fail, "online", 0, "retire_after_days",
                   minimum=1, maximum=DAYS_MAX, unit="of days")  # fmt: skip
    window = whole(table.get("open_window", OPEN_WINDOW), fail, "online", 0, "open_window",
                   minimum=1, maximum=MOST, unit="of days")  # fmt: skip
    open_days = whole(table.get("open_days", min(OPEN_DAYS, window)), fail, "online", 0,
                      "open_days", minimum=1, maximum=window, unit="of days")  # fmt: skip
    resolve_days = whole(table.get("resolve_days", RESOLVE_DAYS), fail, "online", 0,
                         "resolve_days", minimum=1, maximum=MOST, unit="of days")  # fmt: skip
    experiments = _interleaving(table.get("interleaving", []), fail, configs, baseline.strip())
    for index, gate in enumerate(gates):
        if gate.metric == PREFERENCE and not experiments:
            raise fail(f"gate {PREFERENCE}: it needs an interleaved experiment "
                       '([[online.interleaving]] candidate = "NAME")', "gates", index,
                       "metric")  # fmt: skip
    return OnlineSpec(
        baseline=baseline.strip(),
        metrics=chosen,
        min_sessions=min_sessions,
        retire_after_days=retire,
        interleaving=experiments,
        agreement=_agreement(table.get("agreement", []), fail),
        day_rule=Confirmation(open_days, window, resolve_days),
    )


def _interleaving(
    entries: Any, fail: Fail, configs: set[str], default: str
) -> tuple[tuple[str, str], ...]:
    """``[[online.interleaving]]``: (candidate, baseline) per experiment, each a project config."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise fail("must be a list of tables ([[online.interleaving]])", "online", 0,
                   "interleaving")  # fmt: skip
    found: list[tuple[str, str]] = []
    for index, entry in enumerate(entries):
        for key in entry:
            if key not in ("candidate", "baseline"):
                raise fail("unknown key; expected one of: baseline, candidate",
                           "online.interleaving", index, key)  # fmt: skip
        pair = []
        for key in ("candidate", "baseline"):
            value = entry.get(key, default if key == "baseline" else None)
            if not isinstance(value, str) or not value.strip():
                raise fail(f'needs {key} = "NAME" or "NAME@VER"', "online.interleaving", index,
                           key)  # fmt: skip
            name, at, version = value.strip().partition("@")
            if name not in configs:
                raise fail(f"names '{name}', which is not a config of this project",
                           "online.interleaving", index, key)  # fmt: skip
            if at and not (version.isdigit() and int(version) >= 1):
                raise fail('must be "NAME" or "NAME@VER" (VER a number)',
                           "online.interleaving", index, key)  # fmt: skip
            pair.append(value.strip())
        if pair[0].partition("@")[0] == pair[1].partition("@")[0]:
            raise fail("candidate and baseline must be two configs", "online.interleaving",
                       index, "candidate")  # fmt: skip
        if any(c == pair[0] for c, _ in found):
            raise fail(f"{pair[0]} is the candidate of two experiments", "online.interleaving",
                       index, "candidate")  # fmt: skip
        found.append((pair[0], pair[1]))
    return tuple(found)


def _agreement(value: Any, fail: Fail) -> tuple[tuple[str, str], ...]:
    """``agreement = [["nDCG@10", "online:CTR"], ...]``: offline metric, then online KPI."""
    from evalplat.store.online_agreement import check_pairs

    shape = 'must be a list of [offline metric, KPI] pairs, e.g. [["nDCG@10", "online:CTR"]]'
    if not isinstance(value, list):
        raise fail(shape, "online", 0, "agreement")
    pairs = []
    for item in value:
        named = isinstance(item, list) and all(isinstance(name, str) for name in item)
        if not named or len(item) != 2:
            raise fail(shape, "online", 0, "agreement")
        pairs.append((item[0], item[1]))
    try:
        checked = check_pairs(pairs, "agreement")
    except InputError as error:
        raise fail(error.problem.removeprefix("agreement: "), "online", 0, "agreement") from None
    return tuple(dict.fromkeys(checked))


def agreement_pairs(project: Project) -> tuple[tuple[str, str], ...]:
    """The (offline metric, KPI) pairs the project's "Offline vs online" pages show:
    ``[online] agreement`` when given, else every gated offline metric (else the first of
    ``[metrics]``) against every gated online KPI (else the ``[online] metrics``); none without
    an ``[online]`` table."""
    if project.online is None:
        return ()
    if project.online.agreement:
        return project.online.agreement
    gated = list(dict.fromkeys(gate.metric for gate in project.gates))
    offline = [n for n in gated if not is_online(n)] or [
        n for n in project.metrics if not is_online(n)
    ][:1]
    kpis = [n for n in gated if is_online(n)] or list(project.online.metrics)
    return tuple((metric, kpi) for metric in offline for kpi in kpis)
