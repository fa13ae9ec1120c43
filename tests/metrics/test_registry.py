"""Metric names: canonical round trips, aliases, trec_eval names, errors that help."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.metrics import DEFAULT_METRICS, FAMILIES, Metric, parse
from evalplat.metrics.catalogue import PARAMS


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("Hit@5", "Success@5"),
        ("MRR@10", "RR@10"),
        ("MAP@100", "AP@100"),
        ("NDCG@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("P_5", "P@5"),
        ("recip_rank", "RR"),
        ("map", "AP"),
        ("p(rel=2)@5", "P(rel=2)@5"),
        ("nDCG(gain=linear)@10", "nDCG@10"),
        ("nDCG( gain = exp )@10", "nDCG(gain=exp)@10"),
        ("AP(judged_only=true,rel=2)@5", "AP(judged_only=true,rel=2)@5"),
    ],
)
def test_aliases_parse_to_the_canonical_metric(alias: str, canonical: str) -> None:
    assert str(parse(alias)) == canonical


def _metrics() -> st.SearchStrategy[Metric]:
    def build(
        family: str,
        cutoff: int,
        rel: int,
        gain: str,
        judged: bool,
        gmax: int | str,
        gains: dict[int, float] | tuple[()],
    ) -> Metric:
        spec = FAMILIES[family]
        mapped = gains if "gains" in spec.params and gain == "linear" else ()
        extra: dict[str, object] = {"field": "site"} if "field" in spec.params else {}
        return Metric(
            family,
            None if spec.cutoff == "none" else cutoff,
            rel=rel if "rel" in spec.params else 1,
            gain=gain if "gain" in spec.params else "linear",
            judged_only=judged if "judged_only" in spec.params else False,
            gmax=gmax if "gmax" in spec.params else 4,
            gains=mapped,
            **extra,
        )

    # families that need a parameter of their own (Diversity's field) have their own examples
    plain = sorted(f for f in FAMILIES if not any(PARAMS[p].required for p in FAMILIES[f].params))
    return st.builds(
        build,
        st.sampled_from(plain),
        st.integers(1, 1000),
        st.integers(1, 4),
        st.sampled_from(["linear", "exp"]),
        st.booleans(),
        st.one_of(st.integers(1, 5), st.just("qrels")),
        st.dictionaries(
            st.integers(-2, 9),
            st.one_of(st.integers(0, 100), st.floats(0, 100).map(lambda x: round(x, 3))),
            max_size=4,
        ),
    )


@given(_metrics())
def test_parse_of_str_is_identity(metric: Metric) -> None:
    assert parse(str(metric)) == metric


@pytest.mark.parametrize(
    "name",
    ["Diversity(field=site)@10", "Diversity(field=source.kind,norm=true)", "Latency(p=99.5)"],
)
def test_names_with_parameters_of_their_own_round_trip(name: str) -> None:
    assert str(parse(name)) == name
    assert parse(str(parse(name))) == parse(name)


def test_unknown_metric_lists_close_matches() -> None:
    with pytest.raises(InputError, match="did you mean nDCG"):
        parse("nDGC@10")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Success", "needs a cutoff"),
        ("Rprec@10", "takes no cutoff"),
        ("P@0", "positive"),
        ("P@x", "positive integer"),
        ("P(gain=exp)@5", "no parameter 'gain'"),
        ("nDCG(gain=cubic)@5", "gain must be"),
        ("P(colour=red)@5", "unknown parameter"),
        ("P(rel=two)@5", "must be an integer"),
    ],
)
def test_invalid_names_say_why(name: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        parse(name)


def test_every_family_has_description_formula_and_direction() -> None:
    for spec in FAMILIES.values():
        assert spec.description and spec.formula
        assert isinstance(spec.higher_is_better, bool)


def test_counts_are_not_gateable_and_scores_are() -> None:
    assert not parse("NumRet").gateable
    assert parse("nDCG@10").gateable
    assert parse("nDCG@10").direction == 1


def test_trec_names_round_trip_through_parse() -> None:
    for name in ("P_10", "recall_100", "ndcg_cut_10", "map", "map_cut_5", "bpref", "num_q"):
        assert parse(name).trec_name == name


def test_default_metrics_parse() -> None:
    assert [str(parse(m)) for m in DEFAULT_METRICS] == list(DEFAULT_METRICS)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("P.5", "P@5"),
        ("P_5", "P@5"),
        ("P", "SetP"),
        ("R", "SetR"),
        ("F1", "SetF"),
        ("set_map", "SetAP"),
        ("gm_map", "GMAP"),
        ("Rprec_mult_0.20", "Rprec(mult=0.2)"),
        ("Rprec_mult_1.00", "Rprec"),
        ("iprec_at_recall_0.10", "IPrec(recall=0.1)"),
        ("IPrec@0.1", "IPrec(recall=0.1)"),
        ("utility.2,-1,0,0", "Utility(u1=2)"),
        ("utility_2,-1,0,0", "Utility(u1=2)"),
        ("ndcg.1=3,2=9", "nDCG(gains={1:3,2:9})"),
        ("nDCG(dcg='exp-log2')@10", "nDCG(gain=exp)@10"),
        ("nDCG(dcg=log2)@10", "nDCG@10"),
        ("NumRet(rel=2)", "NumRelRet(rel=2)"),
        ("hits@10", "Hits@10"),
        ("RBP(p=0.8)", "RBP(persist=0.8)"),
        ("unj_5", "Unjudged@5"),
        ("11pt_avg", "IPrecAvg"),
        ("Rndcg", "RnDCG"),
    ],
)
def test_peer_spellings_parse_to_one_metric(spelling: str, canonical: str) -> None:
    assert str(parse(spelling)) == canonical
    assert parse(canonical) == parse(spelling)


def test_parameterised_trec_names_print_as_trec_eval_prints_them() -> None:
    assert parse("Rprec(mult=0.2)").trec_name == "Rprec_mult_0.20"
    assert parse("IPrec@0.1").trec_name == "iprec_at_recall_0.10"
    assert parse("Utility(u1=2)").trec_name == "utility_2,-1,0,0"
    assert parse("nDCG(dcg='exp-log2')").trec_name is None


def test_an_unknown_dcg_spelling_is_refused() -> None:
    with pytest.raises(InputError, match="dcg must be log2 or exp-log2"):
        parse("nDCG(dcg=exp)@10")


def test_a_geometric_mean_floors_each_value_as_trec_eval_does() -> None:
    import numpy as np

    from evalplat.metrics.aggregate import aggregate, aggregate_rows

    values = np.array([0.5, 0.0, 0.2])
    expected = float(np.exp(np.log([0.5, 1e-5, 0.2]).mean()))
    assert aggregate(parse("GMAP"), values) == pytest.approx(expected)
    assert aggregate_rows(parse("GMAP"), values[None, :])[0] == pytest.approx(expected)
    weighted = aggregate(parse("GMAP"), values, np.array([2.0, 1.0, 1.0]))
    assert weighted == pytest.approx(float(np.exp((2 * np.log(0.5) + np.log(1e-5 * 0.2)) / 4)))
