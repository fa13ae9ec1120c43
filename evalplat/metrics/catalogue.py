"""The measures evalplat ships: their parameters and declarations (the metric model's data).

Adding a measure is a kernel module plus one :class:`~evalplat.metrics.model.Measure` here (see
docs/adding-a-measure.md). Order is the order of ``evalplat metrics list`` and docs/metrics.md.
This module imports no numerical library.
"""

from __future__ import annotations

from evalplat.metrics.catalogue_intent_aware import INTENT_AWARE, INTENT_AWARE_PARAMS
from evalplat.metrics.catalogue_ir_measures import IR_MEASURES, IR_MEASURES_PARAMS
from evalplat.metrics.catalogue_trec import SETS, TREC, TREC_PARAMS
from evalplat.metrics.diversity import DIVERSITY
from evalplat.metrics.model import Measure, Param
from evalplat.metrics.online import ONLINE, ONLINE_PARAMS
from evalplat.metrics.system import SYSTEM

# ERR's gmax: a grade (gdeval's and ir_measures' default, 4) or "qrels": the highest grade in
# the judgments of the evaluated topics
GMAX_FROM_QRELS = "qrels"

PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("rel", "int", 1, "binary relevance threshold: a document is relevant when its "
              "grade ≥ `rel` (default 1; trec_eval's `-l`)", minimum=1),
        Param("gain", "choice", "linear", "`linear` (gain = grade, trec_eval's; default) or "
              "`exp` (gain = 2^grade - 1)", choices=("linear", "exp")),
        Param("gains", "gain_map", (), "a grade-to-gain map, `gains={0:0,1:1,2:3,3:10}` "
              "(ir_measures' syntax): integer grades, finite gains ≥ 0; a grade the map does not "
              "name gains its grade (0 when negative), as in trec_eval; the ideal ranking orders "
              "the judgments by mapped gain"),
        Param("judged_only", "bool", False, "`true` drops unjudged documents, and those graded "
              "below zero, from the ranking before scoring (trec_eval's `-J`; default `false`)"),
        Param("gmax", "grade_or_qrels", 4, "the top grade in p = (2^g - 1) / 2^gmax: a grade "
              "(default 4, as gdeval and ir_measures) or `qrels` (the highest grade in the "
              "judgments)", minimum=1),
        Param("field", "name", None, "the document field whose values are counted (a "
              "`hit_fields` name of the `http` searcher, or a key of the documents)",
              required=True),
        Param("norm", "bool", False, "`true` divides the entropy by log2 of the number of "
              "distinct values, giving [0, 1]"),
        Param("p", "number", None, "the percentile of the run's figure, from 0 to 100 "
              "(`Latency(p=95)`); without it the figure is the mean", minimum=0, maximum=100),
    )
}  # fmt: skip
PARAMS.update({p.name: p for p in ONLINE_PARAMS})
PARAMS.update({p.name: p for p in TREC_PARAMS})
PARAMS.update({p.name: p for p in IR_MEASURES_PARAMS})
PARAMS.update({p.name: p for p in INTENT_AWARE_PARAMS})

_REL = ("rel", "judged_only")

RELEVANCE: tuple[Measure, ...] = (
    Measure(
        name="P",
        description="Precision: share of the top k that is relevant.",
        formula="P@k = |relevant in top k| / k  (k, not the number retrieved)",
        compute="binary:precision",
        cutoff="required",
        params=_REL,
        trec_name="P_{k}",
        notes=(
            "Divides by k even when fewer than k documents were retrieved (a run of 3 relevant "
            "documents scores P@10 = 0.3).",
            "With `judged_only=true` unjudged documents are removed first, then the top k is "
            "taken.",
        ),
    ),
    Measure(
        name="R",
        description="Recall: share of all relevant documents found in the top k.",
        formula="R@k = |relevant in top k| / R, R = number of judged relevant (0 when R = 0)",
        compute="binary:recall",
        cutoff="required",
        params=_REL,
        trec_name="recall_{k}",
        notes=(
            "R counts every judged relevant document of the topic, retrieved or not.",
            "A topic without relevant judgments scores 0 and still counts in the mean.",
        ),
    ),
    Measure(
        name="F1",
        description="Harmonic mean of P@k and R@k.",
        formula="F1@k = 2 P@k R@k / (P@k + R@k), 0 when both are 0",
        compute="binary:f1",
        cutoff="required",
        params=_REL,
        notes=("Computed as 2 · |relevant in top k| / (k + R); 0 when nothing relevant is found.",),
    ),
    Measure(
        name="Success",
        description="1 when a relevant document is in the top k, else 0.",
        formula="Success@k = [ |relevant in top k| > 0 ]",
        compute="binary:success",
        cutoff="required",
        params=_REL,
        aliases=("Hit",),
        trec_name="success_{k}",
        notes=("Alias `Hit@k`. 0 for a topic without results.",),
    ),
    Measure(
        name="RR",
        description="Reciprocal rank of the first relevant document (within k if given).",
        formula="RR@k = 1 / rank of the first relevant document at rank <= k, else 0",
        compute="rank:reciprocal_rank",
        cutoff="optional",
        params=_REL,
        aliases=("MRR",),
        trec_name_no_cutoff="recip_rank",
        notes=(
            "No cutoff unless written `RR@k` (`MRR@10` is `RR@10`).",
            "0 when no relevant document is retrieved (within k).",
            "trec_eval has no cutoff form of `recip_rank`, so `RR@k` has no trec_eval name.",
        ),
    ),
    Measure(
        name="AP",
        description="Average precision (within k if given), over all judged relevant documents.",
        formula="AP@k = (1/R) * sum over relevant d at rank r <= k of P@r; 0 when R = 0",
        compute="rank:average_precision",
        cutoff="optional",
        params=_REL,
        aliases=("MAP",),
        trec_name="map_cut_{k}",
        trec_name_no_cutoff="map",
        notes=(
            "R counts every judged relevant document, so unretrieved relevant documents lower AP.",
            "`AP@k` still divides by R, not by min(k, R) (trec_eval's `map_cut_k`).",
            "0 when R = 0; the topic still counts.",
        ),
    ),
    Measure(
        name="nDCG",
        description="Normalised discounted cumulative gain (trec_eval's ndcg/ndcg_cut).",
        formula="nDCG@k = DCG@k / IDCG@k, DCG@k = sum_{r<=k} gain(g_r) / log2(r + 1), gain = g "
        "(linear) or 2^g - 1 (exp), negative grades gain 0; IDCG from all judged grades",
        compute="gain:ndcg",
        cutoff="optional",
        params=("gain", "gains", "judged_only"),
        aliases=("NDCG",),
        trec_name="ndcg_cut_{k}",
        trec_name_no_cutoff="ndcg",
        notes=(
            "The ideal ranking sorts every judgment of the topic by grade, retrieved or not, and "
            "is cut at the same k.",
            "Negative grades and unjudged documents gain 0; 0 when no judgment is positive.",
            "`rel` plays no part (as in trec_eval, `-l2` leaves `ndcg` unchanged), so nDCG takes "
            "no `rel` parameter.",
        ),
    ),
    Measure(
        name="DCG",
        description="Discounted cumulative gain (not normalised).",
        formula="DCG@k = sum_{r<=k} gain(g_r) / log2(r + 1)",
        compute="gain:dcg",
        cutoff="optional",
        params=("gain", "gains", "judged_only"),
        bounded=False,
        notes=("Not normalised, so not bounded by 1; negative grades gain 0.",),
    ),
    Measure(
        name="CG",
        description="Cumulative gain: sum of the gains of the top k, without discount.",
        formula="CG@k = sum_{r<=k} gain(g_r), gain = g (linear) or 2^g - 1 (exp); negative "
        "grades and unjudged documents gain 0",
        compute="gain:cg",
        cutoff="optional",
        params=("gain", "gains", "judged_only"),
        bounded=False,
        notes=(
            "No discount: reordering the top k leaves CG@k unchanged (DCG@k is the measure "
            "that rewards order). Not normalised, so not bounded by 1.",
            "Negative grades and unjudged documents gain 0; 0 for a topic without results.",
        ),
    ),
    Measure(
        name="Rprec",
        description="Precision at rank R, R = number of judged relevant documents.",
        formula="Rprec = |relevant in top c| / c, c = ⌊mult · R + 0.9⌋ (R at the default "
        "mult = 1); 0 when c = 0",
        compute="binary:r_precision",
        cutoff="none",
        params=(*_REL, "mult"),
        trec_name_no_cutoff="Rprec",
        trec_name_params="Rprec_mult_{mult:.2f}",
        trec_params=("mult",),
        notes=(
            "The cutoff is R itself; 0 when R = 0.",
            "`Rprec(mult=0.2)` is trec_eval's `Rprec_mult_0.20`: precision at ⌊0.2 R + 0.9⌋, "
            "dividing by that cutoff even when fewer documents were retrieved.",
        ),
    ),
    Measure(
        name="Bpref",
        description="Binary preference: relevant documents ranked above judged non-relevant.",
        formula="Bpref = (1/R) * sum over retrieved relevant d of 1 - min(n_d, R) / min(R, N), "
        "n_d = judged non-relevant ranked above d, N = judged non-relevant; unjudged and "
        "negative grades ignored; a term is 1 when n_d = 0",
        compute="pairs:bpref",
        cutoff="none",
        params=("rel",),
        drops_unjudged=True,
        trec_name_no_cutoff="bpref",
        notes=(
            "Unjudged documents and negative grades take no part; a term is 1 when no judged "
            "non-relevant document is ranked above it (also when N = 0).",
            "0 when R = 0.",
        ),
    ),
    Measure(
        name="ERR",
        description="Expected reciprocal rank (Chapelle et al. 2009), graded cascade model.",
        formula="ERR@k = sum_{r<=k} (1/r) p_r prod_{i<r} (1 - p_i), p = (2^g - 1) / 2^gmax, gmax "
        "= 4 (gdeval, ir_measures) or, with gmax=qrels, the highest grade in the qrels; "
        "negative grades count as 0",
        compute="gain:err",
        cutoff="optional",
        params=("gmax", "judged_only"),
        notes=(
            "gmax defaults to 4, as in gdeval and ir_measures, so `ERR@10` means the same there "
            "and here; `ERR(gmax=qrels)@10` uses the highest grade among the judgments of the "
            "evaluated topics instead (a 0-2 scale then stops the cascade at grade 2). Grades "
            "above gmax count as gmax. All values are 0 when gmax ≤ 0.",
            "trec_eval has no ERR.",
        ),
    ),
    Measure(
        name="Judged",
        description="Share of the top k results that have a judgment (any grade).",
        formula="Judged@k = |judged in top k| / min(k, number retrieved), over all retrieved "
        "without k; 0 with no results",
        compute="binary:judged",
        cutoff="optional",
        test="none",
        notes=(
            "Any grade counts as judged, negative grades too; unjudged means no qrels line.",
            "Divides by min(k, number retrieved), so a short ranking is not penalised; 0 with no "
            "results. This is ir_measures' `Judged@k`.",
            "Not a relevance measure: the comparator uses it to tell a real drop from a drop "
            "caused by unjudged documents (verdict `needs_judgments`).",
        ),
    ),
    Measure(
        name="AUC",
        description="Probability that a judged relevant document is ranked above a judged "
        "non-relevant one (unretrieved documents rank below all retrieved, tied).",
        formula="AUC = (correct pairs + ties / 2) / (R N) over (relevant, judged non-relevant) "
        "pairs; negative grades ignored; 0 when R = 0 or N = 0",
        compute="pairs:auc",
        cutoff="none",
        params=("rel",),
        notes=(
            "Unretrieved judged documents rank below every retrieved one and tie among themselves"
            " (a tie counts 1/2).",
            "Negative grades are ignored; 0 when R = 0 or N = 0.",
        ),
    ),
    Measure(
        name="KendallTau",
        description="Kendall tau-b between the retrieved order and the grades of the judged "
        "documents in the top k, in [-1, 1].",
        formula="tau_b = (C - D) / sqrt(n0 (n0 - T)) over the n judged documents in the top k: "
        "C (D) = pairs whose higher-ranked document has the higher (lower) grade, "
        "n0 = n (n - 1) / 2, T = pairs with tied grades; negative grades count as 0; 0 when "
        "n < 2 or all grades tie (no order to agree with; 0 keeps the topic in means and "
        "paired tests)",
        compute="correlation:kendall_tau",
        cutoff="optional",
        params=("judged_only",),
        bounded=False,
        notes=(
            "Values lie in [-1, 1]: +1 when the judged documents of the top k are ranked "
            "exactly by grade, -1 when exactly against it.",
            "Only judged documents take part (a negative grade counts as 0, any grade is "
            "judged); unjudged ones are skipped, so the pairs are the judged documents among "
            "the top k. With `judged_only=true` the top k are the first k documents judged at "
            "grade 0 or above.",
            "0 when fewer than two judged documents are in the top k or when all their grades "
            "tie: there is no order to agree with (SciPy's `kendalltau` returns NaN there), and "
            "0 keeps the topic in means and paired tests like a topic without results elsewhere.",
            "Ties in grades are handled by tau-b's denominator; positions never tie.",
        ),
    ),
    Measure(
        name="Spearman",
        description="Spearman rho between the retrieved order and the grades of the judged "
        "documents in the top k, in [-1, 1].",
        formula="rho = Pearson correlation of position ranks (first = n) and grade ranks (ties "
        "share their average rank) over the n judged documents in the top k; negative grades "
        "count as 0; 0 when n < 2 or all grades tie (no order to agree with; 0 keeps the topic "
        "in means and paired tests)",
        compute="correlation:spearman",
        cutoff="optional",
        params=("judged_only",),
        bounded=False,
        notes=(
            "Values lie in [-1, 1], as for `KendallTau`, over the same pairs.",
            "Tied grades share the average of their ranks (SciPy's `spearmanr`).",
            "0 when fewer than two judged documents are in the top k or when all their grades "
            "tie, for the reason given under `KendallTau`.",
        ),
    ),
)

# The counts are trec_eval's num_ret, num_rel, num_rel_ret and num_q: informational, summed over
# topics, never gated. Each kernel reads only the input it declares.
_SUMMED = "Summed over topics, not averaged; never gated."
COUNTS: tuple[Measure, ...] = (
    Measure(
        name="NumRet",
        description="Number of documents retrieved.",
        formula="NumRet = |ranking|",
        compute="counts:num_ret",
        cutoff="none",
        inputs=("ranking",),
        aggregate="sum",
        test="none",
        trec_name_no_cutoff="num_ret",
        bounded=False,
        notes=(_SUMMED,),
    ),
    Measure(
        name="NumRel",
        description="Number of judged relevant documents.",
        formula="NumRel = R",
        compute="counts:num_rel",
        cutoff="none",
        params=("rel",),
        inputs=("judgments",),
        aggregate="sum",
        test="none",
        trec_name_no_cutoff="num_rel",
        bounded=False,
        notes=(_SUMMED,),
    ),
    Measure(
        name="NumRelRet",
        description="Number of relevant documents retrieved.",
        formula="NumRelRet = |relevant in ranking|",
        compute="counts:num_rel_ret",
        cutoff="none",
        params=("rel",),
        inputs=("ranking",),
        aggregate="sum",
        test="none",
        trec_name_no_cutoff="num_rel_ret",
        bounded=False,
        notes=(_SUMMED,),
    ),
    Measure(
        name="NumQ",
        description="Number of topics evaluated.",
        formula="NumQ = number of topics (1 per topic)",
        compute="counts:num_q",
        cutoff="none",
        inputs=("judgments",),
        aggregate="sum",
        test="none",
        trec_name_no_cutoff="num_q",
        bounded=False,
        notes=(
            "Summed over topics: the number of topics evaluated (after `--skip-missing` or "
            "`--exclude-no-relevant`); never gated.",
        ),
    ),
)

MEASURES: tuple[Measure, ...] = (
    RELEVANCE + TREC + SETS + IR_MEASURES + INTENT_AWARE + COUNTS + SYSTEM + DIVERSITY + ONLINE
)
