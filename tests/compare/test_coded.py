"""Ids coded once per comparison: the overlap and the optimistic bound from the codes are the
ones computed from the text, value for value, and what the text path refuses it still refuses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison.coded import code_pair
from evalplat.comparison.guard import optimistic_bound
from evalplat.comparison.overlap import rank_overlap
from evalplat.errors import InputError

METRICS = ["nDCG@10", "AP", "P@5", "R@100", "RR", "Judged@10", "NumRet", "Bpref"]


def _world(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """Judgments and two runs over shared documents, with the awkward cases in: a topic no run
    answers, a run-only query, judged-only queries, grades from -1 to 3, ids of every length
    (past 8 bytes too, and non-ASCII), ranks with gaps, rows not in rank order."""
    rng = np.random.default_rng(seed)
    topics = [f"q{i}" for i in range(40)]
    docs = [f"d{i}" + "é" * (i % 3) + "x" * (i % 13) for i in range(300)]
    rows = []
    for q in [*topics, "judged-only"]:
        for d in rng.choice(docs, size=25, replace=False):
            rows.append((q, str(d), int(rng.integers(-1, 4))))
    judgments = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])

    def run() -> pd.DataFrame:
        out = []
        for q in [*topics[1:], "run-only"]:
            picked = rng.choice(docs, size=int(rng.integers(1, 30)), replace=False)
            ranks = np.cumsum(rng.integers(1, 3, size=len(picked)))
            out += [(q, str(d), int(r), float(100 - r)) for d, r in zip(picked, ranks, strict=True)]
        frame = pd.DataFrame(out, columns=["query_id", "doc_id", "rank", "score"])
        return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)

    return judgments, run(), run(), topics


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_overlap_and_bound_from_codes_equal_the_text_path(seed: int) -> None:
    judgments, baseline, candidate, topics = _world(seed)
    coded = code_pair(judgments, baseline, candidate, topics)

    summary, frame = rank_overlap(baseline, candidate)
    coded_summary, coded_frame = rank_overlap(baseline, candidate, coded=coded)
    assert coded_summary == summary
    pd.testing.assert_frame_equal(coded_frame, frame, check_exact=True)

    text = optimistic_bound(judgments, baseline, candidate, METRICS, topics)
    fast = optimistic_bound(judgments, baseline, candidate, METRICS, topics, coded=coded)
    pd.testing.assert_frame_equal(fast.baseline, text.baseline, check_exact=True)
    pd.testing.assert_frame_equal(fast.candidate, text.candidate, check_exact=True)
    assert (fast.depth, fast.unjudged, fast.unjudged_queries, fast.baseline_unjudged) == (
        text.depth,
        text.unjudged,
        text.unjudged_queries,
        text.baseline_unjudged,
    )
    assert sum(text.unjudged.values()) > 0  # the bound did add grades


def test_equal_ids_share_a_code_and_different_ids_do_not() -> None:
    judgments, baseline, candidate, topics = _world(4)
    coded = code_pair(judgments, baseline, candidate, topics)
    ids = pd.concat([judgments["doc_id"], baseline["doc_id"], candidate["doc_id"]])
    codes = np.concatenate([coded.judgments.doc, coded.baseline.doc, coded.candidate.doc])
    pairs = pd.DataFrame({"id": ids.to_numpy(), "code": codes}).drop_duplicates()
    assert pairs["id"].is_unique and pairs["code"].is_unique
    assert coded.docs == ids.nunique()
    assert coded.queries == sorted(set(topics) | {"judged-only", "run-only"})


def test_a_repeated_document_is_refused_as_the_text_path_refuses_it() -> None:
    judgments, baseline, candidate, topics = _world(5)
    repeated = candidate.iloc[0]
    candidate.loc[len(candidate)] = [repeated["query_id"], repeated["doc_id"], 999, 0.0]
    coded = code_pair(judgments, baseline, candidate, topics)
    with pytest.raises(InputError, match="duplicate doc id in one ranking") as text:
        optimistic_bound(judgments, baseline, candidate, METRICS, topics)
    with pytest.raises(InputError, match="duplicate doc id in one ranking") as fast:
        optimistic_bound(judgments, baseline, candidate, METRICS, topics, coded=coded)
    assert str(fast.value) == str(text.value)


@pytest.mark.parametrize("seed", [6, 7])
def test_rows_in_stored_order_score_as_shuffled_rows_do(seed: int) -> None:
    """Stored results come by query then rank, and the coded path then skips its sorts: the
    bound and the overlap must not tell that order from a shuffled one."""
    judgments, baseline, candidate, topics = _world(seed)
    stored = [
        frame.sort_values(["query_id", "rank"], kind="stable").reset_index(drop=True)
        for frame in (baseline, candidate)
    ]
    shuffled_codes = code_pair(judgments, baseline, candidate, topics)
    stored_codes = code_pair(judgments, *stored, topics)
    assert not np.array_equal(shuffled_codes.baseline.value, stored_codes.baseline.value)

    summary, frame = rank_overlap(baseline, candidate, coded=shuffled_codes)
    stored_summary, stored_frame = rank_overlap(*stored, coded=stored_codes)
    assert stored_summary == summary
    pd.testing.assert_frame_equal(stored_frame, frame, check_exact=True)

    text = optimistic_bound(judgments, baseline, candidate, METRICS, topics)
    fast = optimistic_bound(judgments, *stored, METRICS, topics, coded=stored_codes)
    pd.testing.assert_frame_equal(fast.baseline, text.baseline, check_exact=True)
    pd.testing.assert_frame_equal(fast.candidate, text.candidate, check_exact=True)


def test_common_documents_are_the_join_of_both_rankings() -> None:
    """The sorted search finds the rows the two-column join finds; a ranking that repeats a
    document takes the join itself."""
    from evalplat.comparison.overlap import _common

    rng = np.random.default_rng(8)

    def ranking(size: int) -> pd.DataFrame:
        q = rng.integers(0, 30, size=size)
        d = rng.integers(0, 60, size=size)
        frame = pd.DataFrame({"q": q, "d": d}).drop_duplicates().reset_index(drop=True)
        return frame.assign(pos=rng.permutation(len(frame)) + 1)

    def rows(found: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
        return sorted(zip(*(part.tolist() for part in found), strict=True))

    a, b = ranking(400), ranking(400)
    joined = a.merge(b, on=["q", "d"], suffixes=("_a", "_b"))
    expected = rows((joined["q"].to_numpy(), joined["pos_a"].to_numpy(),
                     joined["pos_b"].to_numpy()))  # fmt: skip
    assert len(expected) > 20
    assert rows(_common(a, b)) == expected

    repeated = pd.concat([a, a.iloc[:3]], ignore_index=True)
    joined = repeated.merge(b, on=["q", "d"], suffixes=("_a", "_b"))
    assert rows(_common(repeated, b)) == rows(
        (joined["q"].to_numpy(), joined["pos_a"].to_numpy(), joined["pos_b"].to_numpy())
    )
    empty = a.iloc[:0]
    assert rows(_common(empty, b)) == []


def _pair_equal(one: object, other: object) -> None:
    from evalplat.comparison.coded import CodedPair

    assert isinstance(one, CodedPair) and isinstance(other, CodedPair)
    assert (one.queries, one.topics, one.docs) == (other.queries, other.topics, other.docs)
    np.testing.assert_array_equal(one.topic, other.topic)
    for side in ("judgments", "baseline", "candidate"):
        for part in ("query", "doc", "value"):
            np.testing.assert_array_equal(
                getattr(getattr(one, side), part), getattr(getattr(other, side), part)
            )


def test_judgments_coded_once_serve_every_pair_with_the_same_codes() -> None:
    """A night codes its judgments once and each config's pair against them: the codes are
    those of coding the three frames together, numbered by first appearance."""
    from evalplat.comparison.coded import judged_ids

    judgments, baseline, candidate, topics = _world(9)
    _, other_baseline, other_candidate, _ = _world(10)
    judged = judged_ids(judgments)
    for runs in ((baseline, candidate), (other_baseline, other_candidate)):
        kept = code_pair(judged, *runs, topics)
        _pair_equal(kept, code_pair(judgments, *runs, topics))
        ids = pd.concat([judgments["doc_id"], *(frame["doc_id"] for frame in runs)])
        numbered, _ = pd.factorize(ids)
        codes = np.concatenate([kept.judgments.doc, kept.baseline.doc, kept.candidate.doc])
        np.testing.assert_array_equal(codes, numbered)


@pytest.mark.parametrize("where", ["judgments", "runs"])
def test_ids_that_share_a_fingerprint_still_get_codes_of_their_own(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No two real ids are known to share a 64-bit fingerprint, so a weak one stands in: every
    id of the same length collides, among the judgments or only between them and the runs."""
    from evalplat.comparison.coded import judged_ids
    from evalplat.metrics.doc_keys import StringColumn

    judgments, baseline, candidate, topics = _world(11)
    if where == "runs":  # the judgments alone code without a collision
        judged = judged_ids(judgments)
    monkeypatch.setattr(StringColumn, "fingerprint", lambda self: self.lengths.astype(np.uint64))
    if where == "judgments":
        judged = judged_ids(judgments)
        assert judged.codes is None
    coded = code_pair(judged, baseline, candidate, topics)
    ids = pd.concat([judgments["doc_id"], baseline["doc_id"], candidate["doc_id"]])
    numbered, _ = pd.factorize(ids)
    codes = np.concatenate([coded.judgments.doc, coded.baseline.doc, coded.candidate.doc])
    np.testing.assert_array_equal(codes, numbered)
    assert coded.docs == ids.nunique()
