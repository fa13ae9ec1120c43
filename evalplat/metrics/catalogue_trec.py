"""The rest of trec_eval's ``all_trec`` and the set measures of ir_measures and ranx: their
parameters and declarations (the metric model's data, beside ``evalplat.metrics.catalogue``).

This module imports no numerical library.
"""

from __future__ import annotations

from evalplat.metrics.model import Measure, Param

TREC_PARAMS: tuple[Param, ...] = (
    Param("mult", "number", 1, "the multiple of R at which Rprec is taken: the cutoff is "
          "⌊mult · R + 0.9⌋ (trec_eval's Rprec_mult; default 1, Rprec itself)", minimum=0),
    Param("recall", "number", None, "the recall level, from 0 to 1, at which interpolated "
          "precision is taken (`IPrec@0.1` is `IPrec(recall=0.1)`)", required=True, minimum=0,
          maximum=1),
    Param("beta", "number", 1, "the weight of recall against precision in SetF, used as "
          "trec_eval's set_F and ir_measures use it, not squared (default 1); NRBP's "
          "patience, the chance the reader goes on to the next result (default 0.5)",
          minimum=0),
    Param("u1", "number", 1, "utility's worth of a relevant retrieved document (default 1)"),
    Param("u2", "number", -1, "utility's worth of a non-relevant retrieved document "
          "(default -1)"),
    Param("u3", "number", 0, "utility's worth of a relevant document not retrieved "
          "(default 0)"),
    Param("u4", "number", 0, "utility's worth of a non-relevant document not retrieved "
          "(default 0; trec_eval counts a collection of 0 documents without `-N`)"),
    Param("levels", "levels", tuple(i / 10 for i in range(11)), "the recall levels IPrecAvg "
          "averages, in increasing order, written `{0.2,0.5,0.8}` (default the 11 levels "
          "0, 0.1, …, 1; trec_eval's `11pt_avg.0.2,0.5,0.8`)"),
    Param("persist", "number", 0.9, "the persistence, the chance the reader goes on to the "
          "next result (default 0.9, Compat's 0.95; ir_measures writes it `p`)", minimum=0,
          maximum=1),
)  # fmt: skip

_REL = ("rel", "judged_only")
_SUMMED = "Summed over topics, not averaged; never gated."
_GEOMEAN = (
    "The run's figure is the geometric mean over topics, each value floored at 1e-5 "
    "(trec_eval's MIN_GEO_MEAN); per topic the value is the arithmetic measure's.",
    "Shown and compared, never gated: the paired tests compare means.",
)
_EXPERIMENTAL = "trec_eval calls it experimental; default gains (gain = grade), no parameters."

SETS: tuple[Measure, ...] = (
    Measure(
        name="SetP",
        description="Precision of the whole retrieved set.",
        formula="SetP = |relevant retrieved| / |retrieved|; 0 without results",
        compute="sets:set_precision",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="set_P",
        notes=("`P` without a cutoff (ranx's `precision`) is `SetP`.",),
    ),
    Measure(
        name="SetR",
        description="Recall of the whole retrieved set.",
        formula="SetR = |relevant retrieved| / R; 0 when R = 0",
        compute="sets:set_recall",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="set_recall",
        notes=("`R` without a cutoff (ranx's `recall`) is `SetR`.",),
    ),
    Measure(
        name="SetF",
        description="F-measure of the whole retrieved set.",
        formula="SetF = (1 + beta) SetP SetR / (beta SetP + SetR); 0 when both are 0",
        compute="sets:set_f",
        cutoff="none",
        params=(*_REL, "beta"),
        trec_name_no_cutoff="set_F",
        trec_name_params="set_F_{beta:g}",
        trec_params=("beta",),
        notes=(
            "`F1` without a cutoff (ranx's `f1`) is `SetF`.",
            "trec_eval's `set_F.0.5` is `SetF(beta=0.5)`. beta enters unsquared, as in "
            "trec_eval and ir_measures (van Rijsbergen's F_β is `SetF(beta=β²)`).",
        ),
    ),
    Measure(
        name="SetAP",
        description="Set average precision: SetP times SetR.",
        formula="SetAP = SetP · SetR",
        compute="sets:set_ap",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="set_map",
    ),
    Measure(
        name="SetRelP",
        description="Precision of the retrieved set relative to the best possible for its size.",
        formula="SetRelP = |relevant retrieved| / min(|retrieved|, R); 0 when that is 0",
        compute="sets:set_relative_precision",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="set_relative_P",
    ),
    Measure(
        name="RelP",
        description="Precision at k relative to the best possible at k: P@k up to R, then R@k.",
        formula="RelP@k = |relevant in top k| / min(k, R); 0 when R = 0",
        compute="sets:relative_precision",
        cutoff="required",
        params=_REL,
        trec_name="relative_P_{k}",
        notes=("trec_eval prints nan for a topic without relevant judgments; here it is 0.",),
    ),
    Measure(
        name="Hits",
        description="Number of relevant documents in the top k (all retrieved without k).",
        formula="Hits@k = |relevant in top k|",
        compute="sets:hits",
        cutoff="optional",
        params=_REL,
        bounded=False,
        notes=("ranx's `hits@k`: a count per topic, averaged over topics.",),
    ),
    Measure(
        name="Utility",
        description="Set utility: a weighted sum of the contingency table of the retrieved set.",
        formula="Utility = u1 a + u2 b + u3 c + u4 d, a = relevant retrieved, b = other "
        "retrieved, c = relevant not retrieved, d = a - |retrieved| - R (trec_eval without -N)",
        compute="sets:utility",
        cutoff="none",
        params=("rel", "u1", "u2", "u3", "u4"),
        bounded=False,
        trec_name_no_cutoff="utility",
        trec_name_params="utility_{u1:g},{u2:g},{u3:g},{u4:g}",
        trec_params=("u1", "u2", "u3", "u4"),
        notes=(
            "trec_eval's `utility.2,-1,0,0` is `Utility(u1=2)`; the defaults are 1, -1, 0, 0.",
            "d assumes a collection of 0 documents, as trec_eval does unless given `-N`.",
        ),
    ),
    Measure(
        name="Unjudged",
        description="Share of the top k without a judgment (trec_eval's red flag).",
        formula="Unjudged@k = |unjudged in top k| / k; negative grades count as unjudged",
        compute="sets:unjudged",
        cutoff="required",
        aliases=("unj",),
        higher_is_better=False,
        test="none",
        trec_name="unj_{k}",
        notes=(
            "Divides by k: a ranking shorter than k counts as padded with judged documents "
            "(trec_eval's `unj_k`; `Judged@k` divides by min(k, retrieved) instead).",
        ),
    ),
    Measure(
        name="NumNonrelJudgedRet",
        description="Number of retrieved documents judged non-relevant.",
        formula="NumNonrelJudgedRet = |retrieved with 0 <= grade < rel|",
        compute="sets:num_nonrel_judged_ret",
        cutoff="none",
        params=("rel",),
        inputs=("ranking",),
        aggregate="sum",
        test="none",
        trec_name_no_cutoff="num_nonrel_judged_ret",
        bounded=False,
        notes=(_SUMMED,),
    ),
)

TREC: tuple[Measure, ...] = (
    Measure(
        name="IPrec",
        description="Interpolated precision at a recall level.",
        formula="IPrec@x = max precision at any rank at or below the rank where ⌊x R + 0.9⌋ "
        "relevant documents (at least 1) are found; 0 when they never are",
        compute="interpolated:iprec_at_recall",
        cutoff="none",
        params=(*_REL, "recall"),
        cutoff_param="recall",
        trec_name_params="iprec_at_recall_{recall:.2f}",
        trec_params=("recall",),
        notes=(
            "Written `IPrec@0.1` (ir_measures) or `IPrec(recall=0.1)`; trec_eval's "
            "`iprec_at_recall_0.10`.",
            "The rank follows trec_eval 9 (⌊x R + 0.9⌋, also pytrec_eval's); trec_eval 10 rounds "
            "x R to the nearest integer, which changes a few values.",
        ),
    ),
    Measure(
        name="IPrecAvg",
        description="Interpolated precision averaged over recall levels, by default the 11 levels "
        "0.0, 0.1, …, 1.0.",
        formula="IPrecAvg = (1/n) sum over the n levels x of IPrec@x; levels {0, 0.1, ..., 1} "
        "unless given",
        compute="interpolated:eleven_point_average",
        cutoff="none",
        params=(*_REL, "levels"),
        trec_name_no_cutoff="11pt_avg",
        trec_name_params="11pt_avg_{levels}",
        trec_params=("levels",),
        notes=(
            "trec_eval's `11pt_avg.0.2,0.5,0.8` (also `11pt_avg..2,.5,.8`) is "
            "`IPrecAvg(levels={0.2,0.5,0.8})`; trec_eval prints the levels as they were typed, "
            "evalplat as `11pt_avg_0.2,0.5,0.8`.",
            "Levels must be in increasing order: trec_eval gives levels out of order a value "
            "that is not their average, so they are refused.",
        ),
    ),
    Measure(
        name="GMAP",
        description="Geometric mean of average precision over topics.",
        formula="GMAP = exp(mean over topics of ln max(AP, 1e-5))",
        compute="rank:average_precision",
        cutoff="none",
        params=("rel",),
        aggregate="geomean",
        test="none",
        trec_name_no_cutoff="gm_map",
        notes=_GEOMEAN,
    ),
    Measure(
        name="GMBpref",
        description="Geometric mean of Bpref over topics.",
        formula="GMBpref = exp(mean over topics of ln max(Bpref, 1e-5))",
        compute="pairs:bpref",
        cutoff="none",
        params=("rel",),
        aggregate="geomean",
        test="none",
        trec_name_no_cutoff="gm_bpref",
        notes=_GEOMEAN,
    ),
    Measure(
        name="infAP",
        description="Inferred average precision (Yilmaz and Aslam 2006) for sampled judgments.",
        formula="infAP = (1/R) sum over relevant d at 0-based position j of 1 when j = 0, else "
        "1/(j+1) + j/(j+1) · (pooled above / j) · (rel above + ε) / (judged above + 2ε), "
        "ε = 1e-5; unjudged documents are outside the pool, negative grades pooled but unjudged",
        compute="rank:inferred_ap",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="infAP",
        notes=("With complete judgments infAP equals AP.",),
    ),
    Measure(
        name="binG",
        description="Binary G: relevant documents discounted by the non-relevant ones above them.",
        formula="binG = (1/R) sum over retrieved relevant d of 1 / log2(2 + documents not "
        "relevant ranked above d); 0 when R = 0",
        compute="gain_variants:bin_g",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="binG",
        notes=("Unjudged documents above count as not relevant.",),
    ),
    Measure(
        name="G",
        description="Normalised gain that discounts each document by how far the run lags the "
        "ideal there.",
        formula="G = (1 / sum of ideal gains) sum over retrieved d of gain(d) / log2(2 + cost(d) "
        "- gained(d)), cost = running sum of the ideal gains to d's rank (each at least 1), "
        "gained = running sum of the run's gains to d; gain = grade",
        compute="gain_variants:g_measure",
        cutoff="none",
        params=("judged_only",),
        trec_name_no_cutoff="G",
        notes=(_EXPERIMENTAL,),
    ),
    Measure(
        name="nDCGRel",
        description="nDCG averaged over the documents of positive grade.",
        formula="nDCGRel = (1/P) (sum over retrieved d with gain > 0 of nDCG at d's rank + "
        "(P - those retrieved) · nDCG at the end of the ranking), P = judgments of positive "
        "grade; gain = grade",
        compute="gain_variants:ndcg_rel",
        cutoff="none",
        params=("judged_only",),
        trec_name_no_cutoff="ndcg_rel",
        notes=(_EXPERIMENTAL,),
    ),
    Measure(
        name="RnDCG",
        description="nDCG averaged at the R levels: where the ideal ranking's grade drops.",
        formula="RnDCG = mean of nDCG@b over the depths b where the ideal grade drops (the last "
        "where it reaches 0), and over the end of the ranking when it runs beyond them; 0 "
        "when R = 0; gain = grade",
        compute="gain_variants:r_ndcg",
        cutoff="none",
        params=_REL,
        trec_name_no_cutoff="Rndcg",
        notes=(_EXPERIMENTAL,),
    ),
    Measure(
        name="RBP",
        description="Rank-biased precision (Moffat and Zobel 2008).",
        formula="RBP = (1 - p) sum over retrieved d at rank r of gain(d) p^(r-1), gain = grade, "
        "divided by the topic's highest grade when that is above 1; p = persist (0.9); with "
        "rel = k, gain = 1 when grade >= k, else 0",
        compute="gain_variants:rbp",
        cutoff="none",
        params=("judged_only", "persist", "rel"),
        defaults=(("rel", None),),
        trec_name_no_cutoff="rbp",
        notes=(
            "ir_measures' `RBP(p=0.8)` is `RBP(persist=0.8)`, and its `RBP(rel=k)`, binary "
            "relevance at grade k, is `RBP(rel=k)` here.",
            "trec_eval 10's `rbp`, whose persistence is 0.9 by default; ir_measures' is 0.8, so "
            "ir_measures' bare `RBP` and `RBP(rel=k)` are `RBP(p=0.8)` and `RBP(rel=k,p=0.8)` "
            "here. trec_eval 9 has no RBP.",
        ),
    ),
    Measure(
        name="RBPResid",
        description="RBP's residual: what judging the unjudged documents could still add.",
        formula="RBPResid = p^n + (1 - p) sum over unjudged retrieved d at rank r of p^(r-1), "
        "n = |retrieved|; 0 when every retrieved document is judged",
        compute="gain_variants:rbp_residual",
        cutoff="none",
        params=("judged_only", "persist"),
        higher_is_better=False,
        test="none",
        trec_name_no_cutoff="rbp_resid",
        notes=("Grades below 0 count as unjudged. trec_eval 10's `rbp_resid`.",),
    ),
)

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# trec_eval 9's ``-m all_trec``, in its order and spelling (runid and relstring are not measures)
ALL_TREC: tuple[str, ...] = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", *(f"iprec_at_recall_{i / 10:.2f}" for i in range(11)),
    *(f"P_{k}" for k in _CUTOFFS), *(f"recall_{k}" for k in _CUTOFFS), "infAP", "gm_bpref",
    *(f"Rprec_mult_{i / 5:.2f}" for i in range(1, 11)), "utility", "11pt_avg", "binG", "G",
    "ndcg", "ndcg_rel", "Rndcg", *(f"ndcg_cut_{k}" for k in _CUTOFFS),
    *(f"map_cut_{k}" for k in _CUTOFFS), *(f"relative_P_{k}" for k in _CUTOFFS),
    "success_1", "success_5", "success_10", "set_P", "set_relative_P", "set_recall", "set_map",
    "set_F", "num_nonrel_judged_ret",
)  # fmt: skip
