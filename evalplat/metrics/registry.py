"""The metric registry: canonical names, aliases and parameters of every declared measure.

A metric name follows ir_measures syntax: ``Family(param=value,...)@cutoff``, e.g. ``P@10``,
``P(rel=2)@5``, ``nDCG(gain=exp)@10``, ``AP``. ``str(metric)`` is canonical (family spelled as
registered, parameters sorted, defaults omitted) and ``parse(str(m)) == m`` always, so the name is
a safe key for database columns and report labels. Aliases (``Hit@k``, ``MRR@k``, ``MAP@k``,
``NDCG@k``) and trec_eval names (``ndcg_cut_10``, ``P_5``, ``map``) parse to the same metrics;
reading a name is :mod:`evalplat.metrics.names`, from the tables this module keeps.

A name may carry a namespace (``online:CTR@5``). What a measure is computed from, how it is
aggregated and tested is its declaration (``evalplat.metrics.model.Measure``); the measures
evalplat ships are declared in ``evalplat.metrics.catalogue``, others join with :func:`register`.

This module imports no numerical library: the CLI reads it to build help and ``metrics list``.
Each measure names the function computing it (``module:function``), resolved on first use.
"""

from __future__ import annotations

from evalplat.errors import InputError
from evalplat.metrics.catalogue import GMAX_FROM_QRELS, MEASURES, PARAMS
from evalplat.metrics.model import (
    Aggregate,
    Measure,
    MetricFamily,
    Param,
    VerdictTest,
    format_level,
    format_value,
)

__all__ = [
    "DEFAULT_METRICS",
    "FAMILIES",
    "GMAX_FROM_QRELS",
    "PARAMS",
    "Measure",
    "Metric",
    "MetricFamily",
    "Param",
    "family_of",
    "register",
    "trec_names",
]

# The parameter names every family knows: a family refuses those it does not take (a clear
# error rather than "unknown parameter").
_PARAM_DEFAULTS: dict[str, object] = {name: p.default for name, p in PARAMS.items()}


class Metric:
    """A fully specified metric: measure, cutoff and parameters. ``str()`` is its canonical name.

    ``Metric("P", 10, rel=2)``; parameters equal to their defaults are dropped, so two spellings
    of one metric are equal and hash alike. Immutable.
    """

    __slots__ = ("_params", "_spec", "cutoff", "family")
    family: str
    cutoff: int | None
    _params: tuple[tuple[str, object], ...]
    _spec: Measure

    def __init__(self, family: str, cutoff: int | None = None, **params: object) -> None:
        spec = FAMILIES.get(family)
        if spec is None:
            raise InputError(f"unknown metric family {family!r}")
        if spec.cutoff == "required" and cutoff is None:
            raise InputError(f"{family} needs a cutoff, e.g. {family}@10")
        if spec.cutoff == "none" and cutoff is not None:
            raise InputError(f"{family} takes no cutoff")
        if cutoff is not None and cutoff < 1:
            raise InputError(f"cutoff must be a positive integer, got {cutoff}")
        kept: dict[str, object] = {}
        for name, value in params.items():
            param = PARAMS.get(name)
            if param is None:
                raise InputError(f"{family} takes no parameter {name!r}")
            if name not in spec.params:
                if value != param.default:
                    raise InputError(f"{family} takes no parameter {name!r}")
                continue
            value = param.check(value)
            if value != _default(spec, name):
                kept[name] = value
        if "gains" in kept and kept.get("gain", "linear") != "linear":
            raise InputError("gains replaces gain: write gains={...} or gain=exp, not both")
        if "max_rel" in kept and kept.get("min_rel", 0) >= kept["max_rel"]:  # type: ignore[operator]
            raise InputError("min_rel must be below max_rel")
        for name in spec.params:
            if PARAMS[name].required and name not in kept:
                raise InputError(f"{family} needs the parameter {name!r}, e.g. {name}=...")
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "cutoff", cutoff)
        object.__setattr__(self, "_params", tuple(sorted(kept.items())))
        object.__setattr__(self, "_spec", spec)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Metric is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Metric):
            return NotImplemented
        return (self.family, self.cutoff, self._params) == (
            other.family,
            other.cutoff,
            other._params,
        )

    def __hash__(self) -> int:
        return hash((self.family, self.cutoff, self._params))

    def __repr__(self) -> str:
        return f"Metric({str(self)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        from evalplat.metrics.names import parse  # the name is read back where names are read

        return (parse, (str(self),))

    def param(self, name: str) -> object:
        """The value of a parameter: as written, or its default."""
        return dict(self._params).get(name, _default(self._spec, name))

    @property
    def rel(self) -> int:
        """Binary relevance threshold (grade >= rel is relevant)."""
        value = self.param("rel")
        return value if isinstance(value, int) else 1

    @property
    def gain(self) -> str:
        """``linear`` or ``exp``."""
        return str(self.param("gain"))

    @property
    def gains(self) -> dict[int, float]:
        """The grade-to-gain map of ``gains={...}``; empty when gains follow ``gain``."""
        value = self.param("gains")
        return {int(g): float(v) for g, v in value} if isinstance(value, tuple) else {}

    @property
    def judged_only(self) -> bool:
        """Score the ranking with unjudged documents removed."""
        return bool(self.param("judged_only"))

    @property
    def gmax(self) -> int | str:
        """ERR's top grade, or ``qrels``."""
        value = self.param("gmax")
        return value if isinstance(value, (str, int)) else 4

    @property
    def aggregate(self) -> Aggregate:
        """How per-unit values become the run's figure (``mean``, ``sum`` or ``percentile``)."""
        return self._spec.aggregate_of(dict(self._params))

    @property
    def test(self) -> VerdictTest:
        """The test a verdict on this metric uses (``paired``, ``bootstrap`` or ``none``)."""
        return self._spec.test_of(dict(self._params))

    @property
    def spec(self) -> Measure:
        """The declaration of this metric's measure."""
        return self._spec

    @property
    def higher_is_better(self) -> bool:
        """Direction for regression verdicts; never guessed."""
        return self._spec.higher_is_better

    @property
    def direction(self) -> int:
        """+1 when higher is better, -1 when lower is better."""
        return 1 if self._spec.higher_is_better else -1

    @property
    def gateable(self) -> bool:
        """False for informational measures that a regression gate must not use."""
        return self._spec.gateable

    @property
    def reads_judgments(self) -> bool:
        """True when the measure reads the test set's judgments (``Measure.reads_judgments``)."""
        return self._spec.reads_judgments

    @property
    def moved_by_unjudged(self) -> bool:
        """True when an unjudged document in the ranking can move the value: the measure reads
        judgments and keeps unjudged documents (as non-relevant). A judged-only measure
        (``judged_only=true``, Bpref) drops them first, so the coverage guard does not hold its
        verdict back (grading them can still move it: a target's bound still applies)."""
        return self.reads_judgments and not (self.judged_only or self._spec.drops_unjudged)

    @property
    def params(self) -> dict[str, object]:
        """Parameters that differ from their defaults, by name."""
        return dict(self._params)

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for this metric, or None when trec_eval has no equivalent."""
        if self._params:
            template = self._spec.trec_name_params
            if template is None or not set(self.params) <= set(self._spec.trec_params):
                return None
            values = {name: _trec_value(self.param(name)) for name in self._spec.trec_params}
            return template.format(k=self.cutoff, **values)
        if self.cutoff is None:
            return self._spec.trec_name_no_cutoff
        template = self._spec.trec_name
        return None if template is None else template.format(k=self.cutoff)

    def __str__(self) -> str:
        text = self.family
        if self._params:
            text += "(" + ",".join(f"{k}={format_value(v)}" for k, v in self._params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _trec_value(value: object) -> object:
    """A parameter's value as trec_eval writes it in a name: recall levels comma-separated."""
    if isinstance(value, tuple) and all(isinstance(item, float) for item in value):
        return ",".join(format_level(level) for level in value)
    return value


def _default(spec: Measure, name: str) -> object:
    """A parameter's default in ``spec``: the measure's own, else the parameter's."""
    for param_name, value in spec.defaults:
        if param_name == name:
            return value
    return PARAMS[name].default


FAMILIES: dict[str, Measure] = {}
_LOOKUP: dict[str, str] = {}
# trec_eval's names (with a cutoff, exact), from the declarations on first use
_TREC_NAMES: list[tuple[dict[str, str], dict[str, str]]] = []


def register(measure: Measure, *, params: tuple[Param, ...] = ()) -> Measure:
    """Add a measure (and the parameters only it takes) to the registry; returns it.

    Names and aliases are unique without regard to case, and a parameter name means one thing
    everywhere: registering a clash is an ``InputError``. Registering the same declaration
    twice is a no-op, so a module may register on import.
    """
    if FAMILIES.get(measure.name) == measure:
        return measure
    for param in params:
        known = PARAMS.get(param.name)
        if known is not None and known != param:
            raise InputError(f"parameter {param.name!r} is already declared differently")
    for name in measure.params:
        if name not in PARAMS and name not in {p.name for p in params}:
            raise InputError(f"measure {measure.name}: undeclared parameter {name!r}")
    for name in (measure.name, *measure.aliases):
        if name.lower() in _LOOKUP:
            raise InputError(f"a metric named {name!r} is already registered")
    for param in params:
        PARAMS[param.name] = param
        _PARAM_DEFAULTS[param.name] = param.default
    FAMILIES[measure.name] = measure
    _TREC_NAMES.clear()
    for name in (measure.name, *measure.aliases):
        _LOOKUP[name.lower()] = measure.name
    return measure


for _measure in MEASURES:
    register(_measure)

DEFAULT_METRICS: tuple[str, ...] = ("nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10")


# trec_eval's names, from each measure's declaration: "P_{k}" (also written P.5) and exact names
# like "map"; the names with parameter lists are read by _trec
def trec_names() -> tuple[dict[str, str], dict[str, str]]:
    """trec_eval's name prefixes before ``_k`` and its exact names, to the family."""
    if _TREC_NAMES:
        return _TREC_NAMES[0]
    with_cutoff: dict[str, str] = {}
    exact: dict[str, str] = {}
    for spec in FAMILIES.values():
        if spec.trec_name is not None and spec.trec_name.endswith("_{k}"):
            with_cutoff[spec.trec_name[: -len("_{k}")]] = spec.name
        if spec.trec_name_no_cutoff is not None:
            exact[spec.trec_name_no_cutoff] = spec.name
    _TREC_NAMES.append((with_cutoff, exact))
    return with_cutoff, exact


def family_of(name: str) -> str | None:
    """The registered family a name or alias (any case) stands for; None when none does."""
    return _LOOKUP.get(name.lower())
