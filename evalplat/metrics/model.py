"""The metric model: what every measure declares, whatever it is computed from.

A measure (:class:`Measure`) is one family of numbers, ``nDCG`` or ``Latency`` alike. It declares

- its **name**, in ir_measures syntax, optionally in a namespace (``online:CTR``);
- its **direction** (``higher_is_better``), which verdicts, colours, history and alerts follow;
- its **inputs**, by name (:data:`INPUTS`): the kernel is called with exactly these, in the
  declared order, then the metric, so a measure of run records never sees a judgment;
- its **unit**: one value per query, or per session for measures of user behaviour;
- its **aggregate**: ``mean`` (weighted by query weights when they are in force), ``sum`` or
  ``percentile`` (the ``p`` parameter; a metric written without ``p`` is the mean);
- the **test** its verdict uses: ``paired`` (the comparison's paired test over units:
  randomization, t-test or Wilcoxon), ``bootstrap`` (a paired bootstrap of the aggregate's
  difference, for aggregates a mean test does not fit, such as percentiles) or ``none``
  (informational: shown, never gated).

Scores, comparisons, gates, history, alerts and pages read these fields and nothing else, so a
new kind of measure is one kernel module plus one declaration (``evalplat.metrics.catalogue``,
or :func:`evalplat.metrics.registry.register` from outside the package).

This module imports no numerical library: the CLI reads it to build help and ``metrics list``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from evalplat.errors import InputError

CutoffRule = Literal["required", "optional", "none"]
Input = Literal["judgments", "ranking", "records", "documents", "events", "subtopics"]
Unit = Literal["query", "session"]
Aggregate = Literal["mean", "sum", "percentile", "geomean"]
VerdictTest = Literal["paired", "bootstrap", "none"]
ParamKind = Literal[
    "int", "choice", "bool", "grade_or_qrels", "number", "name", "gain_map", "levels"
]
# A grade-to-gain map in canonical form: (grade, gain) pairs sorted by grade, without the
# entries that say what the default says (gain = grade for grades ≥ 0, 0 below).
GainMap = tuple[tuple[int, int | float], ...]

# What a kernel may ask for, and where the values come from.
INPUTS: dict[str, str] = {
    "judgments": "the test set version's judgments of the evaluated topics (coded, per topic)",
    "ranking": "the run's ranked results joined with their grades (unjudged marked)",
    "records": "what the run recorded per query: latency and the number of results",
    "documents": "field values of the ranked documents (stored hit fields or the corpus)",
    "events": "user behaviour events attributed to the config version (online measures)",
    "subtopics": "judgments per subtopic (intent) of each topic: the qrels' second column",
}
UNITS: dict[str, str] = {"query": "per query", "session": "per session"}
AGGREGATES: dict[str, str] = {
    "mean": "mean over units (weighted by query weights when they are in force)",
    "sum": "sum over units",
    "percentile": "the p-th percentile over units (parameter p)",
    "geomean": "geometric mean over units, each value floored at 1e-5 (trec_eval's gm_map)",
}
TESTS: dict[str, str] = {
    "paired": "the comparison's paired test over units (randomization, t-test or Wilcoxon)",
    "bootstrap": "a paired bootstrap of the difference of the aggregates",
    "none": "informational: compared and shown, never gated",
}

_NAME = re.compile(r"^(?:[a-z][a-z0-9_]*:)?[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Param:
    """A parameter a measure takes in its name, e.g. ``rel`` in ``P(rel=2)@5``."""

    name: str
    kind: ParamKind
    default: object
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False  # a metric must give it (``Diversity(field=source)``)

    def read(self, metric: str, text: str) -> object:
        """The value written in a metric name (always text there), checked."""
        if self.kind == "gain_map":
            try:
                return self.check(read_gain_map(metric, self.name, text))
            except InputError as error:
                if error.problem.startswith("metric "):
                    raise
                raise InputError(f"metric {metric!r}: {error.problem}") from None
        if self.kind == "levels":
            body = text.strip()
            if not (body.startswith("{") and body.endswith("}")):
                raise InputError(f"metric {metric!r}: {self.name} must be a list like {{0.2,0.5}}")
            try:
                return self.check(read_levels(body[1:-1]))
            except InputError as error:
                raise InputError(f"metric {metric!r}: {error.problem}") from None
        if self.kind == "grade_or_qrels" and text.lower() == "qrels":
            return "qrels"
        if self.kind in ("int", "grade_or_qrels"):
            if not re.fullmatch(r"-?[0-9]{1,9}", text):
                raise InputError(f"metric {metric!r}: {self.name} must be an integer, got {text!r}")
            return self.check(int(text))
        if self.kind == "number":
            if not re.fullmatch(r"-?[0-9]{1,9}(\.[0-9]{1,9})?", text):
                raise InputError(f"metric {metric!r}: {self.name} must be a number, got {text!r}")
            number = float(text)
            return self.check(int(number) if number.is_integer() else number)
        if self.kind == "bool":
            if text.lower() not in ("true", "false", "1", "0"):
                raise InputError(f"metric {metric!r}: {self.name} must be true or false")
            return text.lower() in ("true", "1")
        return self.check(text if self.kind == "name" else text.lower())

    def check(self, value: object) -> object:
        """``value`` when it is valid for this parameter; ``InputError`` otherwise."""
        if self.kind == "grade_or_qrels" and isinstance(value, str):
            if value != "qrels":
                raise InputError(f"{self.name} must be a grade or 'qrels', got {value!r}")
            return value
        if self.kind == "gain_map":
            return gain_map(self.name, value)
        if self.kind == "levels":
            return levels(self.name, value)
        if self.kind == "choice" and value not in self.choices:
            raise InputError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
        if self.kind == "name" and not (
            isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,59}", value)
        ):
            raise InputError(f"{self.name} must be a field name, got {value!r}")
        if self.kind == "bool" and not isinstance(value, bool):
            raise InputError(f"{self.name} must be true or false, got {value!r}")
        if self.kind in ("int", "grade_or_qrels", "number"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{self.name} must be a number, got {value!r}")
            if self.minimum is not None and value < self.minimum:
                low = _shown(self.minimum)
                raise InputError(f"{self.name} must be at least {low}, got {value}")
            if self.maximum is not None and value > self.maximum:
                high = _shown(self.maximum)
                raise InputError(f"{self.name} must be at most {high}, got {value}")
        return value


_GAIN_ENTRY = re.compile(r"\s*(-?[0-9]{1,9})\s*:\s*(-?[0-9]{1,12}(?:\.[0-9]{1,12})?)\s*")


def read_gain_map(metric: str, name: str, text: str) -> dict[int, float]:
    """``{0:0,1:1,2:3}`` as written in a metric name: integer grades to plain numbers."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise InputError(f"metric {metric!r}: {name} must be a map like {{0:0,1:1,2:3}}")
    entries: dict[int, float] = {}
    for item in filter(str.strip, body[1:-1].split(",")):
        match = _GAIN_ENTRY.fullmatch(item)
        if match is None:
            raise InputError(
                f"metric {metric!r}: {name} entry {item.strip()!r} is not grade:gain "
                "(an integer grade, a number gain)"
            )
        grade = int(match.group(1))
        if grade in entries:
            raise InputError(f"metric {metric!r}: {name} names grade {grade} twice")
        entries[grade] = float(match.group(2))
    return entries


def gain_map(name: str, value: object) -> GainMap:
    """A grade-to-gain map checked and in canonical form (see :data:`GainMap`).

    Grades are integers; gains are finite and non-negative. Entries equal to the default gain
    (the grade, 0 for negative grades) are dropped, so two spellings of one map are equal and an
    identity map is no map at all; integral gains are kept as ``int`` so ``3.0`` prints ``3``.
    """
    if isinstance(value, dict):
        pairs: list[object] = list(value.items())
    elif isinstance(value, (tuple, list)):
        pairs = list(value)
    else:
        raise InputError(f"{name} must be a map of grade to gain, got {value!r}")
    kept: dict[int, int | float] = {}
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(f"{name} must be a map of grade to gain, got {value!r}")
        grade, gain = pair
        if isinstance(grade, str) and re.fullmatch(r"-?[0-9]{1,9}", grade.strip()):
            grade = int(grade)  # TOML keys are strings
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(f"{name}: grade {grade!r} is not an integer")
        if isinstance(gain, bool) or not isinstance(gain, (int, float)):
            raise InputError(f"{name}: the gain of grade {grade} must be a number, got {gain!r}")
        if not math.isfinite(gain) or gain < 0:
            raise InputError(
                f"{name}: the gain of grade {grade} must be finite and ≥ 0, got {gain}"
            )
        if grade in kept:
            raise InputError(f"{name} names grade {grade} twice")
        kept[grade] = int(gain) if float(gain).is_integer() else float(gain)
    return tuple((g, v) for g, v in sorted(kept.items()) if v != max(g, 0))


_LEVEL = re.compile(r"\s*([0-9]{0,9}\.?[0-9]{1,12})\s*")


def read_levels(text: str) -> tuple[float, ...]:
    """``0.2,0.5,.8`` as trec_eval writes recall levels: numbers, a leading 0 optional."""
    values = []
    for item in text.split(","):
        match = _LEVEL.fullmatch(item)
        if match is None:
            raise InputError(f"recall level {item.strip()!r} is not a number from 0 to 1")
        values.append(float(match.group(1)))
    return tuple(values)


def levels(name: str, value: object) -> tuple[float, ...]:
    """Recall levels checked: 1 to 101 numbers from 0 to 1, in increasing order (repeats
    allowed), as floats. trec_eval averages levels given out of order wrongly, so they are
    refused here rather than given another value."""
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 101:
        raise InputError(f"{name} must be a list of 1 to 101 recall levels, got {value!r}")
    checked: list[float] = []
    for level in value:
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 <= level <= 1:
            raise InputError(f"{name}: recall level {level!r} is not a number from 0 to 1")
        if checked and level < checked[-1]:
            raise InputError(f"{name} must be in increasing order, got {level} after {checked[-1]}")
        checked.append(float(level))
    return tuple(checked)


def _plain(number: float) -> str:
    """A number without exponent notation, so the name parses back (``1e-07`` would not)."""
    text = str(number)
    if "e" in text:
        text = f"{number:.12f}".rstrip("0").rstrip(".")
    return text


def format_level(level: float) -> str:
    """A recall level as written in a name: ``0.25``, ``0``, ``1``."""
    return str(int(level)) if level.is_integer() else _plain(level)


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def format_value(value: object) -> str:
    """A parameter value as written in a canonical metric name."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple) and all(isinstance(item, float) for item in value):
        return "{" + ",".join(format_level(level) for level in value) + "}"  # recall levels
    if isinstance(value, tuple):  # a gain map, already canonical
        return "{" + ",".join(f"{grade}:{_plain(gain)}" for grade, gain in value) + "}"
    return str(value)


@dataclass(frozen=True)
class Measure:
    """One measure (``nDCG``), whatever its cutoff and parameters: the whole declaration."""

    name: str
    description: str
    formula: str
    compute: str  # "module:function", the module under evalplat.metrics or a dotted path
    cutoff: CutoffRule
    params: tuple[str, ...] = ()  # names of parameters (evalplat.metrics.catalogue.PARAMS)
    # this measure's own default for a parameter it takes, where the measure's source fixes
    # another than the parameter's (Compat's persistence is 0.95, RBP's 0.9)
    defaults: tuple[tuple[str, object], ...] = ()
    aliases: tuple[str, ...] = ()
    higher_is_better: bool = True
    inputs: tuple[Input, ...] = ("ranking", "judgments")
    unit: Unit = "query"
    aggregate: Aggregate = "mean"
    test: VerdictTest = "paired"
    trec_name: str | None = None  # with ``{k}`` for the cutoff, e.g. "ndcg_cut_{k}"
    trec_name_no_cutoff: str | None = None
    # trec_eval's name when the parameters in ``trec_params`` differ from their defaults, with
    # ``{k}`` and ``{param}`` fields, e.g. "Rprec_mult_{mult:.2f}"
    trec_name_params: str | None = None
    trec_params: tuple[str, ...] = ()
    # the parameter a fractional ``@x`` sets, as ir_measures writes ``IPrec@0.1``
    cutoff_param: str | None = None
    bounded: bool = True  # every value in [0, 1]
    value_unit: str = ""  # what a value counts, e.g. "ms"; empty for ratios and scores
    notes: tuple[str, ...] = ()  # edge cases the formula leaves implicit (docs/metrics.md)
    # True when the measure drops unjudged documents whatever its parameters (Bpref): they
    # cannot move its value, so the coverage guard never holds its verdict back.
    drops_unjudged: bool = False
    # True when a unit's value may be unknown (NaN: a failed query has no latency): aggregates
    # leave such units out and comparisons pair only the units known on both sides.
    unknown_values: bool = False
    # The relative change a gate on this measure needs unless it sets a threshold of its own
    # (timing noise must not alert); None: no default threshold.
    max_relative_change: float | None = None
    # True for timings (latency): a verdict needs the baseline's version timed beside the
    # candidate in the same night (evalplat.comparison.paired_latency), since two runs timed
    # apart differ by the machine's load; without such timings the row is shown, not gated.
    paired_timings: bool = False

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InputError(f"measure name {self.name!r}: letters and digits, optional ns: prefix")
        for name in self.inputs:
            if name not in INPUTS:
                raise InputError(f"measure {self.name}: unknown input {name!r}")
        for param_name, _ in self.defaults:
            if param_name not in self.params:
                raise InputError(
                    f"measure {self.name}: a default for {param_name!r}, not a parameter"
                )
        if self.aggregate == "percentile" and "p" not in self.params:
            raise InputError(f"measure {self.name}: a percentile aggregate needs the p parameter")

    @property
    def gateable(self) -> bool:
        """False for informational measures (counts, Judged@k), never a regression themselves."""
        return self.test != "none"

    @property
    def reads_judgments(self) -> bool:
        """True when the test set's judgments enter the value: only such a measure can move
        when unjudged documents are judged (the coverage guard and a target's optimistic
        bound apply to it alone)."""
        return "judgments" in self.inputs

    def aggregate_of(self, params: dict[str, object]) -> Aggregate:
        """The aggregate of one metric: a percentile measure written without ``p`` is the mean."""
        if self.aggregate == "percentile" and params.get("p") is None:
            return "mean"
        return self.aggregate

    def test_of(self, params: dict[str, object]) -> VerdictTest:
        """The verdict test of one metric: a mean of query values is tested with the paired
        test; session measures keep their bootstrap (their units do not pair)."""
        if (
            self.test == "bootstrap"
            and self.aggregate_of(params) == "mean"
            and self.unit == "query"
        ):
            return "paired"
        return self.test

    @property
    def namespace(self) -> str:
        """``online`` for ``online:CTR``; empty for the offline measures."""
        return self.name.partition(":")[0] if ":" in self.name else ""


# The earlier name of the declaration, kept for code written against it.
MetricFamily = Measure
