"""Reading metric names: the canonical spelling, aliases, ir_measures' parameter spellings and
trec_eval's names, each into the :class:`~evalplat.metrics.registry.Metric` it stands for.

``parse("nDCG@10")``, ``parse("NDCG@10")``, ``parse("ndcg_cut_10")`` and
``parse("nDCG(dcg='log2')@10")`` are one metric; an unknown name is an ``InputError`` that lists
close matches. The names known are the registry's (:mod:`evalplat.metrics.registry`), so a
measure registered later is read here with no change.
"""

from __future__ import annotations

import difflib
import re

from evalplat.errors import InputError
from evalplat.inputs.validation import METRIC_MAX_LENGTH
from evalplat.metrics import registry
from evalplat.metrics.catalogue_trec import ALL_TREC
from evalplat.metrics.model import read_levels
from evalplat.metrics.registry import DEFAULT_METRICS, Metric, family_of, trec_names

# The registry's tables are read through the module (``registry.FAMILIES``, ``registry.PARAMS``)
# at each call, never bound here, so a measure registered later, or a registry a test replaces,
# is what a name is read against.

_NAME_RE = re.compile(r"^\s*(?P<family>(?:[A-Za-z][A-Za-z0-9_]*:)?[A-Za-z][A-Za-z0-9_]*)\s*"
                      r"(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<cutoff>\S+))?\s*$")  # fmt: skip


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
    with_cutoff, exact = trec_names()
    if text in exact:
        return Metric(exact[text])
    match = _TREC_CUT_RE.match(text)
    if match and match.group(1) in with_cutoff:
        return Metric(with_cutoff[match.group(1)], int(match.group(2)))
    for pattern, family, param in _TREC_PARAM_RE:
        found = pattern.match(text)
        if found:
            written = found.group(1)
            value = registry.PARAMS[param].read(
                name, "0" + written if written[0] == "." else written
            )
            return Metric(family, None, **{param: value})
    found = _TREC_LEVELS_RE.match(text)
    if found:
        return Metric(
            "IPrecAvg", None, levels=registry.PARAMS["levels"].check(read_levels(found.group(1)))
        )
    found = _TREC_UTILITY_RE.match(text)
    if found:
        weights = (registry.PARAMS[f"u{i}"].read(name, found.group(i)) for i in range(1, 5))
        return Metric("Utility", None, **dict(zip(("u1", "u2", "u3", "u4"), weights, strict=True)))
    found = _TREC_GAINS_RE.match(text)
    if found:
        gains = registry.PARAMS["gains"].read(name, "{" + found.group(3).replace("=", ":") + "}")
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
    with_cutoff, _ = trec_names()
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
    family = None if match is None else family_of(match.group("family"))
    if match is None or family is None:
        raise InputError(f"unknown metric {name!r}{_suggest(text)}")
    cutoff_text = match.group("cutoff")
    cutoff: int | None = None
    params: dict[str, object] = {}
    fraction_param = registry.FAMILIES[family].cutoff_param
    if cutoff_text is not None and fraction_param is not None:
        params[fraction_param] = registry.PARAMS[fraction_param].read(name, cutoff_text)
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
        if not sep or key not in registry.PARAMS:
            raise InputError(f"metric {name!r}: unknown parameter {item!r}")
        if key not in registry.FAMILIES[family].params:
            raise InputError(f"metric {name!r}: {family} takes no parameter {key!r}")
        params[key] = registry.PARAMS[key].read(name, value)
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
    names = [n for spec in registry.FAMILIES.values() for n in (spec.name, *spec.aliases)]
    close = difflib.get_close_matches(family, names, n=4, cutoff=0.5)
    close += [n for n in names if n.lower() == family.lower() and n not in close]
    if not close:
        return f"; known metrics: {', '.join(registry.FAMILIES)}"
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
