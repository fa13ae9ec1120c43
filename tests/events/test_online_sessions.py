"""Online runs speak of sessions, searches and days, never of queries: listings, `runs show`,
`compare` (text and JSON), `history` and the report site's pages, on SQLite and PostgreSQL. Query
health, unjudged documents and per-query tables are for test sets of queries only."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from evalplat.cli import app
from tests.events import test_agreement_store as ab


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result.stdout


def _refused(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, (args, result.stdout, result.stderr)
    [line] = result.stderr.strip().splitlines()
    return line


def test_listings_and_run_json_count_sessions_searches_and_days(
    db_url: str, tmp_path: Path
) -> None:
    ab._world(db_url, tmp_path)
    runs = json.loads(_cli("runs", "list", "--json", "--db", db_url))
    online = [r for r in runs if r["trigger"] == "online"]
    offline = [r for r in runs if r["trigger"] != "online"]
    assert len(online) == 10 and len(offline) == 5
    for run in online:
        assert run["unit"] == "session" and run["sessions"] == 300
        assert run["window"] == "day" and run["day"] in {"2026-03-01", "2026-03-02"}
        assert run["searches"] >= run["sessions"] and run["events"] > 0
        assert not {"queries_total", "queries_done", "queries_failed"} & set(run)
    assert all(r["unit"] == "query" and r["queries_total"] == 2 for r in offline)

    listing = _cli("runs", "list", "--db", db_url)
    assert "online 2026-03-02" in listing and "300 sessions, " in listing
    assert "2/2 queries" in listing and "0/300" not in listing
    run_id = str(online[0]["id"])
    shown = _cli("runs", "show", run_id, "--db", db_url)
    assert re.search(r"^sessions\s+300$", shown, re.M) and re.search(
        r"^window\s+2026-03-0", shown, re.M
    )
    assert not re.search(r"^queries\s", shown, re.M) and "failed" not in shown
    details = json.loads(_cli("runs", "show", run_id, "--json", "--db", db_url))
    assert details["unit"] == "session" and "failed_queries" not in details

    assert "is an online run" in _refused("unjudged", run_id, "--db", db_url)
    health = _refused("queries", "arm1", "-t", "online", "--db", db_url)
    assert "query health is for test sets of queries" in health


def test_compare_and_history_of_two_arms_say_sessions_and_days(db_url: str, tmp_path: Path) -> None:
    ab._world(db_url, tmp_path)
    text = _cli("online", "compare", "arm1", "arm2", "-m", "online:CTR", "--db", db_url)
    runs = json.loads(_cli("runs", "list", "--json", "--db", db_url))
    arm = {(r["config"], r.get("day")): r["searches"] for r in runs if r["unit"] == "session"}
    first, second = arm[("arm1", "2026-03-02")], arm[("arm2", "2026-03-02")]
    assert (f"A/B arms  300 sessions ({first} searches) against 300 ({second} searches) "
            "on 2026-03-02") in text  # fmt: skip
    assert "queries" not in text and "w/t/l" not in text and "judged" not in text
    data = json.loads(_cli("online", "compare", "arm1", "arm2", "--json", "--db", db_url))
    assert data["unit"] == "session" and "queries" not in data
    assert data["sessions"] == {"baseline": 300, "candidate": 300}
    assert data["days"] == {"baseline": "2026-03-02", "candidate": "2026-03-02"}
    assert data["searches"] == {"baseline": first, "candidate": second}
    # the stored comparison reads back the same
    again = json.loads(_cli("compare", str(data["baseline_run_id"]),
                            str(data["candidate_run_id"]), "--json", "--db", db_url))  # fmt: skip
    assert (again["unit"], again["sessions"]) == ("session", data["sessions"])
    assert again["searches"] == data["searches"]
    offline = json.loads(_cli("compare", "arm1@1", "arm2@1", "--json", "--db", db_url))
    assert (offline["unit"], offline["queries"]) == ("query", 2) and "sessions" not in offline

    history = _cli("history", "arm2", "-t", "online", "--db", db_url)
    header = history.splitlines()[1]
    assert "online:CTR" in header and "window" in header and "judgments" not in header
    assert "2026-03-01" in history and "new judgments" not in history
    points = json.loads(_cli("history", "arm2", "--json", "--db", db_url))
    assert {p["unit"] for p in points if p["test_set"] == "online"} == {"session"}
    assert {p["unit"] for p in points if p["test_set"] == "air"} == {"query"}
    assert "sessions carry no tags" in _refused(
        "history", "arm2", "-t", "online", "-s", "x", "--db", db_url
    )


def test_the_site_shows_online_runs_as_sessions_without_query_pages(
    db_url: str, tmp_path: Path
) -> None:
    ab._world(db_url, tmp_path)
    site = tmp_path / "site"
    _cli("report", "site", "--out", str(site), "--db", db_url)
    health = sorted(p.name for p in (site / "health").iterdir())
    assert health == [f"arm{n}--air.html" for n in range(1, 6)]  # none of test set online
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "health/arm1--online.html" not in index and "health/arm1--air.html" in index
    assert "online · 300 sessions on 2026-03-02" in index
    online_runs = [r for r in json.loads(_cli("runs", "list", "--json", "--db", db_url))
                   if r["trigger"] == "online"]  # fmt: skip
    page = (site / "runs" / f"run-{online_runs[0]['id']}.html").read_text(encoding="utf-8")
    assert "<dt>sessions</dt><dd>300</dd>" in page and "Sessions, not queries" in page
    assert "Distribution per session" in page
    for query_part in ("All queries", "Failed queries", "Latency (ms)", "<dt>queries</dt>"):
        assert query_part not in page, query_part
    history = (site / "history" / "arm2--online.html").read_text(encoding="utf-8")
    assert '<th scope="col">Sessions</th>' in history and "new judgments" not in history
    offline = (site / "history" / "arm2--air.html").read_text(encoding="utf-8")
    assert '<th scope="col">Judgments</th>' in offline
