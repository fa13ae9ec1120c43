"""A stored comparison keeps its runs' operational facts, and one stored before facts were
kept reads them again from the runs' records (both databases)."""

from __future__ import annotations

from pathlib import Path

from evalplat.db.evaluations import Comparison
from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import load_testset

QUERIES = 8


def test_facts_are_kept_with_the_comparison_and_read_again_for_an_older_one(
    store: Store, tmp_path: Path
) -> None:
    qrels = "".join(f"q{n} 0 d{n} 1\n" for n in range(1, QUERIES + 1))
    (tmp_path / "qrels.txt").write_text(qrels, encoding="utf-8")
    (tmp_path / "queries.tsv").write_text(
        "".join(f"q{n}\ttopic {n}\n" for n in range(1, QUERIES + 1)), encoding="utf-8"
    )
    content = load_testset(tmp_path / "qrels.txt", queries=tmp_path / "queries.tsv")
    store.import_test_set("mini", content)
    full = tmp_path / "full.run"
    full.write_text("".join(f"q{n} Q0 d{n} 1 3 t\n" for n in range(1, QUERIES + 1)))
    sparse = tmp_path / "sparse.run"
    sparse.write_text("q1 Q0 d1 1 3 t\nq2 Q0 d2 1 3 t\n")  # six of eight answer nothing
    metrics = ["nDCG@10", "Judged@10"]
    first = runner.import_run(store, full, "docs", "mini", label="a", metrics=metrics).id
    second = runner.import_run(store, sparse, "docs", "mini", label="b", metrics=metrics).id

    result = store.compare_runs(first, second)
    assert [(f.kind, f.sentence, f.side, f.new) for f in result.facts] == [
        ("zero_results", f"6 of 8 queries returned nothing (run {second})", "candidate", True)
    ]
    assert result.id is not None
    assert store.load_comparison(result.id).facts == result.facts
    # every document shown is judged on both sides: the judged share did not fall either way
    back = store.compare_runs(second, first).facts
    assert [(f.kind, f.side, f.run) for f in back] == [("zero_results", "baseline", second)]

    with store.session() as session:
        row = session.get(Comparison, result.id)
        assert row is not None and "facts" in row.options
        row.options = {key: value for key, value in row.options.items() if key != "facts"}
    assert store.load_comparison(result.id).facts == result.facts
    healthy = store.compare_runs(first, first)
    assert healthy.facts == ()
