"""The operational facts of a run and of a comparison, from plain values."""

from __future__ import annotations

from evalplat.comparison.facts import (
    JUDGED_FALL,
    Fact,
    RunRecords,
    comparison_facts,
    judged_share,
    run_facts,
)


def records(
    run: int | None,
    counts: dict[str, int],
    *,
    failed: tuple[str, ...] = (),
    texts: dict[str, str] | None = None,
    judged: dict[str, float] | None = None,
) -> RunRecords:
    status = {q: "ok" for q in counts} | {q: "failed" for q in failed}
    return RunRecords(
        run,
        status,
        {**counts, **{q: 0 for q in failed}},
        texts if texts is not None else {q: f"query {q}" for q in status},
        judged or {},
    )


def answering(n: int, empty: int) -> dict[str, int]:
    """``n`` answered queries ``q1..qn``, the first ``empty`` of them with no result."""
    return {f"q{i}": 0 if i <= empty else 10 for i in range(1, n + 1)}


def test_a_healthy_run_has_no_fact() -> None:
    assert run_facts(records(3, answering(20, 2))) == []
    assert comparison_facts(records(3, answering(20, 2)), records(4, answering(20, 10))) == []


def test_most_queries_returning_nothing_is_a_fact_with_its_figures() -> None:
    [fact] = run_facts(records(12, answering(225, 184)))
    assert fact.kind == "zero_results"
    assert fact.sentence == "184 of 225 queries returned nothing (run 12)"
    assert (fact.figures["empty"], fact.figures["answered"]) == (184, 225)
    assert fact.figures["share"] == 184 / 225
    assert fact.figures["queries"] == ["q1", "q10", "q100", "q101", "q102"]
    assert fact.run == 12 and fact.side is None and fact.line() == fact.sentence


def test_exactly_half_empty_is_not_most() -> None:
    assert run_facts(records(1, answering(20, 10))) == []
    assert [f.kind for f in run_facts(records(1, answering(20, 11)))] == ["zero_results"]


def test_failed_queries_count_out_of_the_searched_and_not_in_the_empty_share() -> None:
    facts = run_facts(records(5, answering(4, 3), failed=("q9", "q8")))
    assert [f.kind for f in facts] == ["zero_results", "failed"]
    assert facts[0].sentence == "3 of 4 queries returned nothing (run 5)"
    assert facts[1].sentence == "2 of 6 queries failed (run 5)"
    assert facts[1].figures["queries"] == ["q8", "q9"]


def test_empty_texts_are_counted_and_named() -> None:
    texts = {"q1": "", "q2": "  ", "q3": "laminar flow"}
    [fact] = run_facts(records(None, answering(3, 0), texts=texts))
    assert fact.sentence == "2 queries have an empty text"
    assert fact.figures == {"empty_texts": 2, "queries": ["q1", "q2"]}
    [one] = run_facts(records(7, answering(3, 0), texts={**texts, "q2": "x"}))
    assert one.sentence == "1 query has an empty text (run 7)"


def test_the_judged_share_counts_only_the_documents_shown() -> None:
    # q1 shows 10 documents, 9 judged; q2 shows 2, both judged (Judged@10 = 2/2); q3 shows
    # none: it would score Judged@10 = 0 and must not pull the share down.
    run = records(1, {"q1": 50, "q2": 2, "q3": 0}, judged={"q1": 0.9, "q2": 1.0, "q3": 0.0})
    assert judged_share(run) == (9 + 2) / (10 + 2)
    assert judged_share(records(1, {"q1": 0})) is None  # showed nothing
    assert judged_share(records(1, {"q1": 5})) is None  # never scored with Judged@k


def test_a_fall_of_the_judged_share_is_a_new_fact_of_the_candidate() -> None:
    counts = answering(10, 0)
    before = records(11, counts, judged=dict.fromkeys(counts, 0.92))
    after = records(12, counts, judged=dict.fromkeys(counts, 0.41))
    [fact] = comparison_facts(before, after)
    assert fact.kind == "judged_fell"
    assert fact.sentence == "judged share of the top 10 fell from 0.92 to 0.41 (run 11 → run 12)"
    assert (fact.side, fact.new, fact.run) == ("candidate", True, 12)
    assert fact.line() == f"{fact.sentence}; new in the candidate"
    smaller = records(12, counts, judged=dict.fromkeys(counts, 0.92 - JUDGED_FALL / 2))
    assert comparison_facts(before, smaller) == []
    rising = comparison_facts(after, before)
    assert rising == []


def test_a_comparison_says_whose_fact_it_is() -> None:
    healthy, empty = answering(20, 1), answering(20, 18)
    [new] = comparison_facts(records(1, healthy), records(2, empty))
    assert (new.kind, new.side, new.new, new.run) == ("zero_results", "candidate", True, 2)
    assert new.line() == "18 of 20 queries returned nothing (run 2); new in the candidate"

    [both] = comparison_facts(records(1, answering(20, 15)), records(2, empty))
    assert (both.side, both.new) == ("both", False)
    assert both.sentence == "18 of 20 queries returned nothing (run 2)"
    assert both.figures["baseline"]["empty"] == 15
    assert both.line().endswith("; the baseline too")

    [gone] = comparison_facts(records(1, empty), records(2, healthy))
    assert (gone.side, gone.new, gone.run) == ("baseline", False, 1)
    assert gone.line() == "18 of 20 queries returned nothing (run 1); the baseline only"


def test_new_facts_come_first() -> None:
    texts = {f"q{i}": "" if i == 1 else "text" for i in range(1, 21)}
    base = records(1, answering(20, 0), texts=texts)
    cand = records(2, answering(20, 19), texts=texts)
    facts = comparison_facts(base, cand)
    assert [(f.kind, f.side) for f in facts] == [("zero_results", "candidate"),
                                                 ("empty_text", "both")]  # fmt: skip


def test_a_fact_round_trips_through_its_dict() -> None:
    counts = answering(20, 19)
    [fact] = comparison_facts(records(1, answering(20, 0)), records(2, counts))
    data = fact.to_dict()
    assert data["line"] == fact.line()
    assert Fact.from_dict(data) == fact
