"""The run page states the run's operational facts from the same computation as comparisons,
read from a real store (both databases): here, a query with an empty text."""

from __future__ import annotations

import re
from pathlib import Path

from evalplat.reports import run_html
from evalplat.reports.gather import gather_run
from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import load_testset


def imported_run(store: Store, folder: Path, name: str, second_text: str) -> int:
    """A three-query test set ``name`` whose q2 has ``second_text``, and a run answering all."""
    folder.mkdir()
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        f'{{"id": "q1", "text": "laminar flow"}}\n{{"id": "q2", "text": "{second_text}"}}\n'
        '{"id": "q3", "text": "shock waves"}\n',
        encoding="utf-8",
    )
    content = load_testset(folder / "qrels.txt", queries=folder / "queries.jsonl")
    store.import_test_set(name, content)
    ranked = folder / "a.run"
    ranked.write_text("q1 Q0 d1 1 3 t\nq2 Q0 d2 1 3 t\nq3 Q0 d3 1 3 t\n", encoding="utf-8")
    return runner.import_run(store, ranked, f"{name}-cfg", name, metrics=["nDCG@10"]).id


def facts_block(html: str) -> str | None:
    found = re.search(r'<section[^>]*aria-label="operational facts".*?</section>', html, re.S)
    return None if found is None else found.group(0)


def test_run_page_states_an_empty_query_text_and_nothing_for_a_healthy_run(
    store: Store, tmp_path: Path
) -> None:
    blank = imported_run(store, tmp_path / "blank", "blank", "")
    page = gather_run(store, blank)
    assert [(f.kind, f.sentence) for f in page.facts] == [
        ("empty_text", f"1 query has an empty text (run {blank})")
    ]
    block = facts_block(run_html(page))
    assert block is not None
    assert 'data-fact-kind="empty_text"' in block and "1 query has an empty text" in block

    healthy = gather_run(store, imported_run(store, tmp_path / "fine", "fine", "boundary"))
    assert healthy.facts == ()
    assert facts_block(run_html(healthy)) is None
