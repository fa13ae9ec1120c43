"""The intent-aware (diversity) measures of ndeval, as ir_measures names them: their parameter
and declarations (the metric model's data, beside ``evalplat.metrics.catalogue``).

They read judgments per subtopic (the ``subtopics`` input), which only ``evalplat evaluate``
over a qrels file has; anywhere else (stored test sets keep no subtopics) they are refused,
naming what is missing. The kernels are in ``evalplat.metrics.intent_aware``.

This module imports no numerical library.
"""

from __future__ import annotations

from evalplat.metrics.model import Measure, Param

INTENT_AWARE_PARAMS: tuple[Param, ...] = (
    Param("alpha", "number", 0.5, "the redundancy penalty of the intent-aware measures: a "
          "document's gain for a subtopic already covered c times is (1 - alpha)^c (default "
          "0.5, ndeval's)", minimum=0, maximum=1),
)  # fmt: skip

_GAIN = (
    "g_r = sum_s J(d_r, s) (1 - alpha)^C(s, r), J = 1 when grade ≥ rel for subtopic s, C(s, r) = "
    "documents relevant to s above rank r"
)
_COMMON = (
    "Reads the subtopic (second) column of the qrels: `query subtopic doc grade`, as ndeval "
    "and ir_measures read it. N counts the subtopics of the topic with a relevant document; a "
    "topic without one scores 0 (ndeval gives nNRBP no value there).",
    "As ndeval computes them for ir_measures (its `pyndeval` provider), but for the order of "
    "tied scores: here the evaluation's one order (trec_eval's, ties by doc id descending), "
    "where pyndeval breaks ties by doc id ascending.",
)
_JUDGED = (
    "`judged_only=true` drops the documents judged for no subtopic before ranking, as "
    "ir_measures' filter does (a document judged with a negative grade stays)."
)
_AT_ONE = (
    "At k = 1 ndeval leaves this measure undivided (its normalisation starts at rank 2), a "
    "value up to N; here @1 is divided like every k, so values stay in [0, 1]."
)
_IDEAL = (
    "The ideal ranking is ndeval's greedy one: at each rank the judged document of largest "
    "gain given those above it, the largest doc id on a tie."
)

INTENT_AWARE: tuple[Measure, ...] = (
    Measure(
        name="ERR_IA",
        description="Intent-aware ERR (Chapelle et al. 2009) as ndeval computes it, over the "
        "value of a ranking covering every subtopic at every rank.",
        formula="ERR_IA@k = sum_{r≤k} g_r / r / (N sum_{r≤k} 0.5^(r-1) / r), alpha = 0.5; " + _GAIN,
        compute="intent_aware:err_ia",
        cutoff="required",
        params=("rel", "judged_only"),
        inputs=("ranking", "subtopics"),
        notes=(
            "ndeval's binary ERR: a relevant document satisfies the reader of its subtopic "
            "with chance alpha = 0.5, fixed (ir_measures' `ERR_IA` takes no alpha).",
            _AT_ONE,
            _JUDGED,
            *_COMMON,
        ),
    ),
    Measure(
        name="nERR_IA",
        description="Intent-aware ERR over the ideal ranking's (ndeval's nERR-IA).",
        formula="nERR_IA@k = sum_{r≤k} g_r / r / sum_{r≤k} g*_r / r, g* the greedy ideal's "
        "gains, alpha = 0.5; " + _GAIN,
        compute="intent_aware:n_err_ia",
        cutoff="required",
        params=("rel", "judged_only"),
        inputs=("ranking", "subtopics"),
        notes=(_IDEAL, _JUDGED, *_COMMON),
    ),
    Measure(
        name="alpha_DCG",
        description="alpha-DCG (Clarke et al. 2008) over the value of a ranking covering every "
        "subtopic at every rank (ndeval's alpha-DCG).",
        formula="alpha_DCG@k = sum_{r≤k} g_r / log2(r+1) / (N sum_{r≤k} (1-alpha)^(r-1) / "
        "log2(r+1)); " + _GAIN,
        compute="intent_aware:alpha_dcg",
        cutoff="required",
        params=("alpha", "rel", "judged_only"),
        inputs=("ranking", "subtopics"),
        notes=(_AT_ONE, _JUDGED, *_COMMON),
    ),
    Measure(
        name="alpha_nDCG",
        description="alpha-nDCG (Clarke et al. 2008): novelty-discounted DCG over the greedy "
        "ideal ranking's.",
        formula="alpha_nDCG@k = sum_{r≤k} g_r / log2(r+1) / sum_{r≤k} g*_r / log2(r+1), g* "
        "the greedy ideal's gains; " + _GAIN,
        compute="intent_aware:alpha_ndcg",
        cutoff="required",
        params=("alpha", "rel", "judged_only"),
        inputs=("ranking", "subtopics"),
        notes=(_IDEAL, _JUDGED, *_COMMON),
    ),
    Measure(
        name="NRBP",
        description="Novelty- and rank-biased precision (Clarke et al. 2009), over the whole "
        "ranking.",
        formula="NRBP = (1 - (1-alpha)β) / N · sum_r β^(r-1) g_r; " + _GAIN,
        compute="intent_aware:nrbp",
        cutoff="none",
        params=("alpha", "beta", "rel"),
        defaults=(("beta", 0.5),),
        inputs=("ranking", "subtopics"),
        notes=("β is the patience, 0.5 by default as in ndeval.", *_COMMON),
    ),
    Measure(
        name="nNRBP",
        description="NRBP over the greedy ideal ranking's.",
        formula="nNRBP = sum_r β^(r-1) g_r / sum_r β^(r-1) g*_r, g* the greedy ideal's gains; "
        + _GAIN,
        compute="intent_aware:n_nrbp",
        cutoff="none",
        params=("alpha", "beta", "rel"),
        defaults=(("beta", 0.5),),
        inputs=("ranking", "subtopics"),
        notes=(_IDEAL, "β is the patience, 0.5 by default as in ndeval.", *_COMMON),
    ),
    Measure(
        name="AP_IA",
        description="Intent-aware average precision (Agrawal et al. 2009): AP per subtopic, "
        "averaged over the subtopics with equal weight.",
        formula="AP_IA = (1/N) sum_s AP_s, AP_s = sum over retrieved d relevant to s of "
        "|relevant to s at ranks ≤ r_d| / r_d, over R_s",
        compute="intent_aware:ap_ia",
        cutoff="none",
        params=("rel", "judged_only"),
        aliases=("MAP_IA",),
        inputs=("ranking", "subtopics"),
        notes=("ndeval's MAP-IA, over the whole ranking.", _JUDGED, *_COMMON),
    ),
    Measure(
        name="P_IA",
        description="Intent-aware precision (Agrawal et al. 2009): P@k per subtopic, averaged "
        "over the subtopics with equal weight.",
        formula="P_IA@k = (1/N) sum_s |documents relevant to s in the top k| / k",
        compute="intent_aware:precision_ia",
        cutoff="required",
        params=("rel", "judged_only"),
        inputs=("ranking", "subtopics"),
        notes=(_JUDGED, *_COMMON),
    ),
    Measure(
        name="StRecall",
        description="Subtopic recall (Zhai et al. 2003): the share of the subtopics covered "
        "by the top k.",
        formula="StRecall@k = |subtopics with a relevant document in the top k| / N",
        compute="intent_aware:subtopic_recall",
        cutoff="required",
        params=("rel",),
        inputs=("ranking", "subtopics"),
        notes=("ndeval's strec.", *_COMMON),
    ),
)
