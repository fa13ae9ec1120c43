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
