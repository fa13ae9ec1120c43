"""Click judgments: grades estimated from interaction logs by CTR, COEC or purchases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import func, select

from evalplat.db.models import Judgment, TestSetVersion
from evalplat.errors import InputError
from evalplat.events.click_models import click_judgments, normalise, query_id
from evalplat.events.synthetic import Arm, write_ubi_log
from evalplat.store import Store

# The worked example of docs/online.md: one query, four searches, three documents.
#   search  shown          click
#   s1      d1 d2 d3       d2 (position 2)
#   s2      d1 d2 d3       d1 (position 1)
#   s3      d2 d1 d3       d2 (position 1)
#   s4      d2 d1 d3       none
SHOWN = {"s1": ["d1", "d2", "d3"], "s2": ["d1", "d2", "d3"], "s3": ["d2", "d1", "d3"],
         "s4": ["d2", "d1", "d3"]}  # fmt: skip
CLICKS = [("s1", "d2", 2), ("s2", "d1", 1), ("s3", "d2", 1)]


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    searches = pd.DataFrame(
        [(s, "Wing  Flutter", hits) for s, hits in SHOWN.items()],
        columns=["query_id", "user_query", "hit_ids"],
    )
    events = pd.DataFrame(
        [(s, "click", d, float(p)) for s, d, p in CLICKS],
        columns=["query_id", "action", "object_id", "position"],
    )
    return searches, events


def _grades(estimated: Any) -> dict[str, tuple[float, int]]:
    rows = estimated.judgments[["doc_id", "rate", "grade"]].itertuples(index=False)
    return {d: (rate, grade) for d, rate, grade in rows}


def test_coec_judgments_reproduce_a_hand_computed_example() -> None:
    estimated = click_judgments(*_frames(), model="coec", min_impressions=4)
    # CTR by position over the log: 1 -> 2/4, 2 -> 1/4, 3 -> 0/4
    assert estimated.priors == {1: 0.5, 2: 0.25, 3: 0.0}
    grades = _grades(estimated)
    # d1: 1 click / (0.5 + 0.5 + 0.25 + 0.25) = 2/3; d2: 2 / 1.5 = 4/3; d3 is only ever shown
    # where nobody clicks (no expected clicks): no grade. Thresholds 0.5, 1, 2.
    assert grades == {"d1": (pytest.approx(2 / 3), 1), "d2": (pytest.approx(4 / 3), 2)}
    assert set(estimated.judgments["source"]) == {"clicks:coec"}
    assert list(estimated.queries["text"]) == ["wing flutter"]
    assert list(estimated.judgments["query_id"].unique()) == [query_id("WING flutter ")]


def test_ctr_does_not_correct_for_position() -> None:
    grades = _grades(click_judgments(*_frames(), model="ctr", min_impressions=1))
    # 1/4, 2/4, 0/4 with thresholds 0.05, 0.15, 0.3
    assert grades == {"d1": (0.25, 2), "d2": (0.5, 3), "d3": (0.0, 0)}
    custom = click_judgments(*_frames(), model="ctr", min_impressions=1, thresholds=[0.3])
    assert _grades(custom) == {"d1": (0.25, 0), "d2": (0.5, 1), "d3": (0.0, 0)}


def test_a_pair_below_min_impressions_is_left_out() -> None:
    searches, events = _frames()
    searches.loc[len(searches)] = ["s5", "wing flutter", ["d4"]]
    grades = _grades(click_judgments(searches, events, model="ctr", min_impressions=2))
    assert set(grades) == {"d1", "d2", "d3"}
    with pytest.raises(InputError, match="no query-document pair was shown 5 times"):
        click_judgments(searches, events, model="ctr", min_impressions=5)


def test_query_ids_are_stable_hashes_of_the_normalised_text() -> None:
    assert normalise(" \uff37ing\tFLUTTER ") == "wing flutter"  # a full-width W
    assert query_id("Wing Flutter") == query_id("wing  flutter")
    assert query_id("wing flutter") != query_id("wing")
    assert query_id("wing flutter").startswith("q") and len(query_id("x")) == 13


def _write_example(path: Path) -> Path:
    lines = []
    for n, (search, hits) in enumerate(SHOWN.items()):
        lines.append({"query_id": search, "session_id": f"u{n}", "user_query": "wing flutter",
                      "timestamp": f"2026-03-01T10:0{n}:00Z", "query_response_hit_ids": hits,
                      "query_attributes": {"config": "web"}})  # fmt: skip
    for search, doc, position in CLICKS:
        lines.append({"action_name": "click", "query_id": search, "session_id": "u",
                      "timestamp": "2026-03-01T10:30:00Z",
                      "event_attributes": {"object": {"object_id": doc},
                                           "position": {"ordinal": position}}})  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _versions(store: Store) -> int:
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(TestSetVersion)) or 0


def test_from_events_stores_a_version_with_its_provenance(
    store: Store, db_url: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    store.add_config("web", "builtin")
    store.import_events([_write_example(tmp_path / "log.jsonl")])
    args = ["testset", "from-events", "clicks", "--model", "coec", "--min-impressions", "4"]
    result = cli(*args, "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "imported clicks@1: 1 query, 2 judgments (clicks:coec)"
    [version] = store.test_set_versions("clicks")
    source = version.source or {}
    assert (source["kind"], source["model"], source["min_impressions"]) == ("events", "coec", 4)
    assert source["thresholds"] == [0.5, 1.0, 2.0] and source["impressions"] == 12
    assert source["position_ctr"] == {"1": 0.5, "2": 0.25, "3": 0.0}
    content = store.load_test_set("clicks")
    assert sorted(map(tuple, content.judgments[["doc_id", "grade", "source"]].to_numpy())) == [
        ("d1", 1, "clicks:coec"), ("d2", 2, "clicks:coec")
    ]  # fmt: skip
    again = cli(*args, "--db", db_url)
    assert again.exit_code == 0 and "unchanged: identical to clicks@1" in again.stderr
    rated = cli("testset", "from-events", "clicks", "--model", "ctr", "--min-impressions", "1",
                "--thresholds", "0.3", "--config", "web@1", "--since", "2026-03-01T00:00:00Z",
                "--db", db_url)  # fmt: skip
    assert rated.exit_code == 0 and "clicks@2: 1 query, 3 judgments" in rated.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "dbn", "--min-impressions", "1"], "unknown click model 'dbn'"),
        (["--model", "ctr", "--min-impressions", "0"], "--min-impressions must be 1 or more"),
        (["--model", "ctr", "--thresholds", "1,0.5"], "strictly ascending"),
        (["--model", "ctr", "--thresholds", "0.1,1_0"], "expected numbers such as 0.5,1,2"),
        (["--model", "ctr", "--thresholds", "0.1,nan"], "expected numbers such as 0.5,1,2"),
        (["--model", "ctr", "--since", "2026-03-01T00:00"], "has no time zone"),
        (["--model", "ctr", "--config", "ghost"], "ghost"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    store: Store, db_url: str, tmp_path: Path, cli: Callable[..., Any], args: list[str],
    message: str,
) -> None:  # fmt: skip
    store.add_config("web", "builtin")
    store.import_events([_write_example(tmp_path / "log.jsonl")])
    result = cli("testset", "from-events", "clicks", *args, "--db", db_url)
    assert result.exit_code == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert _versions(store) == 0


def test_no_events_exits_2(store: Store, db_url: str, cli: Callable[..., Any]) -> None:
    result = cli("testset", "from-events", "clicks", "--model", "coec", "--db", db_url)
    assert result.exit_code == 2 and "no imported searches" in result.stderr
    assert _versions(store) == 0


def test_the_online_test_set_name_is_reserved(
    store: Store, db_url: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n", encoding="utf-8")
    result = cli("testset", "import", "online", "--qrels", str(qrels), "--db", db_url)
    assert result.exit_code == 2 and "'online' is reserved" in result.stderr
    result = cli("testset", "from-events", "online", "--model", "ctr", "--db", db_url)
    assert result.exit_code == 2 and "'online' is reserved" in result.stderr
    with pytest.raises(InputError, match="reserved"):
        store.test_set_from_events("online", model="ctr", min_impressions=1)
    assert _versions(store) == 0
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(Judgment)) == 0


def test_coec_recovers_the_grades_of_a_position_biased_log(store: Store, tmp_path: Path) -> None:
    grades = {"wing flutter": {"d1": 0, "d2": 3, "d3": 1, "d4": 2}}
    # two arms show the documents in opposite orders, so position and document can be told
    # apart; raw CTR still favours whatever is on top, COEC divides that out
    store.add_config("a", "builtin")
    store.add_config("b", "builtin")
    arms = [Arm("a", {"wing flutter": ["d1", "d2", "d3", "d4"]}),
            Arm("b", {"wing flutter": ["d4", "d3", "d2", "d1"]})]  # fmt: skip
    log = write_ubi_log(tmp_path / "log.jsonl", arms, grades, sessions=3000, seed=4)
    store.import_events([log.path])
    store.test_set_from_events("coec", model="coec", min_impressions=100)
    judged = store.load_test_set("coec").judgments.set_index("doc_id")["grade"]
    # the relevant documents (grades 2, 3) are graded above the others (0, 1), whatever their
    # place (COEC assumes examination depends on position alone, so a cascade's order within
    # the relevant pair is not recovered)
    assert min(judged["d2"], judged["d4"]) > max(judged["d1"], judged["d3"])
