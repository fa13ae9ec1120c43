"""`evalplat demo`: a real regression report from nothing but the package, night after night."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .reports.index_hooks import read_index


def test_demo_builds_a_project_reports_regressions_and_exits_0(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)  # relative --dir, as a newcomer types it
    first = cli("demo", "--dir", "demo", "--json")
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    folder = tmp_path / "demo"
    assert data["created"] is True
    assert Path(data["report"]).is_file()
    assert Path(data["report"]).is_relative_to(folder)
    verdicts = {
        (c["config"], m["metric"]): m["verdict"]
        for c in data["comparisons"]
        for m in c["metrics"]
        if m["gated"]
    }
    # the AND operator loses most relevant documents: a regression by any honest test
    assert verdicts[("bm25-and", "nDCG@10")] == "regression"
    # without the stemmer nDCG@10 falls by 0.02, but by less than the 0.01 threshold once every
    # unjudged top-10 document counts as relevant: the drop turns on missing judgments
    assert verdicts[("bm25-nostem", "nDCG@10")] == "needs_judgments"
    # AP's drop survives the bound: a regression
    assert verdicts[("bm25-nostem", "AP")] == "regression"
    kinds = {(a["config"], a["metric"]): a["kind"] for a in data["alerts"]}
    assert kinds[("bm25-nostem", "nDCG@10")] == "needs_judgments"
    assert kinds[("bm25-and", "nDCG@10")] == "regression"
    pages = sorted((folder / "reports" / "compare").glob("compare-*.html"))
    assert pages, "the report site has no comparison page"
    alerts = (folder / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    # each alert links the page of the comparison behind it
    assert all(Path(json.loads(a)["report"]).parent.name == "compare" for a in alerts)
    assert len(alerts) == len(data["alerts"]) >= 2
    # the configs are the arms of a simulated A/B test: its log is imported and scored per day
    assert (folder / "events" / "ubi.jsonl").is_file()
    online = folder / "reports" / "history" / "bm25-and--online.html"
    assert "online:CTR" in online.read_text(encoding="utf-8")
    # offline against online: the three arms' A/B pairs, linked from the index
    versus = (folder / "reports" / "online" / "cranfield.html").read_text(encoding="utf-8")
    assert "3 versions have both: bm25-and@1, bm25-nostem@1, bm25-porter@1" in versus
    assert versus.count("<td>bm25-") == 6 + 3  # three A/B pairs of two arms, three coverage rows
    # agreement: the pairs the project chose (its gated offline metrics against its [online]
    # metrics), each "too few versions (3)" with no figure; not every metric against every KPI
    table = versus[versus.index('id="agreement-table"') :].split("</table>")[0]
    cells = r'<tr>\s*<td>([^<]+)</td><td>([^<]+)</td><td class="num">(\d+)</td>\s*'
    rows = re.findall(cells + r'<td colspan="4" class="muted status">([^<]+)</td>', table)
    kpis = ["online:CTR", "online:MRR", "online:Abandonment", "online:Conversion"]
    assert [(m, k) for m, k, _, _ in rows] == [(m, k) for m in ("nDCG@10", "AP") for k in kpis]
    assert {(n, status) for _, _, n, status in rows} == {("3", "too few versions (3)")}
    assert table.count("<tr") == 1 + len(rows)  # the header and the chosen pairs, no others
    assert 'href="online/cranfield.html"' in Path(data["report"]).read_text(encoding="utf-8")

    assert data["night"] == 1 and [a["config"] for a in data["open_alerts"]] == [
        a["config"] for a in data["alerts"]
    ]
    # the log is what the configs return: the AND arm's users get the searches it answers with
    # nothing offline as zero-result searches, the same text always alike
    hits: dict[tuple[str, str], set[bool]] = {}
    for line in (folder / "events" / "ubi.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "user_query" in record:
            arm = record["query_attributes"]["variant"]
            hits.setdefault((arm, record["user_query"]), set()).add(
                bool(record["query_response_hit_ids"])
            )
    assert all(len(seen) == 1 for seen in hits.values())
    empty = {arm for (arm, _), seen in hits.items() if seen == {False}}
    assert empty == {"bm25-and@1"}

    # night 2, as the plain-text summary a newcomer reads: production changes and regresses
    second = cli("demo", "--dir", "demo")
    assert second.exit_code == 0, second.stderr
    summary = " ".join(second.stdout.split())
    assert "night 2:" in summary
    assert "weights = { title = 1, text = 5 }" in (folder / "evalplat.toml").read_text("utf-8")
    assert "Production (bm25-porter) tonight vs its baseline run" in summary
    assert "alert opened (regression): bm25-porter nDCG@10" in summary
    candidates = summary.split("Candidates vs production (bm25-porter)", 1)[1].split("A/B test", 1)
    assert "bm25-porter" not in candidates[0].replace("production (bm25-porter)", "")
    assert "bm25-and" in candidates[0] and "▼ regression" in candidates[0]
    # the A/B test's arms against the control arm on the log's last day
    assert "arms vs bm25-porter@1" in candidates[1] and "CTR" in candidates[1]
    opened = summary.split("open alerts (", 1)[1]
    # production's two regressions; the AND arm regressed online on the log's last day, which
    # is one judged day: the day rule (2 of 3 days by default) opens no online alert yet
    and_arm = candidates[1][candidates[1].index("bm25-and") :].split("bm25-nostem", 1)[0]
    assert "CTR" in and_arm and "▼ regression" in and_arm
    assert "online:" not in opened
    assert opened.startswith(f"{len(data['alerts']) + 2})")
    assert "bm25-porter nDCG@10 on cranfield" in opened
    unwrapped = second.stdout.replace("\n", "")  # Rich folds long paths at the console width
    assert "report:" in summary and data["report"] in unwrapped
    assert "next night: evalplat demo --dir" in summary
    assert str(folder / "evalplat.toml") in unwrapped
    # the candidates' rows show and link their comparisons against production, as the alerts do
    site = folder / "reports"
    hooks = read_index(site)
    for config in ("bm25-and", "bm25-nostem"):
        row = hooks.rows[(config, "cranfield")]
        assert "vs bm25-porter #" in " ".join(row["text"].split()), row["text"]
        pages = [link for link in row["links"] if link.startswith("compare/")]
        assert len(pages) == 1 and (site / pages[0]).is_file()
        assert "bm25-porter" in (site / pages[0]).read_text(encoding="utf-8")
    assert hooks.rows[("bm25-and", "cranfield")]["data-verdict"] == "regression"
    for alert in hooks.alerts.values():
        [link] = alert["alert_links"]
        assert (site / link).is_file()
        config_row = hooks.rows.get((alert["data-config"], alert["data-testset"]))
        if config_row is not None and alert["data-alert-kind"] in ("regression", "needs_judgments"):
            assert link in config_row["links"]  # the row and the alert lead to the same page

    # night 3: the change is rolled back, production's alerts resolve, the candidates' stay
    third = json.loads(cli("demo", "--dir", "demo", "--json").stdout)
    assert third["night"] == 3
    assert {(a["config"], a["event"]) for a in third["alerts"]} == {("bm25-porter", "resolved")}
    assert {a["config"] for a in third["open_alerts"]} == {"bm25-and", "bm25-nostem"}
    own = [c for c in third["comparisons"] if c["config"] == "bm25-porter"]
    assert [c["verdict"] for c in own] == ["unchanged"]
    assert (
        len((folder / "alerts.jsonl").read_text(encoding="utf-8").splitlines()) == len(alerts) + 4
    )

    # the gates replayed over the three nights open what the nights opened, no more, no less
    replayed = cli("gates", "backtest", "--project", str(folder / "evalplat.toml"), "--json")
    assert replayed.exit_code == 0, replayed.stderr
    opened = {
        (r["config"], r["gate"], a["kind"], a["resolved_at"] is None)
        for r in json.loads(replayed.stdout)
        for a in r["alerts"]
    }
    listed = json.loads(cli("alerts", "list", "--db", _db(folder), "--json").stdout)
    stored = {
        (a["config"], a["metric"], a["kind"], a["resolved_at"] is None)
        for a in listed
        if a["kind"] != "operational"
    }
    assert opened == stored and len(opened) == 6


def test_demo_online_ab_test_tells_the_offline_story(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: Any
) -> None:
    """The simulated A/B log follows each arm's offline results: an arm worse offline is never
    an online improvement, and the AND arm's empty result lists are zero-result searches."""
    first = json.loads(cli("demo", "--dir", str(tmp_path / "demo"), "--json").stdout)
    offline = {
        (c["config"], m["metric"]): m["verdict"] for c in first["comparisons"] for m in c["metrics"]
    }
    assert offline[("bm25-and", "nDCG@10")] == "regression"
    monkeypatch.chdir(tmp_path / "demo")  # the project's database
    online = {}
    for arm in ("bm25-and", "bm25-nostem"):
        result = cli("online", "compare", "bm25-porter", arm, "--json")
        assert result.exit_code in (0, 1), result.stderr
        online[arm] = {m["metric"]: m for m in json.loads(result.stdout)["metrics"]}
        # worse offline (both candidates are): no online measure may call the arm better
        assert not [m for m, row in online[arm].items() if row["verdict"] == "improvement"], arm
    worse = online["bm25-and"]
    assert worse["online:CTR"]["verdict"] == "regression"
    assert worse["online:CTR"]["candidate"] < worse["online:CTR"]["baseline"] / 2
    zero = worse["online:ZeroResult"]
    # production answers every Cranfield query; the AND arm answers few of them, as offline
    assert zero["baseline"] == 0.0 and zero["candidate"] > 0.5 and zero["verdict"] == "regression"
    # the candidate without stemming is worse by a little: at most unchanged online
    assert online["bm25-nostem"]["online:CTR"]["delta"] <= 0.0
    # the night's stored A/B comparison (the front page's) is gated by the same default rule
    # set as the console: the AND arm's click-through collapse is a regression there too
    from evalplat.store import Store

    with Store.open(f"sqlite:///{tmp_path / 'demo' / 'evalplat.db'}") as store:
        stored = [c for c in store.recent_comparisons("online", 50) if "bm25-and" in c.candidate]
        assert stored, "the demo's nights compared no A/B arm"
        for comparison in stored:
            assert "online:CTR" in [g["metric"] for g in comparison.options["gates"]]
            loaded = store.load_comparison(comparison.id)
            assert loaded.metric("online:CTR").verdict == "regression"


def _db(folder: Path) -> str:
    return f"sqlite:///{folder / 'evalplat.db'}"
