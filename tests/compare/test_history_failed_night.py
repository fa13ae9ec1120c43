"""A failed night in a config's history: shown as not scored, and the night after it is marked
"new judgments" only when its judgments did change (``history`` and the history page alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalplat.reports.gather import gather_history
from evalplat.reports.history_render import history_html
from evalplat.store import EvaluationRecord, Store

from .helpers import one_query_content


def _night(store: Store, version: int, value: float | None) -> int:
    """One run of ``engine`` on small@``version``: scored ``value``, or failed when None."""
    test_set = store.test_set_version_id(f"small@{version}")
    run = store.create_run(store.config_version_id("engine"), test_set, depth=10, queries_total=1)
    if value is None:
        store.finish_run(run, "failed", error="the engine was down")
    else:
        scores = EvaluationRecord(test_set, [("nDCG@10", "q1", value)], {"nDCG@10": (value, 1)})
        store.finish_run(run, "complete", evaluation=scores)
    return run


def test_a_failed_night_is_not_scored_and_leaves_the_next_night_unmarked(
    store: Store, db_url: str, cli: Callable[..., Any]
) -> None:
    store.import_test_set("small", one_query_content(0))
    store.add_config("engine", "python", {"function": "json:loads"})
    first, failed, after = _night(store, 1, 0.5), _night(store, 1, None), _night(store, 1, 0.5)
    store.import_test_set("small", one_query_content(2))
    regraded = _night(store, 2, 0.9)
    rows = {
        line.split("│")[1].strip(" *"): line
        for line in cli("history", "engine", "--db", db_url).stdout.splitlines()
        if line.count("│") > 2
    }
    assert "not scored" in rows[str(failed)] and "vNone" not in rows[str(failed)]
    assert [("◆" in rows[str(run)]) for run in (first, failed, after, regraded)] == [
        False, False, False, True,
    ]  # fmt: skip
    [page] = gather_history(store, "engine")
    assert page.new_judgments == (False, False, False, True)
    html = history_html(page)
    assert html.count("◆ new judgments</span>") == 1 and "not scored" in html
