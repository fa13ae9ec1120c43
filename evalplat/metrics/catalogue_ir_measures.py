"""The measures ir_measures offers beyond trec_eval: the C/W/L family it computes through
cwl_eval (SDCG, NERR8-NERR11, INST, INSQ, BPM), Compat and Accuracy. Their parameters and
declarations (the metric model's data, beside ``evalplat.metrics.catalogue``).

This module imports no numerical library.
"""

from __future__ import annotations

from evalplat.metrics.model import Measure, Param

IR_MEASURES_PARAMS: tuple[Param, ...] = (
    Param("max_rel", "int", None, "the top grade of the scale: a grade g gains (min(max(g, 0), "
          "max_rel) - min_rel) / (max_rel - min_rel), clipped to [0, 1] (required, as in "
          "ir_measures)", required=True, minimum=1),
    Param("min_rel", "int", 0, "the grade that gains 0 in the C/W/L measures (default 0); "
          "grades below it gain 0 too", minimum=0),
    Param("T", "number", 1, "the total gain the reader wants, in documents of the top grade "
          "(default 1)", minimum=0),
    Param("normalize", "bool", True, "`false` leaves Compat undivided by the ideal ranking's "
          "own RBO (default `true`)"),
)  # fmt: skip

_CWL = ("max_rel", "min_rel")
_GAIN = "gain = (min(max(g, 0), max_rel) - min_rel) / (max_rel - min_rel), floored at 0"
_CWL_NOTES = (
    "A C/W/L measure (Moffat et al.), as cwl_eval computes it for ir_measures: the expected "
    "gain per document examined, sum_i W_i gain_i, where W_i is proportional to the chance "
    "C_1 ··· C_{i-1} of reaching rank i and is normalised over ranks 1 to 1000 (the ranking "
    "is cut at 1000 and padded with documents of gain 0).",
    "Unjudged documents and negative grades gain 0; `max_rel` is required, as in ir_measures "
    "(`SDCG(max_rel=3)@10` on a 0-3 scale).",
)

CWL: tuple[Measure, ...] = (
    Measure(
        name="SDCG",
        description="Scaled DCG: DCG@k over the DCG of k documents of the top grade.",
        formula="SDCG@k = sum_{r<=k} gain_r / log2(r + 1) / sum_{r<=k} 1 / log2(r + 1), " + _GAIN,
        compute="cwl:sdcg",
        cutoff="required",
        params=_CWL,
        notes=(
            "nDCG as if at least k documents of the top grade existed (Järvelin and "
            "Kekäläinen 2002 in cwl_eval's C/W/L form, ir_measures' `SDCG`); k above 1000 "
            "counts as 1000.",
            *_CWL_NOTES,
        ),
    ),
    Measure(
        name="NERR8",
        description="Not (but nearly) ERR, equation 8 of Azzopardi et al. 2021: ERR's "
        "gain-based stopping, truncated at k.",
        formula="C_i = 1 - gain_i for i < k, 0 from k on; " + _GAIN,
        compute="cwl:nerr8",
        cutoff="required",
        params=_CWL,
        notes=_CWL_NOTES,
    ),
    Measure(
        name="NERR9",
        description="Not (but nearly) ERR, equation 9 of Azzopardi et al. 2021: gain-based "
        "stopping with ERR's reciprocal-rank discount, truncated at k.",
        formula="C_i = i / (i + 1) · (1 - gain_i) for i < k, 0 from k on; " + _GAIN,
        compute="cwl:nerr9",
        cutoff="required",
        params=_CWL,
        notes=_CWL_NOTES,
    ),
    Measure(
        name="NERR10",
        description="Not (but nearly) ERR, equation 10 of Azzopardi et al. 2021: gain-based "
        "stopping with RBP's persistence p.",
        formula="C_i = p · (1 - gain_i), p = persist (0.9); " + _GAIN,
        compute="cwl:nerr10",
        cutoff="none",
        params=(*_CWL, "persist"),
        notes=("ir_measures' `NERR10(p=0.8)` is `NERR10(persist=0.8)`; no cutoff.", *_CWL_NOTES),
    ),
    Measure(
        name="NERR11",
        description="Not (but nearly) ERR, equation 11 of Azzopardi et al. 2021: gain-based "
        "stopping with INSQ's goal T.",
        formula="C_i = ((i + 2T - 1) / (i + 2T))² · (1 - gain_i); " + _GAIN,
        compute="cwl:nerr11",
        cutoff="none",
        params=(*_CWL, "T"),
        notes=("No cutoff.", *_CWL_NOTES),
    ),
    Measure(
        name="INST",
        description="INST (Moffat et al. 2015): an adaptive reader who wants T units of gain "
        "and stops sooner as it is found.",
        formula="C_i = ((i + T + T_i - 1) / (i + T + T_i))², T_i = T - sum_{j<=i} gain_j; " + _GAIN,
        compute="cwl:inst",
        cutoff="none",
        params=(*_CWL, "T"),
        notes=_CWL_NOTES,
    ),
    Measure(
        name="INSQ",
        description="INSQ (Moffat et al. 2012): INST's reader without the adaptation to the "
        "gain found.",
        formula="C_i = ((i + 2T - 1) / (i + 2T))²; " + _GAIN,
        compute="cwl:insq",
        cutoff="none",
        params=(*_CWL, "T"),
        notes=_CWL_NOTES,
    ),
    Measure(
        name="BPM",
        description="Bejeweled player model (Zhang et al. 2017), static form: the reader stops "
        "at k documents or once T units of gain are found.",
        formula="BPM@k = sum_{i<=d} gain_i / d, d = min(k, the first rank where the gain so far "
        "reaches T); " + _GAIN,
        compute="cwl:bpm",
        cutoff="required",
        params=(*_CWL, "T"),
        notes=(
            "cwl_eval's static BPM (its C_i = 1 while the gain so far is below T and i < k), "
            "which ir_measures offers as `BPM(T=...)@k`.",
            *_CWL_NOTES,
        ),
    ),
)

OTHERS: tuple[Measure, ...] = (
    Measure(
        name="Compat",
        description="Compatibility (Clarke et al. 2020): the rank-biased overlap of the ranking "
        "with an ideal ranking of the relevant documents.",
        formula="Compat = RBO(run, ideal) / RBO(ideal, ideal), RBO(a, b) = sum_{d<=D} p^(d-1) "
        "|a_{:d} ∩ b_{:d}| / d / sum_{d<=D} p^(d-1), D = max(|run|, |ideal|), p = persist "
        "(0.95); ideal = judged documents of grade ≥ 1 by grade, ties in the run's order, "
        "those not retrieved last",
        compute="compat:compat",
        cutoff="none",
        params=("persist", "normalize"),
        defaults=(("persist", 0.95),),
        notes=(
            'Follows Clarke, Vtyurina and Smucker, "Assessing top-k preferences" (2020; TOIS '
            "2021), as ir_measures' compat provider computes it: persistence 0.95 by default, "
            "and ir_measures' `Compat(p=0.8)` is `Compat(persist=0.8)`.",
            "`Compat(normalize=false)` divides by the finite RBO's own weights only, not by "
            "the ideal ranking's RBO.",
            "0 without relevant judgments or without results. ir_measures puts a relevant "
            "document not retrieved before retrieved ones of its grade when the run's scores "
            "are negative (it scores them 0); here it always comes after them.",
        ),
    ),
    Measure(
        name="Accuracy",
        description="Share of the (relevant, non-relevant) pairs in the top k where the "
        "relevant document is ranked first.",
        formula="Accuracy@k = 1 - sum over relevant d in the top k of (non-relevant above d) "
        "/ (R_k N_k), R_k (N_k) = relevant (not relevant) in the top k; unknown when R_k = 0 "
        "or N_k = 0",
        compute="pairs:accuracy",
        cutoff="optional",
        params=("rel",),
        unknown_values=True,
        notes=(
            "ir_measures' diagnostic `Accuracy`: only retrieved documents take part, and "
            "unjudged documents and negative grades count as not relevant.",
            "A topic without a relevant or without a non-relevant document in the top k has "
            "no value and is left out of the mean (ir_measures leaves out the first and "
            "fails on the second; computed beside other measures it scores the first 0).",
        ),
    ),
)

IR_MEASURES: tuple[Measure, ...] = CWL + OTHERS
