"""The run's pair keys made in parts and blocks answer exactly as one pass over all rows."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics import pair_keys
from evalplat.metrics.evaluation import evaluate

METRICS = ["AP", "P@5", "nDCG@10", "RR", "NumRelRet"]


def _workload(seed: int, grouped: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    topics = [f"q{i}" for i in range(40)]
    rows = []
    for topic in topics:
        docs = rng.choice(500, size=int(rng.integers(1, 60)), replace=False)
        rows += [(topic, f"d{d}", float(rng.integers(0, 5))) for d in docs]  # many score ties
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if not grouped:  # topics interleaved: both parts hold rows of the same topics
        run = run.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    judged = run.sample(frac=0.4, random_state=seed + 1)[["query_id", "doc_id"]]
    qrels = judged.assign(grade=rng.integers(0, 4, size=len(judged)))
    return qrels, run


def _small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pair_keys, "_PARALLEL_ROWS", 2)
    monkeypatch.setattr(pair_keys, "_BLOCK_ROWS", 7)
    monkeypatch.setattr(pair_keys, "_cores", lambda: 2)  # two parts, on any machine


def test_a_budget_of_one_core_keys_every_part_on_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    qrels, run = _workload(3, grouped=True)
    whole = evaluate(qrels, run, METRICS)
    _small_parts(monkeypatch)
    monkeypatch.setattr(pair_keys, "_cores", lambda: 1)

    def no_thread(*args: object, **kwargs: object) -> None:
        raise AssertionError("a thread was started on a budget of one core")

    monkeypatch.setattr(pair_keys, "ThreadPoolExecutor", no_thread)
    alone = evaluate(qrels, run, METRICS)
    assert alone.means == whole.means
    monkeypatch.setattr(pair_keys, "_cores", lambda: 2)
    with pytest.raises(AssertionError, match="a thread was started"):
        evaluate(qrels, run, METRICS)


@pytest.mark.parametrize("grouped", [True, False])
def test_keys_in_parts_and_blocks_give_the_values_of_one_pass(
    monkeypatch: pytest.MonkeyPatch, grouped: bool
) -> None:
    qrels, run = _workload(3, grouped)
    whole = evaluate(qrels, run, METRICS)
    _small_parts(monkeypatch)
    parts = evaluate(qrels, run, METRICS)
    assert parts.means == whole.means
    for name in whole.values:
        assert parts.values[name].tolist() == whole.values[name].tolist()


@pytest.mark.parametrize("first, second", [(0, 1), (0, -1), (-2, -1)])
def test_a_repeated_doc_is_found_within_a_part_and_across_parts(
    monkeypatch: pytest.MonkeyPatch, first: int, second: int
) -> None:
    qrels, run = _workload(5, grouped=False)
    run = run.copy()
    run.loc[run.index[second], ["query_id", "doc_id"]] = run.loc[
        run.index[first], ["query_id", "doc_id"]
    ].to_numpy()
    _small_parts(monkeypatch)
    with pytest.raises(InputError, match="duplicate doc id in one ranking"):
        evaluate(qrels, run, METRICS)


def test_the_split_falls_where_the_topic_changes() -> None:
    topic = np.repeat(np.arange(5, dtype=np.int32), [3, 4, 1, 6, 2])
    split = pair_keys._split_point(topic)
    assert topic[split] != topic[split - 1]
    assert not pair_keys._share_topics(topic, split)
    assert pair_keys._share_topics(np.array([0, 1, 0, 1], dtype=np.int32), 2)


def test_one_topic_past_the_middle_is_one_part() -> None:
    topic = np.array([0, 1, 2, 2, 2, 2, 2, 2], dtype=np.int32)
    assert pair_keys._split_point(topic) == 0


def test_blocks_of_a_grouped_run_hold_whole_topics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pair_keys, "_BLOCK_ROWS", 4)
    topic = np.repeat(np.arange(5, dtype=np.int32), [3, 4, 1, 6, 2])
    changes = np.flatnonzero(topic[1:] != topic[:-1]) + 1
    blocks = pair_keys._blocks(changes, 0, len(topic))
    assert blocks[0][0] == 0 and blocks[-1][1] == len(topic)
    for (_, high), (low, _) in itertools.pairwise(blocks):
        assert high == low and topic[low] != topic[low - 1]
