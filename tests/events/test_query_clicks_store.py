"""Per-query click-through joined to a test set's queries, and the "Offline vs online" page data,
through the store on SQLite and PostgreSQL: a hand-written log whose counts are known."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.reports.online_page import gather_offline_online, offline_online_html
from evalplat.store import Store

HOSTILE = "<script>alert(1)</script>"
QUOTED = "say \"hi\" & 'bye'"
QUERIES = {"q1": "Wing Flutter", "q2": HOSTILE, "q3": QUOTED, "q4": "tail rotor"}
DOCS = {"q1": "d1", "q2": "d2", "q3": "d3", "q4": "d4"}
# Each arm's rank of the relevant document per query: arm a finds every one first.
RANKS = {"a": 1, "b": 2, "c": 5}
# (config, typed text, clicks on the search): the texts differ from the test set's in case,
# white space and width (NFKC), and some match no query at all.
SEARCHES = [
    ("a", "wing flutter", 1),
    ("a", "  WING   flutter ", 2),  # two clicks on one search: one clicked search
    ("a", "\uff57\uff49\uff4e\uff47 flutter", 0),  # full-width letters: "wing" after NFKC
    ("a", HOSTILE, 0),
    ("a", "no such query", 1),
    ("b", "wing flutter", 1),
    ("b", "Wing Flutter", 0),
    ("b", QUOTED, 1),
    ("c", "wing flutter", 0),
    ("c", "other text", 0),
]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result.stdout


def _world(url: str, folder: Path) -> None:
    (folder / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} 1\n" for q, d in DOCS.items()))
    _cli("testset", "import", "web", "--qrels", str(folder / "qrels.txt"), "--queries",
         str(folder / "queries.tsv"), "--db", url)  # fmt: skip
    for arm, rank in RANKS.items():
        lines = []
        for query, doc in DOCS.items():
            shown = [f"x{n}" for n in range(1, 6)]
            shown[rank - 1] = doc
            lines += [f"{query} Q0 {d} {r} {10 - r} {arm}" for r, d in enumerate(shown, start=1)]
        (folder / f"{arm}.run").write_text("\n".join(lines) + "\n")
        _cli("import-run", str(folder / f"{arm}.run"), "--config", arm, "-t", "web", "--db", url)
    records = []
    for n, (arm, text, clicks) in enumerate(SEARCHES):
        search = f"s{n}"
        records.append({"query_id": search, "session_id": f"u{n}", "user_query": text,
                        "timestamp": f"2026-03-01T10:{n:02d}:00Z",
                        "query_response_hit_ids": ["d1", "d2"],
                        "query_attributes": {"config": arm}})  # fmt: skip
        records += [
            {"action_name": "click", "query_id": search, "session_id": f"u{n}",
             "timestamp": f"2026-03-01T10:{n:02d}:3{c}Z",
             "event_attributes": {"position": {"ordinal": c + 1}}}
            for c in range(clicks)
        ]  # fmt: skip
    log = folder / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    _cli("events", "import", str(log), "--db", url)
    _cli("events", "score", "--metric", "online:CTR", "--db", url)


def test_searches_join_test_set_queries_by_normalised_text(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    with Store.open(db_url) as store:
        clicks = store.query_clicks("web", "ndcg@10")
        scores = {
            arm: store.evaluation_scores(run)
            for arm, run in zip(RANKS, store_runs(store), strict=True)
        }
    assert clicks.metric == "nDCG@10"
    assert clicks.versions == ["a@1", "b@1", "c@1"]
    assert clicks.searches == {"a@1": 5, "b@1": 3, "c@1": 2}
    assert clicks.unmatched == {"a@1": 1, "c@1": 1}
    rows = {(r.version, r.query_id): r for r in clicks.rows.itertuples(index=False)}
    assert len(rows) == 12  # every version's four scored queries, searched or not
    counts = {key: (r.searches, r.clicked) for key, r in rows.items() if r.searches}
    assert counts == {
        ("a@1", "q1"): (3, 2), ("a@1", "q2"): (1, 0), ("b@1", "q1"): (2, 1),
        ("b@1", "q3"): (1, 1), ("c@1", "q1"): (1, 0),
    }  # fmt: skip
    assert rows[("a@1", "q1")].ctr == pytest.approx(2 / 3)
    assert math.isnan(rows[("c@1", "q4")].ctr)  # never searched: no click-through, not 0
    assert rows[("a@1", "q2")].text == HOSTILE and rows[("b@1", "q3")].text == QUOTED
    for arm, frame in scores.items():
        ndcg = frame[frame["metric"] == "nDCG@10"].set_index("query_id")["value"]
        for query in QUERIES:
            assert rows[(f"{arm}@1", query)].value == pytest.approx(ndcg[query])
    assert rows[("a@1", "q1")].value == pytest.approx(1.0)


def store_runs(store: Store) -> list[int]:
    """The offline run of each arm, in arm order."""
    runs = {i.config: i.id for i in store.list_runs() if i.test_set == "web"}
    return [runs[arm] for arm in RANKS]


def test_page_data_pairs_versions_and_keeps_text_as_text(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    with Store.open(db_url) as store:
        page = gather_offline_online(store, "web", kpis=["online:ctr"])
        offline, _ = store.agreement_inputs("web")
    assert page.versions == ("a@1", "b@1", "c@1")
    assert (page.metric, page.kpi, page.sign) == ("nDCG@10", "online:CTR", 1)
    ndcg = offline[offline["metric"] == "nDCG@10"].set_index("version")["value"]
    # online:CTR per version: sessions (one search each) with a click / sessions
    ctr = {"a@1": 3 / 5, "b@1": 2 / 3, "c@1": 0.0}
    pairs = {(p.baseline, p.candidate): (p, agrees) for p, agrees in page.pairs}
    assert list(pairs) == [("a@1", "b@1"), ("a@1", "c@1"), ("b@1", "c@1")]
    for (a, b), (pair, agrees) in pairs.items():
        assert pair.days == 1
        assert pair.offline_delta == pytest.approx(ndcg[b] - ndcg[a])
        assert pair.online_delta == pytest.approx(ctr[b] - ctr[a])
        assert agrees == ((pair.offline_delta > 0) == (pair.online_delta > 0))
    assert [agrees for _, agrees in page.pairs] == [False, True, True]
    [row] = page.rows  # nDCG@10 against the one KPI asked for; three versions say nothing
    assert (row.metric, row.label, row.tau) == ("nDCG@10", "too few versions (3)", None)
    assert page.scatter.count("<circle") == 2 and page.scatter.count('class="c-bad"') == 1
    coverage = {c.version: (c.searches, c.unmatched, c.queries) for c in page.coverage}
    assert coverage == {"a@1": (5, 1, 2), "b@1": (3, 0, 2), "c@1": (2, 1, 1)}
    first = page.table.rows[0]
    assert first[:2] == ("q1", "Wing Flutter") and first[2:5] == (1.0, pytest.approx(2 / 3), 3)
    html = offline_online_html(page)
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_report_option_writes_the_page(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    out = tmp_path / "pages" / "online.html"
    text = _cli("online", "agreement", "-t", "web", "-m", "nDCG@10", "-k", "online:CTR",
                "--samples", "100", "--report", str(out), "--db", db_url)  # fmt: skip
    assert f"report: {out}" in text
    html = out.read_text(encoding="utf-8")
    assert "<h1>Offline vs online · web</h1>" in html and 'id="query-table"' in html
    data = json.loads(_cli("online", "agreement", "-t", "web", "-k", "online:CTR", "--samples",
                           "50", "--report", str(out), "--db", db_url, "--json"))  # fmt: skip
    assert data["report"] == str(out) and data["versions"] == ["a@1", "b@1", "c@1"]
    result = CliRunner().invoke(app, ["online", "agreement", "-t", "web", "--report",
                                      str(tmp_path), "--db", db_url])  # fmt: skip
    assert result.exit_code == 2 and "--report" in result.stderr and "a folder" in result.stderr


def test_report_site_links_the_page_when_versions_were_online(db_url: str, tmp_path: Path) -> None:
    from evalplat.reports import render_site

    _world(db_url, tmp_path)
    with Store.open(db_url) as store:
        index = render_site(store, tmp_path / "site")
    page = index.parent / "online" / "web.html"
    html = page.read_text(encoding="utf-8")
    assert "<h1>Offline vs online · web</h1>" in html and HOSTILE not in html
    assert 'href="../index.html"' in html
    assert '<li><a href="online/web.html">web</a>' in index.read_text(encoding="utf-8")
    # the online runs' own test set has no offline runs to compare: no page of its own
    assert sorted(p.name for p in page.parent.iterdir()) == ["web.html"]
