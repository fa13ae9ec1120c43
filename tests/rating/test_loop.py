"""The whole loop a lead runs, in Chromium: a ``needs_judgments`` alert, a rating task made
from the run's unjudged pairs, graded in the browser, closed into a new version, and the next
night's alert resolved; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from ..nightly.small_project import QUERIES, write_project
from .servers import open_invite, rating_server
from .test_browser import doc_on

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page


def test_a_needs_judgments_alert_is_resolved_by_grades_given_in_the_browser(
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    capture: CaptureServer,
    invite: Callable[..., str],
    browser: Any,
) -> None:
    def night(mode: str) -> list[dict[str, Any]]:
        path = write_project(tmp_path / "project", {"alpha": mode}, hook=f"{capture.url}/ok")
        steps: list[dict[str, Any]] = []
        assert run_nightly(load_project(path), db_url=db_url, log=steps.append).exit_code == 0
        return steps

    def alerts() -> list[list[tuple[str, str]]]:
        return [
            [(a["kind"], a["event"]) for a in r.body["alerts"]] for r in capture.accepted("/ok")
        ]

    night("good")
    night("unjudged")  # uN and vN, which nobody judged, replace the relevant dN
    assert alerts() == [[("needs_judgments", "opened")]]

    made = cli("rate", "task", "unjudged-alpha", "--testset", "topics", "--from-run",
               "alpha@latest", "--db", db_url)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    assert f"{2 * QUERIES} pairs" in made.stdout and "grades 0-1" in made.stdout
    with rating_server(db_url) as base:
        page = browser.new_page()
        open_invite(page, invite("unjudged-alpha", "lead", base, "--role", "lead"))
        for _ in range(2 * QUERIES):
            relevant = doc_on(page).startswith("u")  # uN answers topic N; vN does not
            with page.expect_navigation():
                page.keyboard.press("1" if relevant else "0")
        assert page.locator("#done").is_visible()
    closed = cli("rate", "close", "unjudged-alpha", "--db", db_url)
    assert closed.exit_code == 0, closed.stderr
    assert "topics@2" in closed.stdout

    steps = night("unjudged")  # the next night scores on the raters' version
    run = next(s for s in steps if s["step"] == "run")["run"]
    verdict = next(s for s in steps if s["step"] == "compare")["verdicts"]["nDCG@10"]
    with Store.open(db_url) as store:
        assert store.run_info(run).test_set_version == 2
    assert verdict == "unchanged"  # uN as good as dN: the drop was only missing grades
    assert alerts() == [[("needs_judgments", "opened")], [("needs_judgments", "resolved")]]
