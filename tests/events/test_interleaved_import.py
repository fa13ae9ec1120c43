"""Importing interleaved logs: each search's per-hit teams stored, its clicks credited per
session, and every missing or inconsistent attribution refused in one line (file and line),
exit 2, the database exactly as before; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.events.synthetic import interleaved_records
from evalplat.store import Store

from .logs import table_counts

WHEN = "2026-03-01T10:00:00Z"


def _search(qid: str, session: str, teams: list[str] | None, **attributes: Any) -> dict[str, Any]:
    hits = [f"{qid}-d{i}" for i in range(1, 5)]
    extra: dict[str, Any] = {"session_id": session, **attributes}
    if teams is not None:
        extra["teams"] = teams
    return {"query_id": qid, "client_id": "c", "user_query": "wing", "timestamp": WHEN,
            "query_response_hit_ids": hits, "query_attributes": extra}  # fmt: skip


def _click(qid: str, session: str, position: int) -> dict[str, Any]:
    return {"action_name": "click", "query_id": qid, "session_id": session, "client_id": "c",
            "timestamp": "2026-03-01T10:00:03Z",
            "event_attributes": {"position": {"ordinal": position}}}  # fmt: skip


TEAMS = ["cand", "prod", "prod", "cand"]  # positions 1 and 4 are the candidate's
GOOD = _search("ok", "s-ok", TEAMS, interleaving="team_draft")
BAD: list[tuple[dict[str, Any], str]] = [
    (_search("q", "s", None, interleaving="team_draft"), "without teams"),
    (_search("q", "s", ["cand", "prod", "prod"]), "teams lists 3 configs for 4 hits"),
    (_search("q", "s", ["cand", "prod", "web", "cand"]), "needs two configs in its teams, got 3"),
    (_search("q", "s", ["cand"] * 4), "needs two configs in its teams, got 1"),
    (_search("q", "s", TEAMS, interleaving="probabilistic"), "unknown interleaving method"),
    (_search("q", "s", TEAMS, interleaving="balanced"), "balanced interleaving without ranks"),
    (
        _search(
            "q",
            "s",
            TEAMS,
            interleaving="balanced",
            ranks={"cand": [1, None, None, 2], "prod": [None, 1, None, None]},
        ),
        "position 3 comes from prod but has no rank",
    ),
    (
        _search("q", "s", TEAMS, interleaving="balanced", ranks={"cand": [1, 2, 3, 4]}),
        "one list per team",
    ),
    (_search("q", "s-ok", ["web", "prod", "prod", "web"]), "one session belongs to one experiment"),
    (_search("q", "s", TEAMS, variant="web"), "config 'web' is not one of the search's teams"),
    (_search("q", "s", ["cand", "prod", None, "cand"]), "team at position 3 is null"),
    (_search("q", "s", TEAMS, rankers=["cand", "web"]), "team 'prod' is not one of the search"),
    (_search("q", "s", ["cand"] * 4, rankers=["cand"]), "rankers must name two configs, got 1"),
    (_search("q", "s", TEAMS, rankers=["cand", "cand"]), "ranker 'cand' is shown twice"),
]


@pytest.fixture
def configs(db_url: str) -> str:
    with Store.open(db_url) as store:
        for name in ("prod", "cand", "web"):
            store.add_config(name, "builtin")
    return db_url


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(("record", "problem"), BAD, ids=[p for _, p in BAD])
def test_a_missing_or_inconsistent_attribution_is_refused_in_one_line(
    cli: Callable[..., Any], configs: str, tmp_path: Path, record: dict[str, Any], problem: str
) -> None:
    log = _write(tmp_path / "log.jsonl", [GOOD, _click("ok", "s-ok", 1), record])
    before = table_counts(configs)
    result = cli("events", "import", str(log), "--db", configs)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert f"{log} line 3: " in lines[0], lines[0]
    assert problem in lines[0], lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    assert table_counts(configs) == before


def test_bad_searches_are_set_aside_with_max_invalid(
    cli: Callable[..., Any], configs: str, tmp_path: Path
) -> None:
    records = [GOOD, _click("ok", "s-ok", 1), BAD[1][0], BAD[4][0]]
    log = _write(tmp_path / "log.jsonl", records)
    result = cli("events", "import", str(log), "--max-invalid", "2", "--json", "--db", configs)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["searches"], summary["interleaved"], summary["rejected"]) == (1, 1, 2)
    rejects = (tmp_path / "log.jsonl.rejects.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["line"] for r in rejects] == [3, 4]
    counts = table_counts(configs)
    assert (counts["online_interleaved"], counts["online_query"]) == (1, 0)


def test_a_team_naming_an_unknown_config_is_counted_and_not_stored(
    cli: Callable[..., Any], configs: str, tmp_path: Path
) -> None:
    log = _write(tmp_path / "log.jsonl", [GOOD, _search("x", "s-x", ["nope", "prod"] * 2)])
    result = cli("events", "import", str(log), "--json", "--db", configs)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["unknown_configs"] == {"nope": 1} and summary["interleaved"] == 1
    assert table_counts(configs)["online_interleaved"] == 1


def test_a_planted_log_is_credited_per_session(store: Store, tmp_path: Path) -> None:
    """Three sessions, worked by hand: s1 has two searches, one won by each side (a tie); s2's
    click is on the candidate's hit (won); s3 has no click (a tie). Balanced: s4's click is on a
    hit the baseline ranks 1st and the candidate 2nd, with k = 2 both are credited (a tie),
    unless the baseline's other hit is clicked too."""
    for name in ("prod", "cand"):
        store.add_config(name, "builtin")
    ranks = {"cand": [1, None, None, 2], "prod": [None, 1, 2, None]}
    records = [
        _search("a", "s1", TEAMS), _click("a", "s1", 4),
        _search("b", "s1", TEAMS), _click("b", "s1", 2),
        _search("c", "s2", TEAMS), _click("c", "s2", 1),
        _search("d", "s3", TEAMS),
        _search("e", "s4", TEAMS, interleaving="balanced", ranks=ranks),
        _click("e", "s4", 2), _click("e", "s4", 3),
    ]  # fmt: skip
    outcome = store.import_events([_write(tmp_path / "log.jsonl", records)])
    assert (outcome.searches, outcome.interleaved, outcome.events) == (5, 5, 5)
    assert outcome.events_without_search == 0 and outcome.unattributed == 0
    [day] = store.score_preference("cand", "prod")
    # s1 tie, s2 won, s3 tie, s4 lost (two baseline hits within its top 2, none of cand's)
    assert (day.sessions, day.searches, day.wins, day.ties, day.losses) == (4, 5, 1, 2, 1)
    assert day.preference == pytest.approx((1 + 2 / 2) / 4 - 0.5)
    assert day.low <= day.preference <= day.high
    [point] = store.history("cand", "online")
    assert point.run_id == day.run_id and point.means == {"online:Preference": day.preference}
    scores = store.evaluation_scores(day.run_id)
    assert dict(zip(scores["query_id"], scores["value"], strict=True)) == {
        "s1": 0.0, "s2": 0.5, "s3": 0.0, "s4": -0.5
    }  # fmt: skip
    assert store.history("prod", "online") == []  # neither config is an A/B arm of it
    again = store.import_events([tmp_path / "log.jsonl"])
    assert (again.searches, again.duplicates) == (0, 10)


def test_a_flat_csv_log_with_a_mapped_teams_column(store: Store, tmp_path: Path) -> None:
    for name in ("prod", "cand"):
        store.add_config(name, "builtin")
    log = tmp_path / "log.csv"
    log.write_text(
        "query_id,session_id,timestamp,hit_ids,team,action,position\n"
        f"q1,s1,{WHEN},d1|d2|d3,cand|prod|cand,,\n"
        f"q1,s1,{WHEN},,,click,2\n"
        f"q2,s2,{WHEN},d1|d2,prod|cand,,\n"
        f"q2,s2,{WHEN},,,click,2\n",
        encoding="utf-8",
    )
    outcome = store.import_events([log], mapping={"teams": "team"})
    assert (outcome.interleaved, outcome.events) == (2, 2)
    [day] = store.score_preference("cand@1", "prod")
    assert (day.wins, day.ties, day.losses) == (1, 0, 1) and day.preference == 0.0


@pytest.mark.parametrize("method", ["team_draft", "balanced"])
def test_the_interleave_apis_log_imports_when_one_ranker_returned_nothing(
    cli: Callable[..., Any], configs: str, tmp_path: Path, method: str
) -> None:
    """The candidate returns nothing for "wing": evalplat.interleave's lists for it are all the
    baseline's, and its records name both rankers, so every search imports and counts (a click
    on the baseline's hit is the baseline's win), none is set aside by --max-invalid."""
    cand = {"wing": [], "flutter": ["d1", "d2", "d3"]}
    prod = {"wing": ["d4", "d5", "d6"], "flutter": ["d2", "d7", "d8"]}
    grades = {"wing": {"d4": 3, "d5": 2}, "flutter": {"d1": 3, "d2": 2}}
    records = list(interleaved_records(cand, prod, grades, names=("cand", "prod"), sessions=80,
                                       seed=3, method=method))  # fmt: skip
    searches = [r for r in records if "action_name" not in r]
    empty = [r for r in searches if r["user_query"] == "wing"]
    assert empty and all(set(r["query_attributes"]["teams"]) == {"prod"} for r in empty)
    log = _write(tmp_path / "log.jsonl", records)
    result = cli("events", "import", str(log), "--max-invalid", "5", "--json", "--db", configs)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["interleaved"], summary["rejected"]) == (len(searches), 0)
    with Store.open(configs) as store:
        [day] = store.score_preference("cand", "prod")
    assert day.searches == len(searches) and day.losses > 0
