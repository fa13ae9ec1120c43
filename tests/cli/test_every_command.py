"""Every command of the app runs in a test, as plain text and as JSON, on a real database.

``DATABASE_COMMANDS`` and ``OFFLINE_COMMANDS`` map each command path to its plain-text form and
its JSON form (``None`` only for a command without ``--json``). The first test walks the Typer
app: a command added to evalplat without an entry here fails the suite, and so does an entry
whose command has gone. Each form asserts on what the output says, not only on the exit code.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from evalplat import __version__
from evalplat.cli import app, main
from evalplat.store import Store

from ..alerts.servers import CaptureServer, capture_server
from .world import (
    HEAD,
    NON_RELEVANT,
    QUERIES,
    RELEVANT,
    Files,
    Form,
    World,
    by,
    db_args,
    holds,
    json_db_args,
    page,
    populate,
    project_file,
    shows,
    site,
    write_files,
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    return write_files(tmp_path_factory.mktemp("files"))


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest,
    files: Files,
    sqlite_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"world-{request.param}")
    created: list[str] = []
    if request.param == "sqlite":
        shutil.copyfile(sqlite_template, folder / "evalplat.db")
        url = f"sqlite:///{folder / 'evalplat.db'}"
        counter = iter(range(1000))

        def fresh_url() -> str:
            return f"sqlite:///{folder / f'fresh-{next(counter)}.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        url = server.create_database()
        created.append(url)
        with Store.init(url):
            pass

        def fresh_url() -> str:
            created.append(server.create_database())
            return created[-1]

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.delenv("EVALPLAT_DATABASE_URL", raising=False)
    runs, alerts = populate(url, files)
    yield World(
        url=url,
        files=files,
        folder=folder,
        baseline=runs[0],
        candidate=runs[1],
        rescorable=runs[2],
        alerts=alerts,
        fresh_url=fresh_url,
        project=project_file(folder, files),
    )
    monkeypatch.undo()
    for database in created:
        request.getfixturevalue("postgres_server").drop_database(database)


def _lines(w: World, result: Any) -> None:
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    steps = [e["step"] for e in entries]
    assert "testset" in steps and "config" in steps, steps
    assert {"step": "testset", "testset": "tiny", "dry_run": True, "new_version": False,
            "version": 1} in entries  # fmt: skip
    assert entries[-1] == {"step": "run", "config": "engine", "testset": "tiny", "dry_run": True}


def _unjudged(w: Any, result: Any) -> None:
    lines = result.stdout.splitlines()
    assert lines[0] == "query_id,query,doc_id,rank,title,text"
    assert sorted(line.split(",")[2:4] for line in lines[1:]) == [
        [f"q{n:02d}-x", "5"] for n in range(1, QUERIES + 1)
    ]


def _nightly_text(w: Any, result: Any) -> None:
    lines = result.stdout.splitlines()
    assert all(line.startswith("nightly ") for line in lines), lines
    assert (
        "nightly testset        testset=tiny dry_run=True new_version=False version=1" in lines
    ), lines


def _qrels_out(w: Any, result: Any) -> None:
    lines = result.stdout.splitlines()
    assert len(lines) == QUERIES * (RELEVANT + NON_RELEVANT)
    assert lines[0].split() == ["q01", "0", "q01-d0", "2"]


def _trec_run(w: Any, result: Any) -> None:
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows and all(len(r) == 6 and r[1] == "Q0" and r[5] == "prod@1" for r in rows), rows
    assert {r[0] for r in rows} == {f"q{n:02d}" for n in range(1, QUERIES + 1)}
    for query in {r[0] for r in rows}:
        ranks = [int(r[3]) for r in rows if r[0] == query]
        assert ranks == list(range(1, len(ranks) + 1)), (query, ranks)


def _events_log(w: World, tag: str) -> str:
    """A UBI log of config ``web`` (added here): 4 sessions of one search, clicks on two."""
    with Store.open(w.url) as store:
        store.add_config("web", "builtin")
    path = w.folder / f"events-{tag}.jsonl"
    lines = []
    for n in range(4):
        search = {
            "query_id": f"{tag}-q{n}",
            "session_id": f"{tag}-s{n}",
            "user_query": "wing",
            "timestamp": f"2026-03-0{n % 2 + 1}T10:00:0{n}Z",
            "query_response_hit_ids": ["d1", "d2"],
            "query_attributes": {"config": "web"},
        }
        lines.append(json.dumps(search))
        if n < 2:
            lines.append(
                json.dumps(
                    {
                        "action_name": "click",
                        "query_id": f"{tag}-q{n}",
                        "session_id": f"{tag}-s{n}",
                        "timestamp": "2026-03-01T11:00:00Z",
                        "event_attributes": {"position": {"ordinal": 2}},
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _events_parquet(w: World, tag: str) -> str:
    """A flat Parquet log of config ``web`` (added here): 3 searches, a click on one; the
    session column is named ``sid``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with Store.open(w.url) as store:
        store.add_config("web", "builtin")
    when = pa.array([datetime(2026, 3, 1, 10, n, tzinfo=UTC) for n in range(4)],
                    pa.timestamp("us", tz="UTC"))  # fmt: skip
    table = pa.table({
        "query_id": [f"{tag}-q0", f"{tag}-q1", f"{tag}-q2", f"{tag}-q0"],
        "sid": ["s0", "s1", "s2", "s0"], "timestamp": when,
        "config": ["web", "web", "web", None], "hit_ids": [["d1", "d2"], ["d1"], [], None],
        "action": [None, None, None, "click"], "position": [None, None, None, 1],
    })  # fmt: skip
    path = w.folder / f"events-{tag}.parquet"
    pq.write_table(table, path)
    return str(path)


def _scored(w: World, *args: str) -> list[str]:
    with Store.open(w.url) as store:
        store.import_events([Path(_events_log(w, "score"))])
    return [*args, "--db", w.url]


def _online_runs(w: World, *args: str) -> list[str]:
    """``_scored``, and the log's days scored as online runs of ``web``."""
    command = _scored(w, *args)
    with Store.open(w.url) as store:
        store.score_online(["web"], metrics=["online:CTR"])
    return command


# (plain-text form, JSON form) of every command that works on a database.
DATABASE_COMMANDS: dict[tuple[str, ...], tuple[Form, Form | None]] = {
    ("init",): (
        Form(lambda w: ["init", "--db", w.fresh_url()], shows("created, schema at {head}")),
        Form(
            lambda w: ["init", "--db", w.fresh_url(), "--json"],
            holds(lambda d, w: d["previous"] is None and d["current"] == HEAD),
        ),
    ),
    ("db", "upgrade"): (
        Form(db_args("db", "upgrade"), shows("schema already at {head}, nothing to do")),
        Form(
            json_db_args("db", "upgrade"), holds(lambda d, w: d["previous"] == d["current"] == HEAD)
        ),
    ),
    ("db", "current"): (
        Form(db_args("db", "current"), shows(": {head} (head {head}, up to date)")),
        Form(
            json_db_args("db", "current"),
            holds(lambda d, w: (d["current"], d["head"], d["up_to_date"]) == (HEAD, HEAD, True)),
        ),
    ),
    ("db", "check"): (
        Form(db_args("db", "check"), shows("schema is current and matches evalplat's models")),
        Form(json_db_args("db", "check"), holds(lambda d, w: d["differences"] == [])),
    ),
    ("testset", "from-events"): (
        Form(
            lambda w: _scored(
                w,
                "testset",
                "from-events",
                "clicks-plain",
                "--model",
                "ctr",
                "--min-impressions",
                "1",
            ),
            shows("imported clicks-plain@1: 1 query, 2 judgments (clicks:ctr)"),
        ),
        Form(
            lambda w: _scored(
                w,
                "testset",
                "from-events",
                "clicks-json",
                "--model",
                "coec",
                "--min-impressions",
                "2",
                "--json",
            ),
            holds(
                lambda d, w: (
                    d["created"]
                    and (d["source"]["kind"], d["source"]["model"]) == ("events", "coec")
                    and d["judgments"] == 1  # position 1 is never clicked: no expected clicks
                )
            ),
        ),
    ),
    ("testset", "import"): (
        Form(
            db_args("testset", "import", "more-plain", "--qrels", "{w.files.qrels}"),
            shows("imported more-plain@1: 30 queries, 300 judgments, 0 documents"),
        ),
        Form(
            json_db_args(
                "testset",
                "import",
                "more-json",
                "--qrels",
                "{w.files.qrels}",
                "--queries",
                "{w.files.queries}",
            ),
            holds(
                lambda d, w: (
                    (d["name"], d["version"], d["created"], d["queries"])
                    == ("more-json", 1, True, 30)
                )
            ),
        ),
    ),
    ("testset", "list"): (
        Form(db_args("testset", "list"), shows("tiny", " 30 ", " 300 ")),
        Form(
            json_db_args("testset", "list"),
            holds(
                lambda d, w: (
                    (by(d, "name", "tiny")["judgments"], by(d, "name", "tiny")["documents"])
                    == (300, 300)
                )
            ),
        ),
    ),
    ("testset", "show"): (
        Form(
            db_args("testset", "show", "tiny"),
            shows("tiny@1", "queries    30", "judgments  300", "documents  300", "versions   1"),
        ),
        Form(
            json_db_args("testset", "show", "tiny@1"),
            holds(lambda d, w: (d["queries"], d["versions"]) == (30, [1])),
        ),
    ),
    ("testset", "export"): (
        Form(db_args("testset", "export", "tiny"), _qrels_out),
        Form(
            json_db_args("testset", "export", "tiny", "--out", "{w.folder}/export"),
            holds(
                lambda d, w: (
                    sorted(d["files"]) == ["docs", "qrels", "queries"]
                    and Path(d["files"]["queries"]).read_text().count("\n") == QUERIES + 1
                )
            ),
        ),
    ),
    ("config", "add"): (
        Form(
            db_args("config", "add", "added-plain", "--searcher", "builtin", "-p", "operator=and"),
            shows("added added-plain@1 (builtin, "),
        ),
        Form(
            json_db_args("config", "add", "added-json", "-s", "builtin", "--label", "abc"),
            holds(lambda d, w: (d["version"], d["created"], d["label"]) == (1, True, "abc")),
        ),
    ),
    ("config", "list"): (
        Form(db_args("config", "list"), shows("prod ", "engine ", "builtin", " 1 ")),
        Form(
            json_db_args("config", "list"),
            holds(
                lambda d, w: (
                    (by(d, "name", "engine")["searcher"], by(d, "name", "prod")["version"])
                    == ("builtin", 1)
                )
            ),
        ),
    ),
    ("config", "show"): (
        Form(db_args("config", "show", "engine"), shows("engine@1  searcher=builtin  label=-")),
        Form(
            json_db_args("config", "show", "engine@1"),
            holds(
                lambda d, w: (d["name"], d["searcher"], d["params"]) == ("engine", "builtin", {})
            ),
        ),
    ),
    ("run",): (
        Form(
            db_args("run", "engine", "--testset", "tiny", "-m", "nDCG@10"),
            shows("complete: engine@1 on tiny@1, 30 queries", "  nDCG@10"),
        ),
        Form(
            json_db_args("run", "engine", "-t", "tiny", "-m", "P@5"),
            # the builtin engine finds the four "lift drag" documents of the topic first
            holds(
                lambda d, w: d["status"] == "complete" and d["means"]["P@5"] == pytest.approx(0.8)
            ),
        ),
    ),
    ("import-run",): (
        Form(
            db_args("import-run", "{w.files.bad}", "--config", "imported-plain", "-t", "tiny"),
            shows("complete: imported-plain@1 on tiny@1, 30 queries", "  P@10 "),
        ),
        Form(
            json_db_args(
                "import-run",
                "{w.files.good}",
                "--config",
                "imported-json",
                "-t",
                "tiny",
                "-m",
                "P@5",
                "--label",
                "sha1",
            ),
            holds(lambda d, w: d["means"]["P@5"] == pytest.approx(0.8)),
        ),
    ),
    ("rescore",): (
        Form(db_args("rescore", "{w.rescorable}", "-m", "P@5"), shows("  P@5            0.8000")),
        Form(
            json_db_args("rescore", "{w.rescorable}", "-m", "P@10"),
            holds(
                lambda d, w: d["id"] == w.rescorable and d["means"]["P@10"] == pytest.approx(0.4)
            ),
        ),
    ),
    ("compare",): (
        Form(
            db_args("compare", "{w.baseline}", "{w.candidate}"),
            shows(
                "scored on tiny@1, people's grades, 30 queries",
                "nDCG@10 regressed; worst queries: q",
                "verdict: regression (comparison ",
            ),
        ),
        Form(
            json_db_args(
                "compare", "{w.baseline}", "{w.candidate}", "-m", "AP", "--max-drop", "0.01"
            ),
            holds(
                lambda d, w: (
                    d["verdict"] == "regression" and [m["metric"] for m in d["metrics"]] == ["AP"]
                )
            ),
        ),
    ),
    ("unjudged",): (
        Form(db_args("unjudged", "{w.baseline}", "--k", "5"), _unjudged),
        Form(
            json_db_args("unjudged", "{w.candidate}", "--k", "6"),
            holds(lambda d, w: d == []),  # the unjudged document is at rank 7 in the bad run
        ),
    ),
    ("queries",): (
        Form(
            db_args("queries", "prod", "--testset", "tiny", "--metric", "P@10"),
            shows("prod on tiny: P@10 over ", "fix these", "judge these"),
        ),
        Form(
            json_db_args("queries", "prod", "-t", "tiny", "--since", "52w"),
            holds(
                lambda d, w: (
                    d["config"] == "prod"
                    and d["testset"] == "tiny"
                    and len(d["queries"]) == QUERIES
                    and {w.baseline, w.candidate} <= set(d["runs"])
                )
            ),
        ),
    ),
    ("leaderboard",): (
        Form(
            db_args("leaderboard", "{w.baseline}", "{w.candidate}", "-m", "nDCG@10"),
            shows("nDCG@10 (higher is better)", "2 runs on tiny@1, 30 queries", "Tukey HSD"),
        ),
        Form(
            json_db_args("leaderboard", "{w.candidate}", "{w.baseline}", "-m", "AP"),
            holds(
                lambda d, w: (
                    [r["id"] for r in d["runs"]] == [w.candidate, w.baseline]
                    and d["metrics"][0]["metric"] == "AP"
                    and d["metrics"][0]["runs"][0]["run_id"] == w.baseline
                )
            ),
        ),
    ),
    ("judge", "grade"): (
        Form(
            db_args(
                "judge",
                "offline",
                "-t",
                "tiny",
                "--unjudged-of",
                "{w.baseline}",
                "--k",
                "5",
                "--dry-run",
                "-p",
                "{w.project}",
            ),
            # the unjudged documents of the world have no stored text: nothing to ask
            shows("dry run: 30 pairs, 0 already answered, 0 to ask, 30 without text; about 0"),
        ),
        Form(
            json_db_args(
                "judge",
                "grade",
                "offline",
                "-t",
                "tiny",
                "--unjudged-of",
                "{w.baseline}",
                "--dry-run",
                "-p",
                "{w.project}",
            ),
            holds(lambda d, w: (d["pairs"], d["no_text"], d["dry_run"]) == (30, 30, True)),
        ),
    ),
    ("judge", "calibrate"): (
        Form(
            db_args("judge", "calibrate", "offline", "-t", "tiny", "-p", "{w.project}"),
            shows(
                "refused for gating: no pair was graded by both the judge and a person",
                "stopped early: the budget of 0 requests is spent",
            ),
        ),
        Form(
            json_db_args("judge", "calibrate", "offline", "-t", "tiny", "-p", "{w.project}"),
            holds(lambda d, w: (d["gating"], d["requests"], d["sources"]) == (False, 0, [])),
        ),
    ),
    ("judge", "export"): (
        Form(
            db_args("judge", "export", "offline", "-t", "tiny"),
            # the world's test set holds no model grades: the header alone
            shows("query_id,query,doc_id,grade,source,judge_grade,rationale"),
        ),
        Form(
            json_db_args("judge", "export", "offline", "-t", "tiny", "--source", "second"),
            holds(lambda d, w: d == []),
        ),
    ),
    ("history",): (
        Form(
            db_args("history", "prod", "-m", "P@10"),
            shows("{w.baseline} *", "0.4000", "* baseline"),
        ),
        Form(
            json_db_args("history", "prod", "-t", "tiny"),
            holds(
                lambda d, w: (
                    {p["run_id"] for p in d} >= {w.baseline, w.candidate}
                    and by(d, "run_id", w.baseline)["is_baseline"]
                )
            ),
        ),
    ),
    ("nightly",): (
        Form(db_args("nightly", "--dry-run", "--project", "{w.project}"), _nightly_text),
        Form(json_db_args("nightly", "--dry-run", "-p", "{w.project}"), _lines),
    ),
    ("runs", "list"): (
        Form(db_args("runs", "list", "prod"), shows("complete", "prod@1", "tiny@1", "30/30")),
        Form(
            json_db_args("runs", "list"),
            holds(lambda d, w: {w.baseline, w.candidate} <= {r["id"] for r in d}),
        ),
    ),
    ("runs", "export"): (Form(db_args("runs", "export", "{w.baseline}"), _trec_run), None),
    ("alerts", "deliver"): (
        Form(
            db_args("alerts", "deliver", "--project", "{w.project}"),
            shows("nothing to deliver: the outbox is empty"),
        ),
        Form(
            json_db_args("alerts", "deliver", "--project", "{w.project}"),
            holds(lambda d, w: d == []),
        ),
    ),
    ("runs", "show"): (
        Form(
            db_args("runs", "show", "{w.candidate}"),
            shows("status             complete", "config             prod", "30/30 done, 0 failed"),
        ),
        Form(
            json_db_args("runs", "show", "{w.baseline}"),
            holds(
                lambda d, w: d["failed_queries"] == [] and d["means"]["P@10"] == pytest.approx(0.4)
            ),
        ),
    ),
    ("baseline", "set"): (
        Form(
            db_args("baseline", "set", "prod", "{w.baseline}"),
            shows("baseline of prod on tiny: run {w.baseline} (pinned)"),
        ),
        Form(
            json_db_args("baseline", "set", "old", "{w.rescorable}"),
            holds(lambda d, w: (d["run_id"], d["pinned"]) == (w.rescorable, True)),
        ),
    ),
    ("baseline", "show"): (
        Form(db_args("baseline", "show"), shows("prod\ttiny\trun {w.baseline}\t")),
        Form(
            json_db_args("baseline", "show", "prod"),
            holds(lambda d, w: [(i["config"], i["run_id"]) for i in d] == [("prod", w.baseline)]),
        ),
    ),
    ("events", "import"): (
        Form(
            lambda w: ["events", "import", _events_log(w, "plain"), "--db", w.url],
            shows("imported 4 searches, 2 events (0 duplicates skipped)"),
        ),
        Form(
            lambda w: ["events", "import", _events_log(w, "json"), "--db", w.url, "--json"],
            holds(lambda d, w: (d["searches"], d["events"], d["unknown_configs"]) == (4, 2, {})),
        ),
    ),
    ("events", "attach"): (
        Form(
            lambda w: [
                *("events", "attach", _events_parquet(w, "a"), "--map", "session_id=sid"),
                *("--db", w.url),
            ],
            shows("events-a.parquet: 3 searches, 1 event"),
        ),
        Form(
            lambda w: [
                *("events", "attach", _events_parquet(w, "b"), "--map", "session_id=sid"),
                *("--db", w.url, "--json"),
            ],
            holds(
                lambda d, w: (
                    (d[0]["searches"], d[0]["events"], list(d[0]["configs"])) == (3, 1, ["web"])
                )
            ),
        ),
    ),
    ("events", "score"): (
        Form(
            lambda w: _scored(w, "events", "score", "web", "--metric", "online:CTR"),
            shows("web@1 2026-03-01 sessions=", "online:CTR="),
        ),
        Form(
            lambda w: _scored(w, "events", "score", "web", "--window", "all", "--json"),
            holds(
                lambda d, w: (
                    d[0]["trigger"] == "online"
                    and d[0]["test_set"] == "online"
                    and 0.0 < d[0]["means"]["online:CTR"] < 1.0
                )
            ),
        ),
    ),
    ("online", "agreement"): (
        Form(
            lambda w: _scored(w, "online", "agreement", "-t", "tiny", "-k", "online:CTR"),
            shows("offline on tiny against online, 0 versions: none", "too few versions (0)"),
        ),
        Form(
            lambda w: _scored(
                w,
                "online",
                "agreement",
                "-t",
                "tiny",
                "-m",
                "AP",
                "-k",
                "online:CTR",
                "--report",
                f"{w.folder}/online.html",
                "--json",
            ),
            holds(
                lambda d, w: (
                    d["test_set"] == "tiny"
                    and {r["metric"] for r in d["agreement"]} == {"AP"}
                    and {r["status"] for r in d["agreement"]} == {"too few versions"}
                    and "Offline vs online" in Path(d["report"]).read_text(encoding="utf-8")
                )
            ),
        ),
    ),
    ("online", "compare"): (
        Form(
            lambda w: _online_runs(w, "online", "compare", "web", "web@1", "-m", "online:CTR"),
            shows("web against web@1 on 2026-03-02", "online:CTR", "verdict: "),
        ),
        Form(
            lambda w: _scored(
                w, "online", "compare", "web", "web", "--day", "2026-03-01", "--json"
            ),
            # a handful of sessions: shown, never tested (min_sessions)
            holds(
                lambda d, w: (
                    d["day"] == "2026-03-01"
                    and (d["metrics"][0]["metric"], d["metrics"][0]["test"])
                    == ("online:CTR", "insufficient")
                )
            ),
        ),
    ),
    # the interleaved analysis itself: tests/events/test_interleaved_import.py and
    # tests/nightly/test_night_interleaved.py; here, a log without interleaved searches
    ("online", "preference"): (
        Form(
            lambda w: _scored(w, "online", "preference", "web", "prod"),
            shows("web against prod: no interleaved searches"),
        ),
        Form(
            lambda w: _scored(w, "online", "preference", "web", "prod", "--json"),
            holds(lambda d, w: (d["candidate"], d["baseline"], d["days"]) == ("web", "prod", [])),
        ),
    ),
    ("alerts", "list"): (
        Form(db_args("alerts", "list", "--config", "prod"), shows("prod", "AP", "0.7500 → 0.2500")),
        Form(
            json_db_args("alerts", "list"),
            holds(lambda d, w: by(d, "metric", "AP")["id"] == w.alerts["AP"]),
        ),
    ),
    ("alerts", "ack"): (
        Form(
            db_args("alerts", "ack", "{w.alerts[P@5]}"),
            shows("alert {w.alerts[P@5]} (P@5 of prod on tiny): acknowledged"),
        ),
        Form(
            json_db_args("alerts", "ack", "{w.alerts[nDCG@10]}"),
            holds(lambda d, w: d["state"] == "acknowledged"),
        ),
    ),
    ("alerts", "resolve"): (
        Form(
            db_args(
                "alerts", "resolve", "{w.alerts[AP]}", "--note", "fixed", "--project", "{w.project}"
            ),
            shows("alert {w.alerts[AP]} (AP of prod on tiny): resolved; the project file names"),
        ),
        Form(
            json_db_args(
                "alerts",
                "resolve",
                "{w.alerts[nDCG@10]}",
                "--note",
                "ok",
                "--project",
                "{w.project}",
            ),
            holds(lambda d, w: (d["state"], d["note"]) == ("resolved", "ok")),
        ),
    ),
    ("report", "run"): (
        Form(
            db_args("report", "run", "{w.baseline}", "--out", "{w.folder}/run-plain.html"), page()
        ),
        Form(json_db_args("report", "run", "prod@baseline", "--out", "{w.folder}/pages"), page()),
    ),
    ("report", "compare"): (
        Form(
            db_args("report", "compare", "{w.baseline}", "{w.candidate}", "--out", "{w.folder}/c"),
            page(),
        ),
        Form(
            json_db_args(
                "report",
                "compare",
                "prod@baseline",
                "{w.candidate}",
                "--out",
                "{w.folder}/cmp.html",
            ),
            page(),
        ),
    ),
    ("report", "site"): (
        Form(db_args("report", "site", "--out", "{w.folder}/site-plain"), site),
        Form(json_db_args("report", "site", "--out", "{w.folder}/site-json"), site),
    ),
}


def _channels(data: list[dict[str, Any]]) -> bool:
    webhook = by(data, "type", "webhook")
    return {"webhook", "slack", "email"} <= {c["type"] for c in data} and any(
        p["name"] == "url" and p["required"] for p in webhook["params"]
    )


# (plain-text form, JSON form) of every command that needs no database; the world here is
# ``Offline`` (the files and a capture server).
OFFLINE_COMMANDS: dict[tuple[str, ...], tuple[Form, Form | None]] = {
    ("evaluate",): (
        Form(
            lambda o: [
                "evaluate",
                "--qrels",
                str(o.files.qrels),
                "--run",
                str(o.files.good),
                "-m",
                "P@5",
                "-m",
                "num_q",
            ],
            shows("P@5         0.8000\nNumQ            30\n"),
        ),
        Form(  # evaluate's JSON form is --format json
            lambda o: [
                "evaluate",
                "--qrels",
                str(o.files.qrels),
                "--run",
                str(o.files.bad),
                "--format",
                "json",
                "-m",
                "P@5",
            ],
            holds(lambda d, o: d["means"] == {"P@5": 0.0} and d["queries"] == QUERIES),
        ),
    ),
    ("metrics", "list"): (
        Form(
            lambda o: ["metrics", "list"],
            shows(
                "nDCG(gain=,gains=,judged_only=)[@k]  ",
                "  Normalised discounted",
                "online:CTR[@k]  ",
                "(alias MAP)",
                "Default set: nDCG@10, P@10",
            ),
        ),
        Form(
            lambda o: ["metrics", "list", "--json"],
            holds(lambda d, o: {"nDCG", "P", "AP", "RR"} <= {m["name"] for m in d}),
        ),
    ),
    ("config", "kinds"): (
        Form(lambda o: ["config", "kinds"], shows("builtin: SQLite FTS5", "  tokenizer [str]")),
        Form(
            lambda o: ["config", "kinds", "--json"],
            holds(
                lambda d, o: (
                    {"builtin", "http", "sql", "python", "command"} <= {k["name"] for k in d}
                )
            ),
        ),
    ),
    ("alerts", "channels"): (
        Form(lambda o: ["alerts", "channels"], shows("webhook: ", "  url (required): ")),
        Form(lambda o: ["alerts", "channels", "--json"], holds(lambda d, o: _channels(d))),
    ),
    ("alerts", "test"): (
        Form(
            lambda o: ["alerts", "test", "slack", "--url", o.server.url + "/ok"],
            shows("sent a test alert to slack (1 attempt)"),
        ),
        Form(
            lambda o: ["alerts", "test", "teams", "--url", o.server.url + "/teams", "--json"],
            holds(
                lambda d, o: (
                    (d["status"], d["attempts"], d["error"]) == ("sent", 1, None)
                    and len(o.server.received("/teams")) == 1
                )
            ),
        ),
    ),
}

# Commands run elsewhere in both forms, because they are slow: path -> the test that does it.
ELSEWHERE: dict[tuple[str, ...], str] = {
    ("demo",): "tests/test_demo.py::test_demo_builds_a_project_reports_regressions_and_exits_0",
    ("sweep",): "tests/sweep/test_sweep_cli.py::test_the_text_output_ends_with_the_compare_command",
    # a rating task lives through its commands in order (a task, invites, the server, close)
    **{
        ("rate", verb): "tests/rating/test_cli.py::test_a_task_lives_through_every_rate_command"
        for verb in ("task", "invite", "revoke", "status", "close")
    },
    ("rate", "serve"): "tests/rating/test_cli.py::test_rate_serve_answers_on_the_given_port",
    # a replay needs stored nights: the table and --json over ten of them
    ("gates", "backtest"): "tests/nightly/test_backtest.py::test_backtest_of_a_stored_history",
}


@dataclass
class Offline:
    files: Files
    server: CaptureServer


@pytest.fixture(scope="module")
def offline(files: Files) -> Iterator[Offline]:
    with capture_server() as server:
        yield Offline(files, server)


def _commands() -> dict[tuple[str, ...], Any]:
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            found[path] = command
        for name, sub in (subcommands or {}).items():
            walk(sub, (*path, name))

    walk(get_command(app), ())
    return found


def _takes_json(command: Any) -> bool:
    """``--json``, or a ``--format`` that offers json (evaluate's; runs export writes only trec)."""
    for param in command.params:
        opts = getattr(param, "opts", [])
        if "--json" in opts or (
            "--format" in opts and "json" in (getattr(param, "help", "") or "")
        ):
            return True
    return False


def test_every_command_has_a_plain_and_a_json_test() -> None:
    registered = {**DATABASE_COMMANDS, **OFFLINE_COMMANDS}
    commands = _commands()
    assert sorted(commands) == sorted([*registered, *ELSEWHERE])
    for path, (_plain, json_form) in registered.items():
        assert (json_form is not None) == _takes_json(commands[path]), path


def test_the_slow_commands_are_tested_where_it_says() -> None:
    root = Path(__file__).resolve().parents[2]
    for target in ELSEWHERE.values():
        file, name = target.split("::")
        assert f"def {name}(" in (root / file).read_text(encoding="utf-8"), target


def _forms(
    registry: dict[tuple[str, ...], tuple[Form, Form | None]],
) -> list[Any]:
    cases = []
    for path, (plain, as_json) in registry.items():
        cases.append(pytest.param(plain, id=" ".join(path) + " text"))
        if as_json is not None:
            cases.append(pytest.param(as_json, id=" ".join(path) + " json"))
    return cases


def _run(form: Form, context: Any) -> None:
    args = form.args(context)
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == form.exit_code, (args, result.stdout, result.stderr)
    form.check(context, result)


@pytest.mark.parametrize("form", _forms(DATABASE_COMMANDS))
def test_command_on_a_database(form: Form, world: World) -> None:
    _run(form, world)


@pytest.mark.parametrize("form", _forms(OFFLINE_COMMANDS))
def test_command_without_a_database(form: Form, offline: Offline) -> None:
    _run(form, offline)


def test_version_prints_the_package_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"{__version__}\n")
    monkeypatch.setattr("sys.argv", ["evalplat", "--version"])  # the console script's way in
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 0
    assert capsys.readouterr().out == f"{__version__}\n"
