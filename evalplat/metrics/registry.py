"""The metric registry: canonical names, aliases, parameters, direction and formulas.

A metric name follows ir_measures syntax: ``Family(param=value,...)@cutoff``, e.g. ``P@10``,
``P(rel=2)@5``, ``nDCG(gain=exp)@10``, ``AP``. ``str(metric)`` is canonical (family spelled as
registered, parameters sorted, defaults omitted) and ``parse(str(m)) == m`` always, so the name is
a safe key for database columns and report labels. Aliases (``Hit@k``, ``MRR@k``, ``MAP@k``,
``NDCG@k``) and trec_eval names (``ndcg_cut_10``, ``P_5``, ``map``) parse to the same metrics.

This module imports no numerical library: the CLI reads it to build help and ``metrics list``.
Each family names the function computing it (``module:function``), resolved on first use.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from evalplat.errors import InputError
from evalplat.inputs.validation import METRIC_MAX_LENGTH

CutoffRule = Literal["required", "optional", "none"]

# Parameter name -> its default. Canonical names leave defaults out.
_PARAM_DEFAULTS: dict[str, object] = {
    "rel": 1,
    "gain": "linear",
    "judged_only": False,
    "gmax": 4,
}
# ERR's gmax: a grade (gdeval's and ir_measures' default, 4) or "qrels": the highest grade in
# the judgments of the evaluated topics
GMAX_FROM_QRELS = "qrels"
_GAINS = ("linear", "exp")


@dataclass(frozen=True)
class MetricFamily:
    """One measure (``nDCG``), whatever its cutoff and parameters."""

    name: str
    description: str
    formula: str
    compute: str  # "module:function" in evalplat.metrics
    cutoff: CutoffRule
    params: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    higher_is_better: bool = True
    # False for counts (NumRet...) and Judged@k: informational (Judged@k feeds the coverage
    # guard of comparisons), never a regression of relevance themselves
    gateable: bool = True
    aggregate: Literal["mean", "sum"] = "mean"
    trec_name: str | None = None  # with ``{k}`` for the cutoff, e.g. "ndcg_cut_{k}"
    trec_name_no_cutoff: str | None = None
    bounded: bool = True  # value always in [0, 1]


@dataclass(frozen=True)
class Metric:
    """A fully specified metric: family, cutoff and parameters. ``str()`` is its canonical name."""

    family: str
    cutoff: int | None = None
    rel: int = 1
    gain: str = "linear"
    judged_only: bool = False
    gmax: int | str = 4
    _spec: MetricFamily = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        spec = FAMILIES.get(self.family)
        if spec is None:
            raise InputError(f"unknown metric family {self.family!r}")
        object.__setattr__(self, "_spec", spec)
        if spec.cutoff == "required" and self.cutoff is None:
            raise InputError(f"{self.family} needs a cutoff, e.g. {self.family}@10")
        if spec.cutoff == "none" and self.cutoff is not None:
            raise InputError(f"{self.family} takes no cutoff")
        if self.cutoff is not None and self.cutoff < 1:
            raise InputError(f"cutoff must be a positive integer, got {self.cutoff}")
        if self.gain not in _GAINS:
            raise InputError(f"gain must be one of {', '.join(_GAINS)}, got {self.gain!r}")
        for name in ("rel", "gain", "judged_only", "gmax"):
            if name not in spec.params and getattr(self, name) != _PARAM_DEFAULTS[name]:
                raise InputError(f"{self.family} takes no parameter {name!r}")
        if self.rel < 1:
            raise InputError(f"rel must be at least 1, got {self.rel}")
        if isinstance(self.gmax, str):
            if self.gmax != GMAX_FROM_QRELS:
                raise InputError(f"gmax must be a grade or 'qrels', got {self.gmax!r}")
        elif self.gmax < 1:
            raise InputError(f"gmax must be at least 1, got {self.gmax}")

    @property
    def spec(self) -> MetricFamily:
        """The registry entry of this metric's family."""
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
        """False for informational counts that a regression gate must not use."""
        return self._spec.gateable

    @property
    def params(self) -> dict[str, object]:
        """Parameters that differ from their defaults, by name."""
        return {
            name: getattr(self, name)
            for name in sorted(self._spec.params)
            if getattr(self, name) != _PARAM_DEFAULTS[name]
        }

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for this metric, or None when trec_eval has no equivalent."""
        if self.params:
            return None
        if self.cutoff is None:
            return self._spec.trec_name_no_cutoff
        template = self._spec.trec_name
        return None if template is None else template.format(k=self.cutoff)

    def __str__(self) -> str:
        text = self.family
        params = self.params
        if params:
            text += "(" + ",".join(f"{k}={_format_value(v)}" for k, v in params.items()) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_F = MetricFamily
_REL = ("rel", "judged_only")
FAMILIES: dict[str, MetricFamily] = {
    f.name: f
    for f in (
        _F("P", "Precision: share of the top k that is relevant.",
           "P@k = |relevant in top k| / k  (k, not the number retrieved)",
           "binary:precision", "required", _REL, trec_name="P_{k}"),
        _F("R", "Recall: share of all relevant documents found in the top k.",
           "R@k = |relevant in top k| / R, R = number of judged relevant (0 when R = 0)",
           "binary:recall", "required", _REL, trec_name="recall_{k}"),
        _F("F1", "Harmonic mean of P@k and R@k.",
           "F1@k = 2 P@k R@k / (P@k + R@k), 0 when both are 0",
           "binary:f1", "required", _REL),
        _F("Success", "1 when a relevant document is in the top k, else 0.",
           "Success@k = [ |relevant in top k| > 0 ]",
           "binary:success", "required", _REL, aliases=("Hit",), trec_name="success_{k}"),
        _F("RR", "Reciprocal rank of the first relevant document (within k if given).",
           "RR@k = 1 / rank of the first relevant document at rank <= k, else 0",
           "rank:reciprocal_rank", "optional", _REL, aliases=("MRR",),
           trec_name_no_cutoff="recip_rank"),
        _F("AP", "Average precision (within k if given), over all judged relevant documents.",
           "AP@k = (1/R) * sum over relevant d at rank r <= k of P@r; 0 when R = 0",
           "rank:average_precision", "optional", _REL, aliases=("MAP",),
           trec_name="map_cut_{k}", trec_name_no_cutoff="map"),
        _F("nDCG", "Normalised discounted cumulative gain (trec_eval's ndcg/ndcg_cut).",
           "nDCG@k = DCG@k / IDCG@k, DCG@k = sum_{r<=k} gain(g_r) / log2(r + 1), gain = g "
           "(linear) or 2^g - 1 (exp), negative grades gain 0; IDCG from all judged grades",
           "gain:ndcg", "optional", ("gain", "judged_only"), aliases=("NDCG",),
           trec_name="ndcg_cut_{k}", trec_name_no_cutoff="ndcg"),
        _F("DCG", "Discounted cumulative gain (not normalised).",
           "DCG@k = sum_{r<=k} gain(g_r) / log2(r + 1)",
           "gain:dcg", "optional", ("gain", "judged_only"), bounded=False),
        _F("CG", "Cumulative gain: sum of the gains of the top k, without discount.",
           "CG@k = sum_{r<=k} gain(g_r), gain = g (linear) or 2^g - 1 (exp); negative grades "
           "and unjudged documents gain 0",
           "gain:cg", "optional", ("gain", "judged_only"), bounded=False),
        _F("Rprec", "Precision at rank R, R = number of judged relevant documents.",
           "Rprec = |relevant in top R| / R; 0 when R = 0",
           "binary:r_precision", "none", _REL, trec_name_no_cutoff="Rprec"),
        _F("Bpref", "Binary preference: relevant documents ranked above judged non-relevant.",
           "Bpref = (1/R) * sum over retrieved relevant d of 1 - min(n_d, R) / min(R, N), "
           "n_d = judged non-relevant ranked above d, N = judged non-relevant; unjudged and "
           "negative grades ignored; a term is 1 when n_d = 0",
           "pairs:bpref", "none", ("rel",), trec_name_no_cutoff="bpref"),
        _F("ERR", "Expected reciprocal rank (Chapelle et al. 2009), graded cascade model.",
           "ERR@k = sum_{r<=k} (1/r) p_r prod_{i<r} (1 - p_i), p = (2^g - 1) / 2^gmax, "
           "gmax = 4 (gdeval, ir_measures) or, with gmax=qrels, the highest grade in the "
           "qrels; negative grades count as 0",
           "gain:err", "optional", ("gmax", "judged_only")),
        _F("Judged", "Share of the top k results that have a judgment (any grade).",
           "Judged@k = |judged in top k| / min(k, number retrieved); 0 with no results",
           "binary:judged", "required", gateable=False),
        _F("AUC", "Probability that a judged relevant document is ranked above a judged "
           "non-relevant one (unretrieved documents rank below all retrieved, tied).",
           "AUC = (correct pairs + ties / 2) / (R N) over (relevant, judged non-relevant) "
           "pairs; negative grades ignored; 0 when R = 0 or N = 0",
           "pairs:auc", "none", ("rel",)),
        _F("KendallTau", "Kendall tau-b between the retrieved order and the grades of the "
           "judged documents in the top k, in [-1, 1].",
           "tau_b = (C - D) / sqrt(n0 (n0 - T)) over the n judged documents in the top k: "
           "C (D) = pairs whose higher-ranked document has the higher (lower) grade, "
           "n0 = n (n - 1) / 2, T = pairs with tied grades; negative grades count as 0; 0 when "
           "n < 2 or all grades tie (no order to agree with; 0 keeps the topic in means and "
           "paired tests)",
           "correlation:kendall_tau", "optional", ("judged_only",), bounded=False),
        _F("Spearman", "Spearman rho between the retrieved order and the grades of the "
           "judged documents in the top k, in [-1, 1].",
           "rho = Pearson correlation of position ranks (first = n) and grade ranks (ties "
           "share their average rank) over the n judged documents in the top k; negative "
           "grades count as 0; 0 when n < 2 or all grades tie (no order to agree with; 0 "
           "keeps the topic in means and paired tests)",
           "correlation:spearman", "optional", ("judged_only",), bounded=False),
        _F("NumRet", "Number of documents retrieved.", "NumRet = |ranking|",
           "counts:num_ret", "none", gateable=False, aggregate="sum", bounded=False,
           trec_name_no_cutoff="num_ret"),
        _F("NumRel", "Number of judged relevant documents.", "NumRel = R",
           "counts:num_rel", "none", ("rel",), gateable=False, aggregate="sum",
           bounded=False, trec_name_no_cutoff="num_rel"),
        _F("NumRelRet", "Number of relevant documents retrieved.",
           "NumRelRet = |relevant in ranking|", "counts:num_rel_ret", "none", ("rel",),
           gateable=False, aggregate="sum", bounded=False, trec_name_no_cutoff="num_rel_ret"),
        _F("NumQ", "Number of topics evaluated.", "NumQ = number of topics (1 per topic)",
           "counts:num_q", "none", gateable=False, aggregate="sum", bounded=False,
           trec_name_no_cutoff="num_q"),
    )
}  # fmt: skip

DEFAULT_METRICS: tuple[str, ...] = ("nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10")

_LOOKUP: dict[str, str] = {}
for _spec in FAMILIES.values():
    for _name in (_spec.name, *_spec.aliases):
        _LOOKUP[_name.lower()] = _spec.name

_NAME_RE = re.compile(r"^\s*(?P<family>[A-Za-z][A-Za-z0-9]*)\s*(?:\((?P<params>[^)]*)\))?\s*"
                      r"(?:@\s*(?P<cutoff>\S+))?\s*$")  # fmt: skip
# trec_eval names: (regex, family); the cutoff group is optional
_TREC_RE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^P_(\d+)$"), "P"),
    (re.compile(r"^recall_(\d+)$"), "R"),
    (re.compile(r"^success_(\d+)$"), "Success"),
    (re.compile(r"^ndcg_cut_(\d+)$"), "nDCG"),
    (re.compile(r"^map_cut_(\d+)$"), "AP"),
    (re.compile(r"^ndcg()$"), "nDCG"),
    (re.compile(r"^map()$"), "AP"),
    (re.compile(r"^recip_rank()$"), "RR"),
    (re.compile(r"^bpref()$"), "Bpref"),
    (re.compile(r"^num_ret()$"), "NumRet"),
    (re.compile(r"^num_rel()$"), "NumRel"),
    (re.compile(r"^num_rel_ret()$"), "NumRelRet"),
    (re.compile(r"^num_q()$"), "NumQ"),
)


def parse(name: str | Metric) -> Metric:
    """Parse a metric name (canonical, alias or trec_eval spelling) into a :class:`Metric`.

    Raises ``InputError`` for unknown names (listing close matches) and invalid parameters.
    """
    if isinstance(name, Metric):
        return name
    text = name.strip()
    for pattern, trec_family in _TREC_RE:
        trec_match = pattern.match(text)
        if trec_match:
            trec_cutoff = trec_match.group(1)
            return Metric(trec_family, int(trec_cutoff) if trec_cutoff else None)
    match = _NAME_RE.match(text)
    family = None if match is None else _LOOKUP.get(match.group("family").lower())
    if match is None or family is None:
        raise InputError(f"unknown metric {name!r}{_suggest(text)}")
    cutoff_text = match.group("cutoff")
    cutoff: int | None = None
    if cutoff_text is not None:
        if not (cutoff_text.isascii() and cutoff_text.isdigit()) or len(cutoff_text) > 9:
            raise InputError(f"metric {name!r}: cutoff must be a positive integer")
        cutoff = int(cutoff_text)
    params: dict[str, object] = {}
    for item in filter(None, (p.strip() for p in (match.group("params") or "").split(","))):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or key not in _PARAM_DEFAULTS:
            raise InputError(f"metric {name!r}: unknown parameter {item!r}")
        params[key] = _parse_value(name, key, value)
    try:
        metric = Metric(family, cutoff, **params)  # type: ignore[arg-type]
    except InputError as error:
        raise InputError(f"metric {name!r}: {error.problem}") from None
    if len(str(metric)) > METRIC_MAX_LENGTH:
        # the canonical name is the database key: it must fit the column on every backend
        raise InputError(
            f"metric name {str(metric)[:40]!r}... is longer than {METRIC_MAX_LENGTH} characters"
        )
    return metric


def _parse_value(name: str, key: str, value: str) -> object:
    if key == "gmax" and value.lower() == GMAX_FROM_QRELS:
        return GMAX_FROM_QRELS
    if key in ("rel", "gmax"):
        if not re.fullmatch(r"-?[0-9]{1,9}", value):
            raise InputError(f"metric {name!r}: {key} must be an integer, got {value!r}")
        return int(value)
    if key == "judged_only":
        if value.lower() not in ("true", "false", "1", "0"):
            raise InputError(f"metric {name!r}: judged_only must be true or false")
        return value.lower() in ("true", "1")
    return value.lower()


def _suggest(text: str) -> str:
    family = re.split(r"[(@]", text, maxsplit=1)[0].strip()
    names = [n for spec in FAMILIES.values() for n in (spec.name, *spec.aliases)]
    close = difflib.get_close_matches(family, names, n=4, cutoff=0.5)
    close += [n for n in names if n.lower() == family.lower() and n not in close]
    if not close:
        return f"; known metrics: {', '.join(FAMILIES)}"
    return f"; did you mean {', '.join(close)}?"


def parse_all(names: list[str] | tuple[str, ...] | None) -> list[Metric]:
    """Parse several names (``DEFAULT_METRICS`` when empty), dropping repeats, keeping order."""
    result: list[Metric] = []
    for name in names or DEFAULT_METRICS:
        metric = parse(name)
        if metric not in result:
            result.append(metric)
    return result
