"""A season unattended: one project lives through twenty-two nights, on both databases.

The project (``season_world``): test sets ``topics`` (30 queries tagged head/tail, with
documents) and ``catalog`` (20 untagged queries); on ``topics`` the configs ``prod`` (python),
``cand`` (python, ``compare_to = "prod"``), ``exp`` (python) and ``lexical`` (builtin), on
``catalog`` ``remote`` (http, against a real server on 127.0.0.1); an nDCG@10 gate, an
online CTR gate over the A/B arms ``prod`` and ``cand``; a P@5 target of ``lexical``; a
webhook receiver and a ``json`` channel; a judge behind the tests' chat-completions server.

The nights, and what each must end with:

1. the baseline: every config good; ``lexical``'s P@5 target, missed only on judged
   documents, needs judgments (it stays so until night 5)                         → exit 0
2. ``cand`` regresses against ``prod``: one regression alert opens; ``cand`` is an
   experiment (``compare_to``), which the default ``[nightly] fail_on`` leaves out → exit 0
3. the team acknowledges it; still regressed, nothing new                         → exit 0
4. judgments added with ``evalplat unjudged`` → grades → ``testset import --add``: every
   config is scored on version 2, nothing alerts                                  → exit 0
5. ``cand`` fixed: its alert resolves; ``[nightly] judge`` grades the rest: version 3, and
   the target, now credibly missed, opens its alert (exit 1 only with --fail-on-target) → exit 0
6. gates added: RR@10 (the baseline was never scored on it), a ``tail`` segment gate (only
   ``topics`` has the tag) and a latency gate with its default thresholds         → exit 0
   (first misspelt ``tial``: ``nightly --dry-run`` and ``nightly`` refuse it, exit 2, nothing
   written)
7. the http engine answers 500: ``remote``'s operational alert opens               → exit 3
8. the engine is back: it resolves                                                → exit 0
9. a quiet night while a child process keeps a core busy: nothing alerts, the latency gate
   decided on each baseline timed again beside its candidate                      → exit 0
10. the A/B log of day 10 comes in, ``cand``'s arm with 30 % fewer clicks: an online
    regression opens (an experiment's: exit 0); ``compare prod@baseline cand@latest``
    still compares offline                                                        → exit 0
11. ``cand``'s arm gets no more traffic; ``exp``'s engine returns nothing: it regresses on
    all three gates, each alert stating that the queries returned nothing        → exit 1
12. ``alerts resolve ID --note`` closes exp's RR@10 alert by hand; two days without ``cand``
    traffic (``retire_after_days = 2``): its online alert is retired; ``exp`` is dropped from
    the project: its two other alerts are retired; the target is removed: retired → exit 0
13. a quiet night: nothing changes                                                → exit 0
    (and the site shows the A/B days of nights 10 to 12 as sessions and searches, with no
    query-health page for them)
14. an interleaved experiment starts, ``lexical``'s hits merged with ``prod``'s, gated on
    ``online:Preference``: an A/A day, nothing alerts                             → exit 0
15. its next day, lexical's hits draw fewer clicks: one Preference alert opens     → exit 1
16. the experiment's traffic ends while prod's A/B traffic goes on two more days: its
    alert is retired, and its last day is not judged again                        → exit 0
17. the judge is off; a config ``fresh`` returns documents ``yN`` nobody graded: its P@5
    target needs judgments, nothing alerts                                        → exit 0
    (then ``rate task --from-run fresh@latest``, two raters invited, every pair graded over
    the app's HTTP interface, the task closed: version 4)
18. every config is scored on version 4; the raters found ``yN`` not relevant, so fresh's
    target is credibly missed and opens its alert                                 → exit 0
19. a weekly ``[[sweeps]]`` entry over lexical's ``operator`` is added: it is due, runs after
    the configs (one ``sweep`` line, in-sample and held-out gains), alerts nothing, and its
    settings (``lexical~operator=...``) have no index row                          → exit 0
20. the next night it is not due: no ``sweep`` line                               → exit 0
21. its last sweep moved a week back (as a week of nights would): due again, it searches
    nothing new (its settings' runs are reused)                                   → exit 0
22. a quiet night: every page of the site it leaves, kept from earlier nights or written
    tonight, is byte for byte what a fresh write of the site gives, and writing the site
    again at once keeps every file                                                → exit 0

After every night: the exit code; the night's alert events are exactly the planted ones (no
alert without a cause); over the season each alert has one ``opened`` event and at most one
closing event (``resolved`` or ``retired``), after which nothing; the store's states agree
(``acknowledged`` exactly where the team acknowledged) and the night's ``done`` line counts
the open and acknowledged alerts;
the webhook receiver accepted each event once and the ``json`` file holds each once; the
index's config rows show ``data-verdict="regression"`` exactly where a regression alert is
open or acknowledged (the rows of a dropped config or an ended arm keep their last verdict and
are left out); every open alert has a row whose ``alert-link`` (and every other
relative link of the page) exists on disk; each message links a page of the site under
``[reports] base_url`` (a regression its comparison's, an outage its failed run's), the same
page as its index row on the night it opens, and a regression's message states the operational
facts planted in its run (and no others).

Nights 2, 5 (with its judge) and 11 compare their configs in a second process while the next
config runs, as a large night does (``evalplat.nightly.compare_beside``); the others in the
night's own process.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.nightly.job import NightlyOutcome, run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer, capture_server
from ..judging.chat_server import ChatServer, chat_server
from .season_world import (
    REPORTS_URL,
    IndexPage,
    Plan,
    SearchServer,
    busy_core,
    interleaved_log,
    project_text,
    rate_in_the_app,
    read_index,
    search_server,
    ubi_log,
    write_testsets,
)
from .test_compare_beside import _taken_ahead, comparing_beside

# (kind, event, config, test set, metric); the metric of an operational alert is not compared
Event = tuple[str, str, str, str, str | None]
CLOSING = ("resolved", "retired")
SEGMENT_TAIL = "nDCG@10 [segment tail]"
ONLINE = "online"  # the test set of online (A/B) alerts
# lexical's P@5 target (0.25): judged, it scores 0.2; with unjudged documents in its top 5 the
# miss is not credible (0.4 if they were relevant), so it needs judgments until the judge has
# graded them all
UNSURE, MISSED = "needs_judgments", "missed"


@dataclass
class Season:
    folder: Path
    db_url: str
    cli: Callable[..., Any]
    search: SearchServer
    hook: CaptureServer
    judge: ChatServer
    plan: Plan = field(default_factory=Plan)
    # alert id → its events over the season, in order
    ledger: dict[int, list[str]] = field(default_factory=dict)
    messages_seen: int = 0  # webhook requests accepted before tonight
    acked: set[int] = field(default_factory=set)  # alerts acknowledged with ``alerts ack``
    # alert id → (kind, config, test set, metric)
    subjects: dict[int, tuple[str, str, str, str]] = field(default_factory=dict)
    # A/B arms whose traffic ended and whose online alerts were retired: like a dropped config,
    # they left the project, and the index's row keeps the verdict of their last day
    ended_arms: set[str] = field(default_factory=set)
    outcome: NightlyOutcome | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)

    def write(self) -> Path:
        path = self.folder / "evalplat.toml"
        text = project_text(
            self.folder,
            self.plan,
            search_url=self.search.url,
            hook=f"{self.hook.url}/ok",
            judge_url=self.judge.url,
        )
        path.write_text(text, encoding="utf-8")
        return path

    def night(
        self,
        n: int,
        what: str,
        *,
        code: int,
        events: list[Event],
        target: str | None = None,
        facts: dict[str, set[str]] | None = None,
        beside: bool = False,
    ) -> NightlyOutcome:
        """Run night ``n`` and check it; ``target`` is lexical's P@5 target verdict tonight,
        ``facts`` the kinds of operational facts planted in a config's run tonight; with
        ``beside``, the night compares its configs in a second process, as a large night does
        (``evalplat.nightly.compare_beside``)."""
        where = f"night {n} ({what})"
        self.steps = []
        with pytest.MonkeyPatch.context() as patch:
            made = comparing_beside(patch) if beside else []
            taken = _taken_ahead(patch) if beside else []
            try:
                project = load_project(self.write())
                outcome = run_nightly(project, db_url=self.db_url, log=self.steps.append)
            except InputError as error:
                refused = str(error)
            else:
                refused = ""
        assert not beside or sum(f.sent for f in made) > 0, (
            f"{where}: no comparison was made in a second process"
        )
        # the pages rendered there are the ones the site wrote, when nothing changed meanwhile
        ahead = {page.path for f in made for page in f.ahead}
        assert not beside or (taken and set(taken) <= ahead), (
            f"{where}: the site wrote {taken} of the pages rendered beside, {sorted(ahead)}"
        )
        if refused:
            pytest.fail(f"{where}: the night was refused: {refused}")
        self.outcome = outcome
        problems = [s for s in self.steps if "error" in s or s["step"] == "failed"]
        alerts = [s for s in self.steps if s["step"] == "alert"]
        assert outcome.exit_code == code, (
            f"{where}: exit {outcome.exit_code}, expected {code}; problems: {problems}; "
            f"alert events: {alerts}"
        )
        verdicts = [
            t["target_verdict"]
            for t in outcome.targets
            if t["config"] == "lexical" and t["metric"] == "P@5"
        ]
        assert verdicts == ([target] if target else []), (
            f"{where}: lexical's P@5 target verdicts {verdicts}, expected {target or 'none'}"
        )
        self._check_events(where, outcome, events)
        self._check_store(where)
        self._check_done(where)
        self._check_channels(where)
        page = self._check_index(where)
        self._check_messages(where, page, facts or {})
        return outcome

    # ── the checks made after every night ────────────────────────────────────────────────────

    def _check_events(self, where: str, outcome: NightlyOutcome, planted: list[Event]) -> None:
        got: list[Event] = []
        for e in outcome.alerts:
            metric = None if e["kind"] == "operational" else e["metric"]
            got.append((e["kind"], e["event"], e["config"], e["testset"], metric))
        assert Counter(got) == Counter(planted), (
            f"{where}: alert events {sorted(got, key=str)}, planted {sorted(planted, key=str)}"
        )
        for e in outcome.alerts:
            history = self.ledger.setdefault(e["id"], [])
            subject = (e["kind"], e["config"], e["testset"], e["metric"])
            assert self.subjects.setdefault(e["id"], subject) == subject, (
                f"{where}: alert {e['id']} changed subject to {subject}"
            )
            if e["event"] == "opened":
                assert history == [], f"{where}: alert {e['id']} opened again after {history}"
            else:
                assert history == ["opened"], (
                    f"{where}: alert {e['id']} {e['event']} after {history or 'nothing'}"
                )
            history.append(e["event"])

    def _check_store(self, where: str) -> None:
        with Store.open(self.db_url) as store:
            states = {a.id: a.state for a in store.list_alerts()}
        unexplained = sorted(set(states) - set(self.ledger))
        assert not unexplained, f"{where}: alerts {unexplained} exist without an event"
        for alert_id, history in self.ledger.items():
            closed = history[-1] in CLOSING
            expected = (history[-1],) if closed else ("open", "acknowledged")
            if not closed:
                expected = ("acknowledged",) if alert_id in self.acked else ("open",)
            state = states.get(alert_id)
            assert state in expected, f"{where}: alert {alert_id} is {state}, expected {expected}"

    def _check_done(self, where: str) -> None:
        """The night's last log line counts the project's open and acknowledged alerts."""
        done = [s for s in self.steps if s["step"] == "done"]
        live = {i for i, h in self.ledger.items() if h[-1] not in CLOSING}
        counts = {
            "open_alerts": len(live - self.acked),
            "acknowledged_alerts": len(live & self.acked),
        }
        told = {key: done[-1].get(key) for key in counts} if done else None
        assert told == counts, f"{where}: the done line says {told}, the alerts are {counts}"

    def _check_channels(self, where: str) -> None:
        expected = Counter((i, e) for i, events in self.ledger.items() for e in events)
        sent = Counter(
            (a["alert_id"], a["event"]) for r in self.hook.accepted("/ok") for a in r.body["alerts"]
        )
        assert sent == expected, (
            f"{where}: the webhook accepted {dict(sent)}, expected each event once: "
            f"{dict(expected)}"
        )
        path = self.folder / "alerts.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        written = Counter((r["alert_id"], r["event"]) for r in map(json.loads, lines))
        assert written == expected, (
            f"{where}: alerts.jsonl holds {dict(written)}, expected each event once: "
            f"{dict(expected)}"
        )

    def _check_index(self, where: str) -> IndexPage:
        site = self.folder / "site"
        page = read_index(site / "index.html")
        live = {i for i, h in self.ledger.items() if h[-1] not in CLOSING}
        regressed = {
            (self.subjects[i][1], self.subjects[i][2])
            for i in live
            if self.subjects[i][0] == "regression"
        }
        configs = set(self.plan.modes)
        configs |= {"lexical"} if self.plan.lexical else set()
        configs |= {"remote"} if self.plan.remote else set()
        rows = {(r["data-config"], r["data-testset"]): r["data-verdict"] for r in page.rows}
        expected = {(c, "catalog" if c == "remote" else "topics") for c in configs}
        missing = sorted(expected - set(rows))
        assert not missing, f"{where}: the index has no data-config/data-verdict row for {missing}"
        for (config, test_set), verdict in sorted(rows.items()):
            if config not in configs or (test_set == "online" and config in self.ended_arms):
                continue
            alerted = (config, test_set) in regressed
            assert (verdict == "regression") == alerted, (
                f"{where}: index row {config} on {test_set} says data-verdict={verdict!r} while "
                f"{'a' if alerted else 'no'} regression alert is open"
            )
        shown = {int(a["data-alert-id"]) for a in page.alerts}
        assert shown == live, f"{where}: index alert rows {sorted(shown)}, open {sorted(live)}"
        for alert_id in live:
            links = page.alert_links.get(str(alert_id), [])
            if self.subjects[alert_id][0] != "operational":
                assert links, f"{where}: alert {alert_id}'s row has no alert-link"
        for href in page.hrefs:
            if href.startswith(("http://", "https://", "mailto:", "#")):
                continue
            target = site / href.split("#")[0]
            assert target.is_file(), f"{where}: index link {href} does not exist"
        return page

    def _check_messages(self, where: str, page: IndexPage, facts: dict[str, set[str]]) -> None:
        """Each message of the night links a page of the site (under ``[reports] base_url``):
        a regression's its comparison's, an outage's its failed run's; an alert opened tonight
        links the page its index row links. A regression opened tonight states the operational
        facts planted in its config's run, and no others."""
        accepted = self.hook.accepted("/ok")
        tonight = [a for r in accepted[self.messages_seen :] for a in r.body["alerts"]]
        self.messages_seen = len(accepted)
        live = {i for i, h in self.ledger.items() if h[-1] not in CLOSING}
        for message in tonight:
            what = f"{where}: the {message['event']} message of alert {message['alert_id']}"
            assert message["index"] == f"{REPORTS_URL}/index.html", f"{what}: {message['index']}"
            report = message["report"] or ""
            assert report.startswith(f"{REPORTS_URL}/"), f"{what} links {report!r}"
            path = report.removeprefix(f"{REPORTS_URL}/")
            assert (self.folder / "site" / path).is_file(), f"{what}: {path} is not on disk"
            if message["kind"] == "regression" and message["event"] == "opened":
                kinds = {f["kind"] for f in message.get("facts") or ()}
                planted = facts.get(message["config"], set())
                assert kinds == planted, f"{what} states facts {kinds}, planted {planted}"
            if message["event"] == "retired" or message["note"]:
                continue  # a hand or a retirement: the page last seen, whatever it is
            if message["kind"] == "operational" and message["event"] == "opened":
                assert path.startswith("runs/run-"), f"{what} links {path}, not the failed run"
            elif message["kind"] == "regression" and message["test_set"] != ONLINE:
                assert path.startswith("compare/compare-"), f"{what} links {path}, no comparison"
            if message["event"] == "opened" and message["alert_id"] in live:
                row = page.alert_links.get(str(message["alert_id"]), [])
                assert row == [path], f"{what} links {path}; its index row links {row}"

    # ── what the team does between nights ────────────────────────────────────────────────────

    def refused_before_writing(self, what: str, named: str) -> None:
        """``nightly --dry-run`` and ``nightly`` both exit 2 with one line naming ``named``,
        and the database is left as it was."""
        project = str(self.write())
        with Store.open(self.db_url) as store:
            before = (len(store.list_runs()), len(store.list_alerts()))
        for extra in (["--dry-run"], []):
            result = self.cli("nightly", "--project", project, *extra, "--db", self.db_url)
            lines = result.stderr.strip().splitlines()
            assert result.exit_code == 2 and len(lines) == 1 and named in lines[0], (
                f"nightly {' '.join(extra)} with {what}: exit {result.exit_code}, {lines}"
            )
        with Store.open(self.db_url) as store:
            after = (len(store.list_runs()), len(store.list_alerts()))
        assert after == before, f"nightly with {what} wrote runs/alerts: {before} → {after}"

    def import_events(self, day: int, attention: dict[str, float]) -> None:
        log = ubi_log(self.folder / f"day{day}.jsonl", day, attention, seed=100 + day)
        result = self.cli("events", "import", str(log), "--db", self.db_url)
        assert result.exit_code == 0 and "unknown config" not in result.stdout, (
            f"events of day {day}: {result.stdout} {result.stderr}"
        )

    def import_interleaved(self, day: int, lean: float) -> None:
        log = interleaved_log(self.folder / f"interleaved{day}.jsonl", day, lean, seed=200 + day)
        result = self.cli("events", "import", str(log), "--json", "--db", self.db_url)
        assert result.exit_code == 0, f"interleaved day {day}: {result.stderr}"
        summary = json.loads(result.stdout)
        assert summary["unknown_configs"] == {} and summary["interleaved"] > 0, summary

    def online_pages_say_sessions(self, where: str) -> None:
        """The site shows the A/B arms' days (nights 10 to 12) as sessions: their run and history
        pages count sessions and searches, and no query-health page is written for them."""
        site = self.folder / "site"
        assert not list((site / "health").glob("*--online.html")), f"{where}: online health page"
        with Store.open(self.db_url) as store:
            online = [i for i in store.list_runs() if i.trigger == "online"]
        days = {i.day for i in online}
        assert days == {f"2026-03-{d}" for d in (10, 11, 12)}, f"{where}: online days {days}"
        pages = [site / "runs" / f"run-{i.id}.html" for i in online]
        written = [p.read_text(encoding="utf-8") for p in pages if p.is_file()]
        assert written, f"{where}: no online run page"
        for page in written:
            assert "<dt>sessions</dt>" in page and "All queries" not in page, where
        history = (site / "history" / "prod--online.html").read_text(encoding="utf-8")
        assert '<th scope="col">Sessions</th>' in history and "new judgments" not in history, where

    def site_is_a_fresh_render(self, where: str) -> None:
        """The night's site (pages kept by their keys included) equals a site written from
        scratch, and writing it again at once gathers and renders nothing."""
        from evalplat.nightly.project_online import agreement_pairs
        from evalplat.reports import render_site

        site, fresh = self.folder / "site", self.folder / "fresh-site"
        project = load_project(self.folder / "evalplat.toml")
        control = None if project.online is None else project.online.baseline
        agreement = agreement_pairs(project)
        with Store.open(self.db_url) as store:
            render_site(
                store,
                fresh,
                agreement,
                targets=project.targets,
                control=control,
                gates_of=project.stated_gates,
            )
            pages = sorted(p.relative_to(fresh) for p in fresh.rglob("*.html"))
            assert len(pages) > 10, f"{where}: a fresh site of {len(pages)} pages"
            for page in pages:
                same = (site / page).read_bytes() == (fresh / page).read_bytes()
                assert same, f"{where}: {page} differs from a fresh render"
            before = {p: p.stat().st_mtime_ns for p in site.rglob("*.html")}
            render_site(
                store,
                site,
                agreement,
                targets=project.targets,
                control=control,
                gates_of=project.stated_gates,
            )
        changed = [p for p, t in before.items() if p.stat().st_mtime_ns != t]
        assert not changed, f"{where}: written again with nothing new: {changed}"

    def resolve_by_hand(self, alert_id: int, note: str) -> None:
        """``evalplat alerts resolve ID --note``: its ``resolved`` event is announced once."""
        project = str(self.folder / "evalplat.toml")  # its channels announce the event
        result = self.cli(
            "alerts", "resolve", str(alert_id), "--note", note, "--project", project,
            "--db", self.db_url,
        )  # fmt: skip
        assert result.exit_code == 0, f"alerts resolve {alert_id}: {result.stderr}"
        assert self.ledger[alert_id] == ["opened"], f"alert {alert_id}: {self.ledger[alert_id]}"
        self.ledger[alert_id].append("resolved")

    def latency_gated_on_pairs(self, where: str) -> None:
        """Tonight's latency gate was decided on each baseline's version timed again beside
        its candidate, query by query, under tonight's load (every query of the small test
        sets), and none regressed (``cand`` is compared with ``prod``, whose engine sleeps
        2 ms a query: it is credibly faster)."""
        assert self.outcome is not None
        rows = [(c["config"], m) for c in self.outcome.comparisons for m in c["metrics"]
                if m["metric"] == "Latency(p=95)"]  # fmt: skip
        assert len(rows) == 5, f"{where}: latency rows {rows}"
        for config, row in rows:
            decided = (row["gated"], row["test"], row["not_gated"])
            assert decided == (True, "wilcoxon", None), f"{where}: {config} {row}"
            expected = "improvement" if config == "cand" else "unchanged"
            assert row["verdict"] == expected, f"{where}: {config} {row}"
            assert row["timing_pairs"] >= 20, f"{where}: {config} {row}"
        timed = [step for step in self.steps if step["step"] == "paired_timing"]
        assert len(timed) == 5 and not [t for t in timed if "skipped" in t], timed

    def sweep_lines(self, where: str, count: int) -> list[dict[str, Any]]:
        """Tonight's ``sweep`` lines: ``count`` of them, each with its gains and no error,
        and no index row of a sweep's setting."""
        lines = [step for step in self.steps if step["step"] == "sweep"]
        assert len(lines) == count, f"{where}: sweep lines {lines}, expected {count}"
        for line in lines:
            assert "error" not in line and {"in_sample_gain", "held_out_gain"} <= set(line), line
        rows = read_index(self.folder / "site" / "index.html").rows
        settings = [r["data-config"] for r in rows if "~" in r["data-config"]]
        assert not settings, f"{where}: index rows of a sweep's settings {settings}"
        return lines

    def move_last_sweep(self, winner: int, days: int) -> None:
        """Move the time of the sweep's last run ``days`` back, as that many nights would."""
        spec = load_project(self.folder / "evalplat.toml").sweeps[0]
        with Store.open(self.db_url) as store:
            last = store.last_sweep(spec.config, spec.key)
            assert last is not None, "no sweep recorded"
            store.note_sweep(spec.key, winner, last - timedelta(days=days))

    def alert_of(self, kind: str, config: str, test_set: str, metric: str) -> int:
        subject = (kind, config, test_set, metric)
        found = [i for i, s in self.subjects.items() if s == subject]
        assert len(found) == 1, f"alerts of {subject}: {found}, expected exactly one"
        return found[0]

    def run_versions(self, test_set: str) -> dict[str, int | None]:
        """The judgment version each of tonight's runs on ``test_set`` is scored against."""
        assert self.outcome is not None
        with Store.open(self.db_url) as store:
            return {
                f"{r['config']}#{r['id']}": store.run_info(r["id"]).scored_against_version
                for r in self.outcome.runs
                if r["test_set"] == test_set
            }

    def latest_version(self, test_set: str) -> int:
        with Store.open(self.db_url) as store:
            return max(v.version for v in store.test_set_versions(test_set))

    def fresh_target(self) -> str:
        """Tonight's verdict of the ``fresh`` config's P@5 target."""
        assert self.outcome is not None
        verdicts = [t["target_verdict"] for t in self.outcome.targets if t["config"] == "fresh"]
        assert len(verdicts) == 1, verdicts
        return str(verdicts[0])

    def rate_in_the_app(self, task: str, raters: dict[str, int]) -> None:
        rate_in_the_app(self.cli, self.db_url, task, raters)


@pytest.fixture
def season(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Season]:
    # Every night rewrites the pages of each history's latest runs; a season of 13 nights
    # needs only the newest two to check its links, and stays fast with them.
    # (the site reads its own copy of the number, made when it was first imported)
    for module in ("render", "site"):
        monkeypatch.setattr(f"evalplat.reports.{module}.RUN_PAGES_PER_HISTORY", 2)
    folder = tmp_path / "project"
    write_testsets(folder)
    with search_server() as search, capture_server() as hook, chat_server() as judge:
        yield Season(folder, db_url, cli, search, hook, judge)


def test_a_season_of_nights_converges_and_the_front_page_tells_the_truth(season: Season) -> None:
    s = season
    reg = "regression"
    target = ("target", "lexical", "topics", "P@5")

    s.night(1, "the baseline", code=0, events=[], target=UNSURE)

    s.plan.modes["cand"] = "bad"
    s.night(
        2,
        "cand regresses against prod",
        code=0,  # cand is an experiment (compare_to): it alerts, [nightly] fail_on leaves it out
        events=[(reg, "opened", "cand", "topics", "nDCG@10")],
        target=UNSURE,
        beside=True,
    )

    cand_alert = s.alert_of(reg, "cand", "topics", "nDCG@10")
    acked = s.cli("alerts", "ack", str(cand_alert), "--db", s.db_url)
    assert acked.exit_code == 0, acked.stderr
    s.acked.add(cand_alert)
    s.night(3, "the regression acknowledged", code=0, events=[], target=UNSURE)

    # the documented loop: export the unjudged documents, grade them, add them
    pool = s.cli("unjudged", "lexical@latest", "--k", "10", "--db", s.db_url)
    assert pool.exit_code == 0, pool.stderr
    rows = list(csv.DictReader(io.StringIO(pool.stdout)))
    assert {r["doc_id"][0] for r in rows} == {"x"} and len(rows) == 30, rows
    graded = s.folder / "graded.txt"
    graded.write_text(
        "".join(f"{r['query_id']} 0 {r['doc_id']} 0\n" for r in rows if int(r["query_id"]) <= 16),
        encoding="utf-8",
    )
    added = s.cli("testset", "import", "topics", "--qrels", str(graded), "--add", "--db", s.db_url)
    assert added.exit_code == 0, added.stderr
    s.night(4, "judgments added with --add", code=0, events=[], target=UNSURE)
    versions = s.run_versions("topics")
    assert set(versions.values()) == {2}, f"night 4: runs on topics scored on {versions}, not v2"

    s.plan.modes["cand"] = "good"
    s.plan.judge = True
    asked = len(s.judge.requests)
    s.night(
        5,
        "cand fixed, the judge grades the rest",
        code=0,
        events=[(reg, "resolved", "cand", "topics", "nDCG@10"), (target[0], "opened", *target[1:])],
        target=MISSED,
        beside=True,
    )
    assert len(s.judge.requests) - asked == 15, "night 5: the judge should grade 15 new pairs"
    assert s.latest_version("topics") == 3, "night 5: one night's judge adds one version"
    versions = s.run_versions("topics")
    assert set(versions.values()) == {3}, f"night 5: runs on topics scored on {versions}, not v3"

    # a misspelt segment is refused before anything is written, by --dry-run and a night alike
    s.plan.more_gates, s.plan.segment = True, "tial"
    s.refused_before_writing("a gate on segment 'tial'", "tial")
    s.plan.segment = "tail"
    s.night(
        6, "RR@10, a tail segment gate and a latency gate added", code=0, events=[], target=MISSED
    )
    assert s.latest_version("topics") == 3, "night 6: nothing new to judge, no new version"

    s.search.failing = True
    s.night(
        7,
        "the http engine answers 500",
        code=3,
        events=[("operational", "opened", "remote", "catalog", None)],
        target=MISSED,
    )
    s.search.failing = False
    s.night(
        8,
        "the http engine is back",
        code=0,
        events=[("operational", "resolved", "remote", "catalog", None)],
        target=MISSED,
    )

    with busy_core():
        s.night(9, "a quiet night on a busy machine", code=0, events=[], target=MISSED)
    s.latency_gated_on_pairs("night 9")

    s.import_events(10, {"prod": 1.0, "cand": 0.7})
    s.night(
        10,
        "cand's arm loses clicks",
        code=0,  # an experiment's arm: alerts without failing the job (default fail_on)
        events=[(reg, "opened", "cand", "online", "online:CTR")],
        target=MISSED,
    )

    # a CI script compares against the offline baseline while online runs are being scored
    ci = s.cli("compare", "prod@baseline", "cand@latest", "--db", s.db_url)
    assert ci.exit_code == 0, f"after night 10: compare prod@baseline cand@latest: {ci.stderr}"
    s.import_events(11, {"prod": 1.0})
    s.plan.modes["exp"] = "empty"
    exp_gates = ["nDCG@10", "RR@10", SEGMENT_TAIL]
    s.night(
        11,
        "cand's arm ends, exp regresses: its engine returns nothing",
        code=1,
        events=[(reg, "opened", "exp", "topics", m) for m in exp_gates],
        target=MISSED,
        facts={"exp": {"zero_results"}},
        beside=True,
    )

    # the team closes one of exp's alerts by hand, then drops exp: the other two are retired
    s.resolve_by_hand(s.alert_of(reg, "exp", "topics", "RR@10"), "RR@10 of exp: experiment over")
    s.import_events(12, {"prod": 1.0})
    s.ended_arms.add("cand")
    del s.plan.modes["exp"]
    s.plan.target = False
    s.night(
        12,
        "cand's arm retired, exp dropped",
        code=0,
        events=[(reg, "retired", "cand", "online", "online:CTR")]
        + [(reg, "retired", "exp", "topics", m) for m in ("nDCG@10", SEGMENT_TAIL)]
        + [(target[0], "retired", *target[1:])],
    )

    s.night(13, "a quiet night", code=0, events=[])
    s.online_pages_say_sessions("after night 13")
    opened = [i for i, h in s.ledger.items() if h[0] == "opened"]
    assert len(opened) == 7 and all(len(s.ledger[i]) == 2 for i in opened), s.ledger

    preference = (reg, "lexical", "online", "online:Preference")
    s.plan.interleaving = True
    s.import_interleaved(14, lean=0.5)
    s.night(14, "an interleaved A/A day", code=0, events=[])
    s.import_interleaved(15, lean=0.3)
    s.night(15, "lexical's merged hits draw fewer clicks", code=1,
            events=[(reg, "opened", *preference[1:])])  # fmt: skip
    s.import_events(17, {"prod": 1.0})  # A/B traffic goes on; the experiment's has ended
    s.ended_arms.add("lexical")
    s.night(16, "the interleaved experiment ended", code=0,
            events=[(reg, "retired", *preference[1:])])  # fmt: skip
    judged = [step for step in s.steps if step["step"] == "interleaving"]
    assert [step["verdict"] for step in judged] == ["ended"], judged
    opened = [i for i, h in s.ledger.items() if h[0] == "opened"]
    assert len(opened) == 8 and all(len(s.ledger[i]) == 2 for i in opened), s.ledger

    # the rating loop: a config finds documents nobody graded (the judge is off now); its
    # target needs judgments; two raters grade them in the app; the next night scores on the
    # rated version and the target, now credibly missed, opens its alert
    fresh = ("target", "fresh", "topics", "P@5")
    s.plan.judge, s.plan.fresh = False, True
    s.night(17, "a new config finds unjudged documents", code=0, events=[])
    assert s.fresh_target() == UNSURE, "night 17: fresh's P@5 target should need judgments"
    made = s.cli("rate", "task", "fresh-yn", "--testset", "topics", "--from-run", "fresh@latest",
                 "--raters-per-pair", "2", "--grades", "max", "--db", s.db_url)  # fmt: skip
    assert made.exit_code == 0 and "30 pairs" in made.stdout, (made.stdout, made.stderr)
    s.rate_in_the_app("fresh-yn", {"ana": 0, "bo": 0})
    closed = s.cli("rate", "close", "fresh-yn", "--db", s.db_url)
    assert closed.exit_code == 0, closed.stderr
    assert s.latest_version("topics") == 4, "after rating: the closed task adds version 4"
    s.night(18, "the rated version scored", code=0, events=[(fresh[0], "opened", *fresh[1:])])
    assert s.fresh_target() == MISSED, "night 18: fresh's P@5 target, rated, is missed"
    versions = s.run_versions("topics")
    assert set(versions.values()) == {4}, f"night 18: runs on topics scored on {versions}, not v4"

    s.plan.sweep = True
    s.night(19, "a weekly sweep is due", code=0, events=[])
    first = s.sweep_lines("night 19", 1)[0]
    assert first["settings"] == 2 and first["searched"] == 2, first
    s.night(20, "the sweep is not due", code=0, events=[])
    s.sweep_lines("night 20", 0)
    s.move_last_sweep(first["winner_run"], days=7)
    s.night(21, "a week later the sweep is due again", code=0, events=[])
    again = s.sweep_lines("night 21", 1)[0]
    assert again["searched"] == 0 and again["cached"] == 2, again

    s.night(22, "a quiet night", code=0, events=[])
    s.site_is_a_fresh_render("after night 22")
