"""The metric registry: canonical names, aliases and parameters of every declared measure.

A metric name follows ir_measures syntax: ``Family(param=value,...)@cutoff``, e.g. ``P@10``,
``P(rel=2)@5``, ``nDCG(gain=exp)@10``, ``AP``. ``str(metric)`` is canonical (family spelled as
registered, parameters sorted, defaults omitted) and ``parse(str(m)) == m`` always, so the name is
a safe key for database columns and report labels. Aliases (``Hit@k``, ``MRR@k``, ``MAP@k``,
``NDCG@k``) and trec_eval names (``ndcg_cut_10``, ``P_5``, ``map``) parse to the same metrics.

A name may carry a namespace (``online:CTR@5``). What a measure is computed from, how it is
aggregated and tested is its declaration (``evalplat.metrics.model.Measure``); the measures
evalplat ships are declared in ``evalplat.metrics.catalogue``, others join with :func:`register`.

This module imports no numerical library: the CLI reads it to build help and ``metrics list``.
Each measure names the function computing it (``module:function``), resolved on first use.
"""

from __future__ import annotations

import difflib
import re

from evalplat.errors import InputError
from evalplat.inputs.validation import METRIC_MAX_LENGTH
from evalplat.metrics.catalogue import GMAX_FROM_QRELS, MEASURES, PARAMS
from evalplat.metrics.catalogue_trec import ALL_TREC
from evalplat.metrics.model import (
    Aggregate,
    Measure,
    MetricFamily,
    Param,
    VerdictTest,
    format_level,
    format_value,
    read_levels,
)

__all__ = [
    "DEFAULT_METRICS",
    "FAMILIES",
    "GMAX_FROM_QRELS",
    "Measure",
    "Metric",
    "MetricFamily",
    "Param",
    "parse",
    "parse_all",
    "register",
    "with_default_gains",
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

_NAME_RE = re.compile(r"^\s*(?P<family>(?:[A-Za-z][A-Za-z0-9_]*:)?[A-Za-z][A-Za-z0-9_]*)\s*"
                      r"(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<cutoff>\S+))?\s*$")  # fmt: skip


# trec_eval's names, from each measure's declaration: "P_{k}" (also written P.5) and exact names
# like "map"; the names with parameter lists are read by _trec
def _trec_names() -> tuple[dict[str, str], dict[str, str]]:
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


_TREC_CUT_RE = re.compile(r"^([A-Za-z_]+?)[._]([0-9]{1,9})$")
_TREC_FRACTION = r"([0-9]*\.?[0-9]+)"
_TREC_PARAM_RE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(rf"^iprec_at_recall[._]{_TREC_FRACTION}$"), "IPrec", "recall"),
    (re.compile(rf"^Rprec_mult[._]{_TREC_FRACTION}$"), "Rprec", "mult"),
    (re.compile(rf"^set_F[._]{_TREC_FRACTION}$"), "SetF", "beta"),
)
_TREC_LEVELS_RE = re.compile(r"^11pt_avg[._]([0-9.]+(?:,[0-9.]+)*)$")
# trec_eval's -m lists: ``P.5,7,3`` is P_5, P_7 and P_3 (one name, several measures)
_TREC_LIST_RE = re.compile(r"^([A-Za-z_]+?)[._]([0-9.]+(?:,[0-9.]+)+)$")
_TREC_UTILITY_RE = re.compile(r"^utility[._](-?[0-9.]+),(-?[0-9.]+),(-?[0-9.]+),(-?[0-9.]+)$")
_TREC_GAINS_RE = re.compile(r"^(ndcg|ndcg_cut_([0-9]{1,9}))[._]((?:-?[0-9]+=[0-9.]+,?)+)$")
# the measure a name without cutoff means where the family needs one (ranx's `precision`)
_UNCUT = {"P": "SetP", "R": "SetR", "F1": "SetF"}


def _trec(name: str, text: str) -> Metric | None:
    """The metric of a trec_eval name (``P_5``, ``P.5``, ``map``, ``Rprec_mult_0.20``,
    ``utility.2,-1,0,0``, ``ndcg.1=3,2=9``), or None when ``text`` is not one."""
    with_cutoff, exact = _trec_names()
    if text in exact:
        return Metric(exact[text])
    match = _TREC_CUT_RE.match(text)
    if match and match.group(1) in with_cutoff:
        return Metric(with_cutoff[match.group(1)], int(match.group(2)))
    for pattern, family, param in _TREC_PARAM_RE:
        found = pattern.match(text)
        if found:
            written = found.group(1)
            value = PARAMS[param].read(name, "0" + written if written[0] == "." else written)
            return Metric(family, None, **{param: value})
    found = _TREC_LEVELS_RE.match(text)
    if found:
        return Metric("IPrecAvg", None, levels=PARAMS["levels"].check(read_levels(found.group(1))))
    found = _TREC_UTILITY_RE.match(text)
    if found:
        weights = (PARAMS[f"u{i}"].read(name, found.group(i)) for i in range(1, 5))
        return Metric("Utility", None, **dict(zip(("u1", "u2", "u3", "u4"), weights, strict=True)))
    found = _TREC_GAINS_RE.match(text)
    if found:
        gains = PARAMS["gains"].read(name, "{" + found.group(3).replace("=", ":") + "}")
        cutoff = found.group(2)
        return Metric("nDCG", int(cutoff) if cutoff else None, gains=gains)
    return None


def _trec_list(text: str) -> tuple[str, ...]:
    """trec_eval's ``-m P.5,7,3`` as ``P_5``, ``P_7``, ``P_3``: for the measures trec_eval
    takes one value each of a list for (cutoffs, recall levels, Rprec multiples); any other
    name is itself."""
    found = _TREC_LIST_RE.match(text)
    if found is None:
        return (text,)
    prefix = found.group(1)
    with_cutoff, _ = _trec_names()
    if prefix not in with_cutoff and prefix not in ("iprec_at_recall", "Rprec_mult"):
        return (text,)
    return tuple(f"{prefix}_{value}" for value in found.group(2).split(","))


def _respell(name: str, family: str, key: str, value: str) -> tuple[str, str, str]:
    """ir_measures' spellings of a parameter: ``nDCG(dcg='exp-log2')`` is ``gain=exp``,
    ``NumRet(rel=1)`` is ``NumRelRet(rel=1)``, ``SetP(relative=True)`` is ``SetRelP``,
    ``RBP(p=0.8)`` (also NERR10's and Compat's ``p``)
    is ``persist=0.8``; ``SDCG(dcg='log2')``, SDCG's only DCG, is no parameter (an empty key)."""
    value = value.strip("'\"")
    if key == "dcg" and family in ("nDCG", "DCG"):
        gain = {"log2": "linear", "exp-log2": "exp"}.get(value.lower())
        if gain is None:
            raise InputError(f"metric {name!r}: dcg must be log2 or exp-log2, got {value!r}")
        return family, "gain", gain
    if key == "dcg" and family == "SDCG":
        if value.lower() != "log2":
            raise InputError(f"metric {name!r}: SDCG's dcg can only be log2, got {value!r}")
        return family, "", ""
    if key == "rel" and family == "NumRet":
        return "NumRelRet", key, value
    if key == "relative" and family in ("SetP", "SetRelP"):
        if value.lower() not in ("true", "false", "1", "0"):
            raise InputError(f"metric {name!r}: relative must be true or false, got {value!r}")
        return ("SetRelP" if value.lower() in ("true", "1") else "SetP"), "", ""
    if key == "p" and family in ("RBP", "NERR10", "Compat"):
        return family, "persist", value
    return family, key, value


def parse(name: str | Metric) -> Metric:
    """Parse a metric name (canonical, alias or trec_eval spelling) into a :class:`Metric`.

    Raises ``InputError`` for unknown names (listing close matches) and invalid parameters.
    """
    if isinstance(name, Metric):
        return name
    text = name.strip()
    try:
        trec_metric = _trec(name, text)
    except InputError as error:
        raise InputError(f"metric {name!r}: {error.problem}") from None
    if trec_metric is not None:
        return trec_metric
    match = _NAME_RE.match(text)
    family = None if match is None else _LOOKUP.get(match.group("family").lower())
    if match is None or family is None:
        raise InputError(f"unknown metric {name!r}{_suggest(text)}")
    cutoff_text = match.group("cutoff")
    cutoff: int | None = None
    params: dict[str, object] = {}
    fraction_param = FAMILIES[family].cutoff_param
    if cutoff_text is not None and fraction_param is not None:
        params[fraction_param] = PARAMS[fraction_param].read(name, cutoff_text)
    elif cutoff_text is not None:
        if not (cutoff_text.isascii() and cutoff_text.isdigit()) or len(cutoff_text) > 9:
            raise InputError(f"metric {name!r}: cutoff must be a positive integer")
        cutoff = int(cutoff_text)
    elif family in _UNCUT:
        family = _UNCUT[family]
    for item in filter(None, (p.strip() for p in _split_params(match.group("params") or ""))):
        key, sep, value = (part.strip() for part in item.partition("="))
        if sep:
            family, key, value = _respell(name, family, key, value)
            if not key:  # ir_measures' name for what is the only choice here
                continue
        if not sep or key not in PARAMS:
            raise InputError(f"metric {name!r}: unknown parameter {item!r}")
        if key not in FAMILIES[family].params:
            raise InputError(f"metric {name!r}: {family} takes no parameter {key!r}")
        params[key] = PARAMS[key].read(name, value)
    try:
        metric = Metric(family, cutoff, **params)
    except InputError as error:
        raise InputError(f"metric {name!r}: {error.problem}") from None
    if len(str(metric)) > METRIC_MAX_LENGTH:
        # the canonical name is the database key: it must fit the column on every backend
        raise InputError(
            f"metric name {str(metric)[:40]!r}... is longer than {METRIC_MAX_LENGTH} characters"
        )
    return metric


def _split_params(text: str) -> list[str]:
    """``a=1,gains={0:0,2:3}`` into its parameters: commas inside braces belong to a map."""
    items, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:position])
            start = position + 1
    items.append(text[start:])
    return items


def _suggest(text: str) -> str:
    family = re.split(r"[(@]", text, maxsplit=1)[0].strip()
    names = [n for spec in FAMILIES.values() for n in (spec.name, *spec.aliases)]
    close = difflib.get_close_matches(family, names, n=4, cutoff=0.5)
    close += [n for n in names if n.lower() == family.lower() and n not in close]
    if not close:
        return f"; known metrics: {', '.join(FAMILIES)}"
    return f"; did you mean {', '.join(close)}?"


def with_default_gains(metric: Metric, gains: object) -> Metric:
    """``metric`` with a test set's default gain map, when it takes one and names none.

    ``nDCG@10`` under ``{2: 3, 3: 10}`` becomes ``nDCG(gains={2:3,3:10})@10``: the stored name
    says which gains the figure used. A metric with its own map, with ``gain=exp``, or of a
    measure without gains is returned unchanged.
    """
    if "gains" not in metric.spec.params or metric.gains or metric.gain != "linear":
        return metric
    return Metric(metric.family, metric.cutoff, **metric.params, gains=gains)


def parse_all(names: list[str] | tuple[str, ...] | None) -> list[Metric]:
    """Parse several names (``DEFAULT_METRICS`` when empty), dropping repeats, keeping order.

    ``all_trec`` stands for every measure of trec_eval 9's ``-m all_trec``, and a trec_eval
    list such as ``P.5,7,3`` or ``iprec_at_recall..10,.25`` for one measure per value.
    """
    result: list[Metric] = []
    for name in names or DEFAULT_METRICS:
        for each in ALL_TREC if name.strip() == "all_trec" else _trec_list(name.strip()):
            metric = parse(each)
            if metric not in result:
                result.append(metric)
    return result
