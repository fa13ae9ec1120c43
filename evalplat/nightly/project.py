"""The project file, ``evalplat.toml``: what ``nightly`` runs, compares, alerts and reports.

Relative paths are relative to the file, so a project works from any directory. ``${ENV}``
placeholders are kept as written here and expanded only where they are used (a searcher's
request, an alert channel), so secrets never reach the database or a report.

Errors name the file, the table (``[[configs]] #2``) and the key, and, where it can be found,
the line of that key (see :mod:`evalplat.inputs.toml_lines`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalplat.alerts.confirmation import Confirmation
from evalplat.comparison.targets import Target
from evalplat.comparison.verdicts import Gate
from evalplat.errors import InputError
from evalplat.events.warehouse import Warehouse
from evalplat.inputs.toml_lines import header_line, key_line
from evalplat.judging.spec import JudgeSpec
from evalplat.nightly.day_rule import DAY_RULE

PROJECT_FILE = "evalplat.toml"
_ARRAYS = ("testsets", "configs", "gates", "alerts", "judges", "targets", "online.interleaving",
           "sweeps")  # fmt: skip
ONLINE_KEYS = ("baseline", "metrics", "min_sessions", "retire_after_days", "interleaving",
               "agreement", "open_days", "open_window", "resolve_days")  # fmt: skip
PREFERENCE = "online:Preference"  # scored from interleaved searches, not from an arm's log
_GATE_KEYS = {"metric", "max_drop", "max_relative_drop", "test", "alpha", "consecutive",
              "within", "clear", "unjudged", "segment", "judge", "testset"}  # fmt: skip
# What may make a night exit non-zero ([nightly] fail_on): a regression alert open on a
# production config (one compared with its own baseline), on an experiment (a config with
# compare_to), or a run that could not complete.
FAIL_ON = ("production", "experiment", "outage")
DEFAULT_FAIL_ON = ("production", "outage")
DEFAULT_METRICS_FALLBACK = ("nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10")


@dataclass(frozen=True)
class TestSetSpec:
    __test__ = False

    name: str
    qrels: Path
    queries: Path | None = None
    docs: Path | None = None
    format: str | None = None
    # The default grade-to-gain map of the gain measures (nDCG, DCG, CG) on this test set,
    # canonical (evalplat.metrics.model.GainMap); empty: gain = grade.
    gains: tuple[tuple[int, int | float], ...] = ()


@dataclass(frozen=True)
class ConfigSpec:
    name: str
    searcher: str
    testsets: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    depth: int = 100
    concurrency: int = 4
    # Compare with this config's baseline instead of its own (a "production" config).
    compare_to: str | None = None


@dataclass(frozen=True)
class OnlineSpec:
    """``[online]``: the A/B comparison a night makes over imported events.

    ``baseline`` is the control arm (``NAME``: the config's latest version, or ``NAME@VER``);
    every other version of the project's configs with searches on the same UTC day is a
    candidate. ``metrics`` are the online measures scored per version and day; gates on online
    measures (``[[gates]] metric = "online:CTR"``) decide the alerts. A side with fewer than
    ``min_sessions`` sessions is "insufficient data" and never gated. An arm with no searches
    for ``retire_after_days`` days has its alerts retired (``evalplat.nightly.retire``).
    ``day_rule`` (``open_days``, ``open_window``, ``resolve_days``) says when an online alert
    opens and resolves over the judged days (``evalplat.nightly.day_rule``).
    ``agreement`` is the (offline metric, KPI) pairs the "Offline vs online" pages and
    ``online agreement`` show (empty: the default of ``project_online.agreement_pairs``).
    """

    baseline: str
    metrics: tuple[str, ...]
    min_sessions: int = 30
    retire_after_days: int = 7
    # [[online.interleaving]]: (candidate, baseline) experiments scored as online:Preference
    interleaving: tuple[tuple[str, str], ...] = ()
    agreement: tuple[tuple[str, str], ...] = ()
    # when an online alert opens and resolves over days (evalplat.nightly.day_rule)
    day_rule: Confirmation = DAY_RULE


@dataclass(frozen=True)
class SweepSpec:
    """``[[sweeps]]``: a sweep of a config's params the nightly runs when it is due
    (``evalplat.nightly.sweeps``). ``grid`` holds ``--grid`` texts (``param=[v1, v2]``);
    ``every`` is ``"week"`` (due when none ran in the last 7 days) or a weekday name."""

    config: str
    testset: str
    grid: tuple[str, ...]
    metric: str | None = None
    folds: int = 5
    seed: int = 0
    max_runs: int = 50
    strategy: str = "grid"
    every: str = "week"

    @property
    def key(self) -> str:
        """What names this entry in the store: its config, test set and grid."""
        return f"{self.config} on {self.testset}: {' '.join(self.grid)}"


@dataclass(frozen=True)
class Project:
    path: Path
    database_url: str | None
    testsets: tuple[TestSetSpec, ...]
    configs: tuple[ConfigSpec, ...]
    metrics: tuple[str, ...]
    gates: tuple[Gate, ...]
    alerts: tuple[dict[str, Any], ...]
    reports_dir: Path
    keep_results_days: int | None
    # Where the report site is served from: links in alerts are URLs under it.
    reports_base_url: str | None = None
    # Segments (query tags) with fewer queries are reported, never gated ([segments] min_queries).
    min_segment_queries: int = 20
    judges: tuple[JudgeSpec, ...] = ()
    targets: tuple[Target, ...] = ()
    # [nightly] judge: the judge that grades the night's new unjudged top-k documents before
    # comparing, at most ``judge_budget`` requests a night
    nightly_judge: str | None = None
    judge_budget: int = 200
    # [nightly] fail_on: what makes the night exit non-zero (FAIL_ON)
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    online: OnlineSpec | None = None
    # [events]: a warehouse whose tables hold the logs (evalplat.events.warehouse)
    events: Warehouse | None = None
    # the test set each of ``gates`` names (its ``testset`` key), None: every test set
    gate_testsets: tuple[str | None, ...] = ()
    sweeps: tuple[SweepSpec, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path.parent

    def fails_on(self, config: str) -> bool:
        """Whether a regression alert open on ``config`` fails the night (``fail_on``)."""
        spec = next((c for c in self.configs if c.name == config), None)
        kind = "experiment" if spec is not None and spec.compare_to else "production"
        return kind in self.fail_on

    def gains_of(self, test_set: str) -> tuple[tuple[int, int | float], ...]:
        """The default gain map of a test set (empty when it has none)."""
        return next((t.gains for t in self.testsets if t.name == test_set), ())

    def metrics_for(self, test_set: str, extra: tuple[str, ...] = ()) -> list[str]:
        """The metrics (and gated metrics) run on a test set, its default gain map applied;
        online measures are scored from events instead (:meth:`online_metrics`)."""
        names = [*self.metrics, *(g.metric for g in self.gates), *extra]
        names = [n for n in names if not is_online(n)]
        return list(dict.fromkeys(self._with_gains(test_set, n) for n in names))

    def gates_for(self, test_set: str, tags: Collection[str] | None = None) -> list[Gate]:
        """The gates in force on a test set: the ``[[gates]]`` stated for it, else the default
        rule set ``compare`` applies (:func:`evalplat.comparison.thresholds.default_gates`:
        every relevance metric of :meth:`metrics_for`). A gate on ``nDCG@10`` gates its
        gain-mapped figure. Gates on online measures belong to the online comparison
        (:meth:`ab_gates`); a gate naming another test set is left out, and so, given the test
        set's query ``tags``, is a segment gate on a tag none of its queries carries
        (:mod:`evalplat.nightly.scopes`)."""
        stated = self.stated_gates(test_set)
        if not stated:
            from evalplat.comparison.thresholds import default_gates

            return default_gates(self.metrics_for(test_set))
        return [g for g in stated if tags is None or g.segment is None or g.segment in tags]

    def stated_gates(self, test_set: str) -> list[Gate]:
        """The ``[[gates]]`` stated for a test set (gain-mapped), none on online measures."""
        scopes = self.gate_testsets or (None,) * len(self.gates)
        return [
            replace(g, metric=self._with_gains(test_set, g.metric))
            for g, scope in zip(self.gates, scopes, strict=True)
            if not is_online(g.metric) and scope in (None, test_set)
        ]

    def online_gates(self) -> list[Gate]:
        """The gates stated on online measures (``online:Preference`` among them)."""
        return [g for g in self.gates if is_online(g.metric)]

    def ab_gates(self) -> list[Gate]:
        """The gates in force on the night's A/B comparison: those stated on online measures
        (``online:Preference`` aside: it gates interleaved experiments), else the default rule
        set over the online measures scored (:meth:`online_metrics`)."""
        stated = [g for g in self.online_gates() if g.metric != PREFERENCE]
        if stated or self.online is None:
            return stated
        from evalplat.comparison.thresholds import default_gates
        from evalplat.nightly.day_rule import with_rule

        return [with_rule(g, self.online.day_rule) for g in default_gates(self.online_metrics())]

    def online_metrics(self) -> list[str]:
        """The online measures a night scores: the gated ones first (pages lead with the first),
        else ``online:CTR`` when asked, then ``[online] metrics`` and the others."""
        if self.online is None:
            return []
        asked = [*self.online.metrics, *(n for n in self.metrics if is_online(n))]
        gated = [g.metric for g in self.online_gates() if g.metric != PREFERENCE]
        lead = gated or [n for n in asked if n == "online:CTR"]
        names = [*lead, *asked, *(g.metric for g in self.online_gates())]
        return [n for n in dict.fromkeys(names) if n != PREFERENCE]

    def _with_gains(self, test_set: str, name: str) -> str:
        gains = self.gains_of(test_set)
        if not gains:
            return name
        from evalplat.metrics import parse
        from evalplat.metrics.names import with_default_gains

        return str(with_default_gains(parse(name), gains))


def is_online(name: str) -> bool:
    """Whether a metric is an online measure (scored per session from events)."""
    from evalplat.metrics import parse

    return parse(name).spec.unit == "session"


def find_project(path: str | Path | None = None) -> Path:
    """The project file given, or ``evalplat.toml`` in the working directory."""
    candidate = Path(path) if path is not None else Path(PROJECT_FILE)
    if candidate.is_dir():
        candidate = candidate / PROJECT_FILE
    if not candidate.is_file():
        raise InputError(
            "project file not found (create one, or run `evalplat demo`)", path=candidate
        )
    return candidate


def table_line(path: Path, table: str, index: int, key: str | None = None) -> int | None:
    """Line of the ``index``-th ``[[table]]`` (or ``[table]``) of the project file, or of its
    ``key`` when given (the table's line when the key's is not found), if any."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if key is not None:
        return key_line(text.splitlines(), table, index, key)
    return header_line(text.splitlines(), table, index)


def load_project(path: str | Path | None = None) -> Project:
    """Read and validate a project file."""
    file = find_project(path)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=file) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        from evalplat.searchers.configs import toml_error

        problem, line = toml_error(error)
        raise InputError(f"invalid TOML: {problem}", path=file, line=line) from None
    except RecursionError:
        raise InputError("invalid TOML: nested too deeply", path=file) from None
    except ValueError:  # an integer of more than 4300 digits
        digits = re.compile(r"(?:[0-9]_?){4301}")
        lines = text.splitlines()
        line = next((n for n, row in enumerate(lines, start=1) if digits.search(row)), None)
        raise InputError(
            "invalid TOML: an integer of more than 4300 digits", path=file, line=line
        ) from None
    from evalplat.nightly.project_reader import Reader

    return Reader(file, text).project(data)
