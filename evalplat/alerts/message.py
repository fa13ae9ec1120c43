"""What an alert says: one metric of one config on one test set, and the queries behind it.

An alert has a ``kind``: ``regression`` (a gated metric got worse), ``needs_judgments`` (a drop
that only unjudged documents explain) or ``operational`` (a run of the config failed: the
backend was down; ``error`` says why, and there are no figures), ``target`` (a run's figure credibly
misses its target; ``target`` says which, and the figure with its interval) or ``drift`` (a slow
slide over a window of runs).

An ``AlertMessage`` is plain data, built by the nightly job from a comparison (or by
``alerts test``), and rendered by each channel in its own shape. Every channel starts from the
same two renderings so they never disagree:

- ``title()``: one line, e.g. ``Regression: nDCG@10 of docs-bm25 on cranfield``,
  ``Needs judgments: ...``, ``Run failed: docs-bm25 on cranfield``, or for the outage of an
  engine several configs search, ``Run failed: engine http://es:9200 down: configs a, b
  failed`` (then ``Recovered: engine http://es:9200``);
- ``facts()``: ordered (label, value) pairs: config, test set, metric,
  ``baseline → candidate``, delta (absolute and relative), what changed (config parameters,
  test set), the runs' operational facts (``Run facts``: queries that returned nothing, a judged
  share that fell; ``evalplat.comparison.facts``), the model grades the verdict rests on
  (``Decided with``), p-value, runs, report;
- ``text()``: the title, the facts and the worst queries as plain text (e-mail, logs).

Numbers are printed with 4 decimals; a missing number (a test message has no
p-value) is left out rather than printed as ``None``. The delta is ``candidate - baseline``;
whether that is a drop depends on the metric's direction, which the comparison already decided
(the ``event`` says whether this is a regression being opened or resolved). A ``retired`` event
says that the alert's subject (its config, test set, gate, target or A/B arm) left the project:
its title is ``Retired: ...`` and its ``note`` says what went; the figures are those it last had.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

ONLINE = "online"  # the test set of online runs (``evalplat.store.testsets.ONLINE_TEST_SET``)

EVENTS = ("opened", "resolved", "retired", "test")
KINDS = ("regression", "needs_judgments", "operational", "target", "drift")
# The words of a title, per kind: (opened, resolved). A retired alert's title says "Retired".
TITLES = {
    "regression": ("Regression", "Resolved"),
    "needs_judgments": ("Needs judgments", "Judged again"),
    "operational": ("Run failed", "Recovered"),
    "target": ("Target missed", "Target met"),
    "drift": ("Drift", "Drift ended"),
}
# How many queries a message lists; the report has the rest.
WORST_QUERIES_SHOWN = 5


@dataclass(frozen=True)
class QueryMove:
    """One query's metric value on both sides (``delta = candidate - baseline``)."""

    query_id: str
    text: str
    baseline: float
    candidate: float

    @property
    def delta(self) -> float:
        return self.candidate - self.baseline


@dataclass(frozen=True)
class AlertMessage:
    """An alert event for one (config, test set, metric, baseline) and what to show with it."""

    event: str
    config: str
    test_set: str
    metric: str
    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = None
    relative_delta: float | None = None
    p_value: float | None = None
    test: str | None = None
    baseline_run: int | None = None
    candidate_run: int | None = None
    worst_queries: tuple[QueryMove, ...] = field(default_factory=tuple)
    # the page of the comparison behind the event (else its run's page, else the site's index)
    report: str | None = None
    alert_id: int | None = None
    # what differs between the baseline's and the candidate's setup, one line per change
    changes: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "regression"
    error: str | None = None
    # a target alert: ``nDCG@10>=0.85: 0.6200 [0.5900, 0.6500] missed``
    target: str | None = None
    # a verdict that rests on a judge's grades: ``model grades: 23% of top-10 grades, judge gpt``
    model_grades: str | None = None
    index: str | None = None  # the report site's index, a second link beside ``report``
    # the note of a hand resolution (``alerts resolve --note``), or why the alert was retired
    note: str | None = None
    # the comparison's operational facts, as ``Fact.to_dict`` gives them (``kind``, ``sentence``,
    # ``figures``, ``run``, ``side``, ``new``, ``line``); ``facts`` in the alert's details
    run_facts: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    # an engine's operational alert (``evalplat.nightly.outages``): the engine, and the configs
    # that failed on it (``config`` and ``test_set`` are then where it was first seen)
    engine: str | None = None
    configs: tuple[str, ...] = field(default_factory=tuple)
    # the alert's confirmation rule as it stood ("regressed 2 nights of 3 (opens at 2 of 3,
    # resolves after 2 clear nights)", ``evalplat.alerts.confirmation``); None for a rule that
    # follows each night alone
    confirmation: str | None = None

    def __post_init__(self) -> None:
        if self.event not in EVENTS:
            raise ValueError(f"alert event must be one of {', '.join(EVENTS)}, got {self.event!r}")
        if self.kind not in KINDS:
            raise ValueError(f"alert kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    # ── renderings shared by the channels ────────────────────────────────────────────────────

    def subject(self) -> str:
        """What the alert is about: ``nDCG@10 of docs-bm25 on cranfield``; an engine's outage
        when it opens: ``engine http://127.0.0.1:9200 down: configs a, b failed``."""
        if self.engine is not None:
            if self.event != "opened" or not self.configs:
                return f"engine {self.engine}"
            return outage_line(self.engine, self.configs)
        where = f"{self.config} on {self.test_set}"
        return where if self.kind == "operational" else f"{self.metric} of {where}"

    def title(self) -> str:
        if self.event == "test":
            return f"Test alert from evalplat: {self.subject()}"
        if self.event == "retired":
            return f"Retired: {self.subject()}"
        opened, resolved = TITLES[self.kind]
        return f"{opened if self.event == 'opened' else resolved}: {self.subject()}"

    def change(self) -> str | None:
        """``0.4120 → 0.3870`` or None when either side is unknown."""
        if self.baseline is None or self.candidate is None:
            return None
        return f"{number(self.baseline, self.metric)} → {number(self.candidate, self.metric)}"

    def delta_text(self) -> str | None:
        """``-0.0250 (-6.07%)``; the relative part only when known."""
        if self.delta is None:
            return None
        text = signed(self.delta, self.metric)
        if self.relative_delta is not None:
            text += f" ({self.relative_delta * 100:+.2f}%)"
        return text

    def facts(self) -> list[tuple[str, str]]:
        engine = self.engine is not None
        rows: list[tuple[str, str | None]] = [
            ("Engine", self.engine),
            ("Configs", ", ".join(self.configs) or None),
            ("Config", None if engine else self.config),
            ("Test set", None if engine else self.test_set),
            ("Retired" if self.event == "retired" else "Note", self.note),
            ("Metric", None if self.kind == "operational" else self.metric),
            ("Error", self.error),
            ("Target", self.target),
            ("Baseline → candidate", self.change()),
            ("Delta", self.delta_text()),
            ("Confirmed", self.confirmation),
            ("What changed", "; ".join(self.changes) or None),
            ("Run facts", "; ".join(fact_line(f) for f in self.run_facts) or None),
            ("Decided with", self.model_grades),
            ("p-value", None if self.p_value is None else p_value_text(self.p_value, self.test)),
            self.runs_fact(),
            ("Next", self.next_step()),
            ("Report", self.report),
        ]
        return [(label, value) for label, value in rows if value is not None]

    def next_step(self) -> str | None:
        """What to run next for a drop only unjudged documents explain."""
        if self.kind != "needs_judgments" or self.event != "opened" or self.candidate_run is None:
            return None
        return f"evalplat unjudged {self.candidate_run}  (documents to judge)"

    def runs_fact(self) -> tuple[str, str | None]:
        """The runs the event is about: ``Runs: baseline run 3, candidate run 9`` for a
        comparison; ``Run: 9`` for an event of one run (a target, a drift, a failed run), which
        has no baseline to name; ``Baseline run: 3`` when only that side is known."""
        base, cand = self.baseline_run, self.candidate_run
        if base is not None and cand is not None:
            return "Runs", f"baseline run {base}, candidate run {cand}"
        if cand is not None:
            return "Run", str(cand)
        return "Baseline run", None if base is None else str(base)

    def query_lines(self) -> list[str]:
        """One line per shown worst query: ``q12  0.8000 → 0.2000 (-0.6000)  boundary layer``."""
        return [
            f"{q.query_id}  {number(q.baseline, self.metric)} → "
            f"{number(q.candidate, self.metric)} ({signed(q.delta, self.metric)})  {q.text}"
            for q in self.worst_queries[:WORST_QUERIES_SHOWN]
        ]

    def text(self) -> str:
        lines = [self.title(), ""]
        width = max(len(label) for label, _ in self.facts())
        lines += [f"{label.ljust(width)}  {value}" for label, value in self.facts()]
        queries = self.query_lines()
        if queries:
            lines += ["", "Queries that moved most:"]
            lines += [f"  {line}" for line in queries]
        return "\n".join(lines) + "\n"

    # ── plain data ───────────────────────────────────────────────────────────────────────────

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (snake_case); ``worst_queries`` as a list of objects with delta,
        left out of an online alert (its units are sessions: ``changes`` counts them)."""
        data = asdict(self)
        data["worst_queries"] = [{**asdict(q), "delta": q.delta} for q in self.worst_queries]
        if self.test_set == ONLINE and not self.worst_queries:
            del data["worst_queries"]
        data["changes"] = list(self.changes)
        data["facts"] = [dict(f) for f in data.pop("run_facts")]
        data["configs"] = list(self.configs)
        if self.engine is None:  # the fields of an engine's alert only
            del data["engine"], data["configs"]
        if self.confirmation is None:
            del data["confirmation"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlertMessage:
        """The inverse of ``to_dict`` (extra keys, such as a query's delta, are ignored)."""
        names = set(cls.__dataclass_fields__)
        values = {key: value for key, value in data.items() if key in names}
        values["worst_queries"] = tuple(
            QueryMove(
                query_id=str(q["query_id"]),
                text=str(q.get("text", "")),
                baseline=float(q["baseline"]),
                candidate=float(q["candidate"]),
            )
            for q in data.get("worst_queries", [])
        )
        values["changes"] = tuple(str(line) for line in data.get("changes") or ())
        values["configs"] = tuple(str(name) for name in data.get("configs") or ())
        values["run_facts"] = tuple(
            dict(f) for f in data.get("facts") or () if isinstance(f, dict) and f.get("sentence")
        )
        return cls(**values)


def outage_line(engine: str, configs: Sequence[str]) -> str:
    """An engine's outage in a line: ``engine http://127.0.0.1:9200 down: configs a, b
    failed`` (``evalplat.nightly.outages``)."""
    word = "config" if len(configs) == 1 else "configs"
    return f"engine {engine} down: {word} {', '.join(configs)} failed"


def fact_line(fact: dict[str, Any]) -> str:
    """A fact's line as the comparison wrote it, else its bare sentence."""
    return str(fact.get("line") or fact["sentence"])


def number(value: float, metric: str = "") -> str:
    """A figure of ``metric``'s kind (``evalplat.metrics.numbers``): 0.4312, 22500, 182.4 ms."""
    from evalplat.metrics.numbers import value_text

    return value_text(value, metric or "score")


def signed(value: float, metric: str = "") -> str:
    from evalplat.metrics.numbers import delta_text

    return delta_text(value, metric or "score")


def p_value_text(p_value: float, test: str | None) -> str:
    # two significant digits, tiny ones in scientific notation: "0.0000" never suggests certainty
    from evalplat.metrics.numbers import p_text

    text = p_text(p_value)
    return f"{text} ({test})" if test else text
