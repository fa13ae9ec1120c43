"""``evalplat runs export RUN --format trec``: stored order kept, round trip to the same scores."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.formats.run_export import write_trec_run
from evalplat.formats.trec import read_run
from evalplat.running import runner
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import load_testset

from .helpers import small_content


def _results(rows: list[tuple[str, str, int, float | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])


def test_scores_that_keep_the_order_are_written_as_stored() -> None:
    out = io.StringIO()
    done = write_trec_run(
        _results([("q1", "b", 1, 2.5), ("q1", "a", 2, 1.0), ("q2", "z", 1, 0.5)]), out, "my run"
    )
    assert out.getvalue() == "q1 Q0 b 1 2.5 my_run\nq1 Q0 a 2 1.0 my_run\nq2 Q0 z 1 0.5 my_run\n"
    assert (done.lines, done.queries, done.rescored) == (3, 2, 0)


def test_ties_broken_against_trec_order_get_scores_from_ranks() -> None:
    # the engine put "a" above "b" with equal scores; trec_eval would put "b" first
    out = io.StringIO()
    rows = [("q1", "a", 1, 1.0), ("q1", "b", 2, 1.0), ("q1", "c", 3, None),
            ("q2", "y", 1, 3.0), ("q2", "x", 2, 3.0)]  # fmt: skip
    done = write_trec_run(_results(rows), out, "t")
    assert done.rescored == 1  # q1 only: in q2, "y" > "x" keeps the order on the tie
    path_lines = out.getvalue().splitlines()
    assert path_lines[:3] == ["q1 Q0 a 1 3.0 t", "q1 Q0 b 2 2.0 t", "q1 Q0 c 3 1.0 t"]
    assert path_lines[3:] == ["q2 Q0 y 1 3.0 t", "q2 Q0 x 2 3.0 t"]


def test_an_id_with_whitespace_is_refused() -> None:
    with pytest.raises(InputError, match="whitespace"):
        write_trec_run(_results([("q 1", "a", 1, 1.0)]), io.StringIO(), "t")


def test_exported_run_round_trips_through_import_run_and_evaluate(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    content = small_content()
    with Store.open(db_url) as store:
        store.import_test_set("small", content)
        store.add_config("engine", "python", {"function": "json:loads"})
        # an engine's own order: ties, and scores out of order, that trec_eval would reorder
        run_id = store.create_run(store.config_version_id("engine"),
                                  store.test_set_version_id("small"), depth=3,
                                  queries_total=10)  # fmt: skip
        outcomes = [
            QueryOutcome(f"q{n}", "ok", [(f"d{n}", 1.0), (f"d{n + 1}", 1.0), (f"d{n + 2}", 0.5)])
            for n in range(7)
        ] + [
            QueryOutcome("q7", "ok", [("d8", 4.5), ("d7", 9.0), ("d0", 1.0)]),
            QueryOutcome("q8", "ok", [("d8", 9.0), ("d9", 4.5)]),
            QueryOutcome("q9", "ok", []),
        ]
        store.record_outcomes(run_id, outcomes)
        loaded = store.load_test_set("small")
        results = store.load_results(run_id)
        metrics = ["nDCG@10", "AP", "RR", "P@1"]
        record = runner.evaluation_record(
            loaded, results, metrics, store.test_set_version_id("small")
        )
        store.finish_run(run_id, "complete", evaluation=record)
        stored = store.run_info(run_id).means
    target = tmp_path / "exported.run"
    done = cli("runs", "export", "engine@latest", "--format", "trec", "--out", str(target),
               "--db", db_url)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "26 results of 9 queries; 8 with scores from ranks" in done.stderr
    frame = read_run(target)
    assert len(frame) == 26 and set(frame["query_id"]) == {f"q{n}" for n in range(9)}
    shown = cli("runs", "export", str(run_id), "--db", db_url)
    assert shown.stdout == target.read_text(encoding="utf-8")
    imported = cli("import-run", str(target), "--config", "again", "--testset", "small",
                   "--metric", "nDCG@10", "--metric", "AP", "--metric", "RR", "--metric", "P@1",
                   "--json", "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    again = json.loads(imported.stdout)["means"]
    for name in metrics:
        assert again[name] == pytest.approx(stored[name], abs=1e-12)
    # stateless evaluation of the file against the test set's qrels: the same numbers
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g, _ in
                             content.judgments.itertuples(index=False)))  # fmt: skip
    evaluated = cli("evaluate", "--qrels", str(qrels), "--run", str(target), "--metric",
                    "nDCG@10", "--metric", "AP", "--format", "json")  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.stderr
    means = json.loads(evaluated.stdout)["means"]
    for name in ("nDCG@10", "AP"):
        assert means[name] == pytest.approx(stored[name], abs=1e-12)
    loaded_back = load_testset(qrels)  # the qrels file is valid as written
    assert len(loaded_back.judgments) == len(content.judgments)


def test_exporting_a_run_in_an_unknown_format_is_refused(
    db_url: str, cli: Callable[..., Any]
) -> None:
    result = cli("runs", "export", "1", "--format", "csv", "--db", db_url)
    assert result.exit_code == 2 and "--format must be trec" in result.stderr
