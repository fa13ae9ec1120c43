"""The report site shows an interleaved experiment: its page, the candidate's index row and its
history, opened from disk in headless Chromium, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.reports.site import write_site
from evalplat.store import Store

from ..events.interleaved import write_interleaved_log


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, errors


def test_the_site_shows_the_experiment_its_verdict_and_history(
    store: Store, tmp_path: Path, browser: Any
) -> None:
    for name in ("prod", "cand"):
        store.add_config(name, "builtin")
    for day, lean in ((1, 0.5), (2, 0.3)):
        log = write_interleaved_log(tmp_path / f"d{day}.jsonl", "cand", "prod", sessions=300,
                                    lean=lean, seed=day,
                                    day=datetime(2026, 3, day, 8, tzinfo=UTC))  # fmt: skip
        store.import_events([log])
    first, second = store.score_preference("cand", "prod")
    store.record_preference_verdict(first.run_id, "unchanged")
    store.record_preference_verdict(second.run_id, "regression")
    index = write_site(store, tmp_path / "site")

    page, errors = _open(browser, index)
    link = page.locator("#interleaved-link a")
    assert link.inner_text() == "Interleaved experiments"
    row = page.locator('tr[data-config="cand"][data-testset="online"]')
    # the day regressed, but no night's day rule opened an alert: the index row is watching
    assert row.get_attribute("data-verdict") == "watching"
    link.click()
    page.wait_for_load_state("load")
    rows = page.locator("#interleaved tbody tr")
    assert rows.count() == 2
    newest = rows.nth(0)
    assert (newest.get_attribute("data-day"), newest.get_attribute("data-verdict")) == (
        "2026-03-02", "regression"
    )  # fmt: skip
    cells = newest.locator("td").all_inner_texts()
    assert cells[1:4] == ["cand@1", "prod@1", str(second.sessions)]
    assert cells[8] == f"{second.preference:+.4f}".replace("-", "\u2212")
    assert "regression" in cells[10] and "unchanged" in rows.nth(1).inner_text()
    assert "quer" not in page.locator("body").inner_text().lower()
    page.locator("#interleaved tbody tr >> nth=0 >> a").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("history/cand--online.html")
    assert "online:Preference" in page.locator("body").inner_text()
    assert errors == []
