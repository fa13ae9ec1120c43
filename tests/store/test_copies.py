"""A finished run's results are kept a second time as Arrow IPC (``evalplat.store.copies``):
read back they are the very frame the ``result`` table gives, and the copy goes whenever the
rows it copies change (a resumed run, retention), on both databases."""

from __future__ import annotations

from datetime import timedelta

import pandas.testing as pdt
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from sqlalchemy import delete, func, select, update

from evalplat.db.models import Result, ResultCopy
from evalplat.errors import InputError
from evalplat.store import EvaluationRecord, QueryOutcome, Store, copies
from evalplat.store.base import utcnow

from ..runner.helpers import new_run, small_content


def _outcomes(queries: range) -> list[QueryOutcome]:
    """Ranked hits with the awkward values a copy must keep: no score, a score of NaN's
    neighbours, non-ASCII and tab-holding ids, an id that only differs by case."""
    found = []
    for n in queries:
        hits: list[tuple[str, float | None]] = [
            (f"d{n}", 2.5),
            (f"doc é {n}", None),
            (f"D{n}", -0.0),
            (f"tab\t{n}", 1e-300),
        ]
        found.append(QueryOutcome(f"q{n}", "ok", hits))
    return found


def _evaluation(version_id: int) -> EvaluationRecord:
    return EvaluationRecord(version_id, [("P@1", "q0", 1.0)], {"P@1": (1.0, 1)})


def _parts(store: Store, run_id: int) -> int:
    with store.session() as session:
        query = select(func.count()).select_from(ResultCopy).where(ResultCopy.run_id == run_id)
        return int(session.scalar(query) or 0)


def _from_table(db_url: str, run_id: int, monkeypatch: pytest.MonkeyPatch) -> object:
    """The run's results as the ``result`` table gives them (the copy not consulted)."""
    import evalplat.store.run_reads as run_reads

    with monkeypatch.context() as patch:
        patch.setattr(run_reads, "read_results", lambda *_: None)
        with Store.open(db_url) as store:
            return store.load_results(run_id)


def _scored_and_finished(store: Store, queries: range) -> int:
    run_id, version_id = new_run(store)
    store.record_outcomes(run_id, _outcomes(queries))
    store.load_results(run_id)  # read whole to score it, as the runner does
    store.finish_run(run_id, "complete", evaluation=_evaluation(version_id))
    return run_id


def test_a_scored_run_is_copied_and_read_back_as_the_table_gives_it(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(copies, "PART_ROWS", 7)  # several parts, the last one short
    with Store.open(db_url) as store:
        run_id = _scored_and_finished(store, range(10))
        assert _parts(store, run_id) == 6  # 40 rows in parts of 7
    with Store.open(db_url) as store:
        copied = store.load_results(run_id)
        # the copy alone answers: with the table emptied behind its back it still reads whole
        with store.session() as session:
            session.execute(delete(Result).where(Result.run_id == run_id))
    with Store.open(db_url) as store:
        assert len(store.load_results(run_id)) == 40
    assert copied["score"].isna().sum() == 10
    assert "doc é 3" in set(copied["doc_id"])


def test_the_copy_is_exactly_the_table_read(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(db_url) as store:
        run_id = _scored_and_finished(store, range(10))
    with Store.open(db_url) as store:
        copied = store.load_results(run_id)
    pdt.assert_frame_equal(copied, _from_table(db_url, run_id, monkeypatch), check_exact=True)


def _plain(table: pa.Table) -> bytes:
    """``table`` as one uncompressed IPC stream: a copy as it was written before compression."""
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def test_copies_are_compressed_and_one_written_uncompressed_reads_as_before(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.open(db_url) as store:
        run_id = _scored_and_finished(store, range(2000))
        with store.session() as session:
            (blob,) = session.scalars(select(ResultCopy.data).where(ResultCopy.run_id == run_id))
            table = copies.read_result_table(session, run_id)
        copied = store.load_results(run_id)
    assert table is not None and table.num_rows == 8000
    plain = _plain(table)
    assert len(blob) < len(plain) / 2
    with Store.open(db_url) as store, store.session(write=True) as session:
        session.execute(update(ResultCopy).where(ResultCopy.run_id == run_id).values(data=plain))
    with Store.open(db_url) as store:
        pdt.assert_frame_equal(store.load_results(run_id), copied, check_exact=True)
    pdt.assert_frame_equal(copied, _from_table(db_url, run_id, monkeypatch), check_exact=True)


def test_a_run_finished_without_being_read_whole_has_no_copy(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id, _ = new_run(store)
        store.record_outcomes(run_id, _outcomes(range(3)))
        store.finish_run(run_id, "failed", error="the engine went away")
        assert _parts(store, run_id) == 0
        assert len(store.load_results(run_id)) == 12  # from the table


def test_resuming_a_run_drops_its_copy_and_finishing_again_copies_all_of_it(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.open(db_url) as store:
        run_id, version_id = new_run(store)
        store.record_outcomes(run_id, _outcomes(range(5)))
        store.load_results(run_id)
        store.finish_run(run_id, "partial", error="5 of 10 queries failed")
        assert _parts(store, run_id) == 1
        store.reopen_run(run_id)
        assert _parts(store, run_id) == 0
        store.record_outcomes(run_id, _outcomes(range(5, 10)))
        store.load_results(run_id)
        store.finish_run(run_id, "complete", evaluation=_evaluation(version_id))
        assert _parts(store, run_id) == 1
    with Store.open(db_url) as store:
        copied = store.load_results(run_id)
    assert len(copied) == 40
    pdt.assert_frame_equal(copied, _from_table(db_url, run_id, monkeypatch), check_exact=True)


def test_a_batch_stored_after_the_copy_drops_it(db_url: str) -> None:
    """Nothing but a resume stores into a finished run; should anything, the copy would be
    stale, so every stored batch drops it and reads fall back to the table."""
    with Store.open(db_url) as store:
        run_id = _scored_and_finished(store, range(5))
        store.record_outcomes(run_id, _outcomes(range(5, 7)))
        assert _parts(store, run_id) == 0
    with Store.open(db_url) as store:
        assert len(store.load_results(run_id)) == 28


def test_retention_drops_the_copy_with_the_results(db_url: str) -> None:
    with Store.open(db_url) as store:
        baseline = _scored_and_finished(store, range(3))  # the first: the baseline, kept
        run_id = _scored_and_finished(store, range(3))
        assert store.prune_results(30, now=utcnow() + timedelta(days=31)) == [run_id]
        assert _parts(store, baseline) > 0
        assert _parts(store, run_id) == 0
        with pytest.raises(InputError, match="pruned"):
            store.load_results(run_id)


def _graded_content() -> object:
    """Judgments out of byte order, from several sources for one pair, with ids whose byte
    order differs from a dictionary's (capitals, accents)."""
    import pandas as pd

    from evalplat.testsets.content import TestSetContent

    ids = ["q2", "Q1", "q10", "é"]
    judgments = pd.DataFrame(
        {
            "query_id": ["q10", "q2", "Q1", "é", "q2", "q2"],
            "doc_id": ["b", "a", "z", "d", "B", "B"],
            "grade": [1, 0, 3, 2, 1, 2],
            "source": [None, "ann", None, "bob", "ann", "bob"],
        }
    )
    queries = pd.DataFrame(
        {"query_id": ids, "text": ids, "weight": [float("nan")] * 4, "tags": [None] * 4}
    )
    return TestSetContent(queries=queries, judgments=judgments, grade_rule="max")


@pytest.mark.parametrize("several_sources", [False, True])
def test_an_imported_version_reads_its_judgments_from_a_copy_equal_to_the_table(
    db_url: str, monkeypatch: pytest.MonkeyPatch, several_sources: bool
) -> None:
    from evalplat.db.models import Judgment, JudgmentCopy, TestSetVersion

    content = _graded_content() if several_sources else small_content()
    with Store.open(db_url) as store:
        store.import_test_set("graded", content)  # type: ignore[arg-type]
        with store.session() as session:
            version = session.scalars(select(TestSetVersion)).one()
            copied = store._judgments(session, version)
            parts = session.scalar(select(func.count()).select_from(JudgmentCopy))
            # the copy alone answers: a store reading afresh sees it with the table emptied
            session.execute(delete(Judgment))
            fresh = Store.open(db_url)
            try:
                assert len(fresh._judgments(session, version)) == len(copied)
            finally:
                fresh.close()
            session.rollback()
        with monkeypatch.context() as patch:
            patch.setattr(copies, "read_judgments", lambda *_: None)
            with Store.open(db_url) as plain, plain.session() as session:
                version = session.scalars(select(TestSetVersion)).one()
                from_table = plain._judgments(session, version)
    assert parts == 1
    pdt.assert_frame_equal(copied, from_table, check_exact=True)
    if several_sources:
        assert copied["query_id"].tolist() == ["Q1", "q10", "q2", "q2", "é"]
        assert copied["doc_id"].tolist() == ["z", "b", "B", "a", "d"]


def test_an_evaluation_reads_its_scores_from_a_copy_equal_to_the_table(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scores stored out of order, with ids that sort differently by code point and by
    collation, come back from the copy as the table's key orders them, typed the same; an
    evaluation without a copy (stored before it existed) reads the table."""
    import evalplat.store.run_reads as run_reads
    from evalplat.db.evaluations import QueryScore, ScoreCopy
    from evalplat.store.evaluation_rows import latest_evaluations

    rows = [("P@1", q, float(n)) for n, q in enumerate(["q2", "é", "Q1", "q10"])]
    rows += [("AP", "q2", 0.25), ("AP", "é", -0.0), ("AP", "Q1", 1e-300)]
    with Store.open(db_url) as store:
        run_id, version_id = new_run(store)
        store.record_outcomes(run_id, _outcomes(range(2)))
        record = EvaluationRecord(version_id, rows, {"P@1": (1.5, 4), "AP": (0.5, 3)})
        store.finish_run(run_id, "complete", evaluation=record)
        copied = store.evaluation_scores(run_id)
        with store.session() as session:
            assert session.scalar(select(func.count()).select_from(ScoreCopy)) == 1
            evaluation_id = latest_evaluations(session, [run_id])[run_id]
            # the copy alone answers: with the table emptied behind its back it still reads
            session.execute(delete(QueryScore))
            assert len(run_reads.scores_of(session, evaluation_id, ordered=True)) == 7
            session.rollback()
    with monkeypatch.context() as patch:
        patch.setattr(run_reads, "read_scores", lambda *_: None)
        with Store.open(db_url) as store:
            from_table = store.evaluation_scores(run_id)
    pdt.assert_frame_equal(copied, from_table, check_exact=True)
    assert list(zip(copied["metric"], copied["query_id"], strict=True))[:4] == [
        ("AP", "Q1"), ("AP", "q2"), ("AP", "é"), ("P@1", "Q1")
    ]  # fmt: skip


def test_the_top_k_of_latest_runs_from_copies_equals_the_rows_query(db_url: str) -> None:
    """Query health's top ``k`` of each latest run (judged or not), read from the copies of
    the runs' results and of the version's judgments, is the frame the ``result`` table's
    query gives: the same rows, order, types and judged flags, ranks past ``k`` left out."""
    from evalplat.store.query_health import _TOP_TYPES, _top, _top_of_copies, _top_of_rows

    columns, types = list(_TOP_TYPES), _TOP_TYPES
    with Store.open(db_url) as store:
        first = _scored_and_finished(store, range(10))
        version_id = store.test_set_version_id("small")
        second = store.create_run(
            store.config_version_id("engine"), version_id, depth=10, queries_total=10
        )

        # judged documents (dN, dN+1) among unjudged ones, below and past k = 3
        def hits(n: int) -> list[tuple[str, float | None]]:
            return [(f"x{n}", 3.0), (f"d{n + 1}", 2.0), (f"d{n}", 1.0), (f"d{n + 2}", 0.5),
                    (f"d{n}é", 0.1)]  # fmt: skip

        store.record_outcomes(second, [QueryOutcome(f"q{n}", "ok", hits(n)) for n in (9, 0, 3)])
        store.load_results(second)
        store.finish_run(second, "complete", evaluation=_evaluation(version_id))
        latest = {second: "b", first: "a"}
        with store.session() as session:
            copied = _top_of_copies(session, latest, version_id, 3)
            rows = _top_of_rows(session, latest, version_id, 3, None)
            top = _top(session, latest, version_id, 3)
            session.execute(delete(ResultCopy).where(ResultCopy.run_id == first))
            assert _top_of_copies(session, latest, version_id, 3) is None  # a run without one
            session.rollback()
    assert copied is not None
    pdt.assert_frame_equal(copied[columns].pipe(_typed, types), rows, check_exact=True)
    assert len(rows) == 30 + 9 and rows["rank"].max() == 3
    # dN of each query of the first run; dN+1 and dN of the second's three queries
    assert rows["judged"].notna().sum() == 10 + 6
    assert top["config"].tolist()[:3] == ["a"] * 3 and top["judged"].sum() == 16


def _typed(frame: object, types: dict[str, str]) -> object:
    from evalplat.db.bulk import typed_frame

    return typed_frame(frame, types)  # type: ignore[arg-type]
