"""The season as a search: Hypothesis draws what happens to a project between nights, on both
databases, and every night must end as the rules say.

The project is ``season_model``'s (``season_world``'s test sets, engines and search server).
The rules are what a team and its machine do between two nights: a config added, its mode
changed, its file rolled back to an earlier content, or dropped; grades added to the qrels file
or with ``testset import --add``; ``[nightly] judge`` on or off (the tests' chat server grading
what nobody graded: model grades, which the default gates leave out); a fresh config's
unjudged documents rated by a person in ``evalplat rate`` (the app over HTTP) and the task
closed; a gate or a target added on any measure (segments, and measures that read no
judgments, included); the http engine down (500s) and back; the webhook receiver down (500s)
and back; a night killed by SIGKILL (``evalplat.db.faults``: at a store commit, or around a
delivery) in a process of its own, then the next night; a day of A/B logs (``prod`` the
control, other arms alike or losing 30 % of their clicks, an arm left out two days ended; a
rollback may draw ``prod`` between two such days); the ``[online]`` table dropped from the file;
a day of an interleaved experiment against ``prod`` from ``evalplat.interleave``'s own lists,
where the candidate or the baseline returned nothing for two queries of three; a quiet night,
on an idle machine or with a core kept busy. Each rule ends with a night, run with the real
``evalplat nightly --json`` (a killed night's successor checked with it as one night).

After every night:

- no traceback, in stdout or stderr;
- the exit code of docs/cli's table: 3 when a run failed or an event waits in the outbox,
  else 1 when a regression alert of a config of the project is open, else 0;
- the night's alert events are exactly the ones the model expects (opened where a verdict
  turned, resolved where it turned back, retired where the subject left the project; the
  model does not say for latency, whose verdicts depend on the load); each alert is opened
  once and ended at most once, after which nothing; the store's states agree;
- the ``json`` channel holds each event once; the webhook receiver accepted each once (by its
  idempotency key), all of them while it is up;
- on a night where nothing changed, nothing opens;
- ``config show`` names the version the file holds (a rollback included);
- one figure per fact: a run's means in ``runs show --json`` and ``history --json`` agree;
- ``compare`` of the night's pair, with the project's thresholds, gives the night's verdicts;
- the night's A/B comparisons are of the latest A/B day, each of its arms against the version
  of ``prod`` that served that day (a rollback since changes neither);
- the index shows exactly the live alerts, and a regression verdict exactly where one is open;
  it lists no dropped config, and no ``online`` row once the ``[online]`` table is gone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from evalplat.events.synthetic import interleaved_records
from evalplat.reports.online_page import _control_version
from evalplat.store import Store

from ..alerts.servers import CaptureServer, _Handler, serving
from ..conftest import _empty_tables
from ..judging.chat_server import ChatServer, chat_server
from .db_counts import table_counts
from .season_model import GATES, MODES, TARGETS, UNPREDICTED, Model, Subject, engine_subject
from .season_world import (
    GRADES,
    TOPICS,
    SearchServer,
    busy_core,
    rate_in_the_app,
    read_index,
    search_server,
    ubi_log,
    write_testsets,
)

MAX_CONFIGS = 3  # python configs at once: each night stays a few seconds
# where a night is killed (``evalplat.db.faults``): the N-th store commit, or around the
# N-th delivery (a channel accepted a notice, the outbox not yet told); a night that never
# gets there ends whole
CRASH_POINTS = (*(f"commit:{n}" for n in (2, 6, 10, 14, 18, 22, 28)), "claimed:1", "delivered:1",
                "delivered:2")  # fmt: skip
CLOSING = ("resolved", "retired")
# the online gates' confirmation rules a season may carry: (consecutive, within, clear); each
# day alone, 2 of 3 with 2 clear days (the [online] default), 1 with 2 clear, 2 in a row
DAY_RULES = ((1, 1, 1), (2, 3, 2), (1, 1, 2), (2, 2, 1))


class HookServer(CaptureServer):
    """The capture server of the alert tests, which answers 500 (and records nothing) while
    ``down`` is set, as a receiver that is down."""

    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = _SwitchHandler
        self.down = False
        self.refused = 0


class _SwitchHandler(_Handler):
    server: HookServer

    def do_POST(self) -> None:
        if not self.server.down:
            return super().do_POST()
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.refused += 1
        return self._send(500, b"receiver is down")


@dataclass
class World:
    """What every example shares: the servers; each example gets a fresh folder and database."""

    root: Path
    fresh_db: Callable[[Path], str]
    cli: Callable[..., Any]
    search: SearchServer
    hook: HookServer
    judge: ChatServer
    examples: int = 0

    def reset(self) -> tuple[Path, str]:
        self.examples += 1
        folder = self.root / f"season{self.examples}"
        write_testsets(folder)
        self.search.failing, self.hook.down = False, False
        self.hook.clear()
        return folder, self.fresh_db(folder)


@dataclass
class Ledger:
    """Every alert event seen so far: alert id → its events, and its subject."""

    events: dict[int, list[str]] = field(default_factory=dict)
    subjects: dict[int, Subject] = field(default_factory=dict)

    def live(self) -> dict[Subject, int]:
        return {self.subjects[i]: i for i, h in self.events.items() if h[-1] not in CLOSING}

    def counts(self) -> Counter[tuple[int, str]]:
        return Counter((i, e) for i, events in self.events.items() for e in events)


class SeasonSearch(RuleBasedStateMachine):
    world: World  # set by the test before the search runs

    def __init__(self) -> None:
        super().__init__()
        self.folder, self.db_url = self.world.reset()
        self.model = Model(engine=self.world.search.url.removesuffix("/search"))
        self.ledger = Ledger()
        self.nights = 0
        self.kills: list[bool] = []  # per killed night: whether it was killed (or ended whole)
        self.night("the first night")

    @initialize(rule=st.sampled_from(DAY_RULES))
    def confirm_online_gates(self, rule: tuple[int, int, int]) -> None:
        """The season's online gates carry a confirmation rule of their own (consecutive,
        within, clear), drawn once: the model follows their judged days by it."""
        self.model.day_rule = rule

    # ── the rules: what happens between two nights ───────────────────────────────────────────

    @rule(data=st.data(), mode=st.sampled_from(MODES))
    def change_a_config(self, data: st.DataObject, mode: str) -> None:
        self.change(data.draw(st.sampled_from(sorted(self.model.configs)), label="config"), mode)

    @precondition(lambda self: any(len(c) > 1 for c in self.model.contents.values()))
    @rule(data=st.data())
    def roll_back_a_config(self, data: st.DataObject) -> None:
        m = self.model
        choices = sorted(c for c in m.configs if len(m.contents[c]) > 1)
        if not choices:  # only a dropped config had more than one content
            return self.quiet_night(load=False)
        config = data.draw(st.sampled_from(choices), label="config")
        earlier = [mode for mode in m.contents[config] if mode != m.configs[config]]
        self.roll_back(config, data.draw(st.sampled_from(earlier), label="earlier content"))

    @precondition(lambda self: len(self.model.configs) < MAX_CONFIGS)
    @rule(mode=st.sampled_from(MODES))
    def add_a_config(self, mode: str) -> None:
        m = self.model
        m.added += 1
        name = f"new{m.added}"
        m.configs[name], m.contents[name], m.changed = mode, [mode], True
        self.night(f"{name} added, {mode}")

    @precondition(lambda self: len(self.model.configs) > 1)
    @rule(data=st.data())
    def drop_a_config(self, data: st.DataObject) -> None:
        """Any config but ``prod`` once it is the online control (``[online] baseline``)."""
        m = self.model
        choices = sorted(c for c in m.configs if not (m.online and c == "prod"))
        self.drop(data.draw(st.sampled_from(choices), label="config"))

    @rule(queries=st.sets(st.sampled_from(list(TOPICS)), min_size=1, max_size=5),
          grade=st.integers(0, 3), by_add=st.booleans())  # fmt: skip
    def add_grades(self, queries: set[int], grade: int, by_add: bool) -> None:
        """Grades of documents no engine of the model returns (``xN``), or of ``fresh``'s
        unjudged ``yN``, found not relevant: new judgment versions that change no figure of
        the model."""
        lines = "".join(f"{n} 0 x{n} {grade}\n{n} 0 y{n} 0\n" for n in sorted(queries))
        if by_add:
            graded = self.folder / f"graded{self.nights}.txt"
            graded.write_text(lines, encoding="utf-8")
            added = self.world.cli("testset", "import", "topics", "--qrels", str(graded),
                                   "--add", "--db", self.db_url)  # fmt: skip
            assert added.exit_code == 0, added.stderr
        else:
            with (self.folder / "topics-qrels.txt").open("a", encoding="utf-8") as qrels:
                qrels.write(lines)
        self.model.graded |= queries
        self.model.changed = True
        self.night(f"grades of {sorted(queries)} added {'with --add' if by_add else 'to the file'}")

    def judge_on_or_off(self) -> None:
        """``[nightly] judge`` on or off: the judge grades the ``yN`` nobody graded, model
        grades that no gate of the model lets in, so nothing moves, on any surface."""
        self.model.judge = not self.model.judge
        self.model.changed = True
        self.night("the nightly judge " + ("on" if self.model.judge else "off"))

    @precondition(lambda self: bool(self.rateable()))
    @rule(data=st.data())
    def rate_the_unjudged(self, data: st.DataObject) -> None:
        self.rate(data.draw(st.sampled_from(self.rateable()), label="config"))

    @rule(gate=st.sampled_from(GATES))
    def add_a_gate(self, gate: tuple[str, str | None]) -> None:
        if gate not in self.model.gates:
            self.model.gates.append(gate)
            self.model.changed = True
        self.night(f"a gate on {gate}")

    @rule(data=st.data(), goal=st.sampled_from(TARGETS))
    def add_a_target(self, data: st.DataObject, goal: tuple[str, str]) -> None:
        self.target(data.draw(st.sampled_from(sorted(self.model.configs)), label="config"), goal)

    def engine_down_or_back(self) -> None:
        self.model.engine_down = not self.model.engine_down
        self.world.search.failing = self.model.engine_down
        self.model.changed = True
        self.night("the http engine " + ("down" if self.model.engine_down else "back"))

    def second_remote_on_or_off(self) -> None:
        """``remote2``, a second http config on the search server, added or dropped: one
        engine under two configs, whose outage is one alert."""
        self.model.remote2 = not self.model.remote2
        self.model.changed = True
        self.night("remote2 " + ("added" if self.model.remote2 else "dropped"))

    def channel_down_or_back(self) -> None:
        self.model.hook_down = not self.model.hook_down
        self.world.hook.down = self.model.hook_down
        self.night("the webhook receiver " + ("down" if self.model.hook_down else "back"))

    # One rule for the three switches: a rule without arguments is what Hypothesis draws first
    # (its simplest example repeats it), and a season of switching one thing on and off alone
    # would spend a third of the search's nights.
    @rule(switch=st.sampled_from(("engine", "channel", "judge", "remote2")))
    def turn_on_or_off(self, switch: str) -> None:
        """The http engine down (500s) or back, the webhook receiver down or back, the
        nightly judge on or off, or a second config on the http engine added or dropped."""
        {"engine": self.engine_down_or_back, "channel": self.channel_down_or_back,
         "judge": self.judge_on_or_off,
         "remote2": self.second_remote_on_or_off}[switch]()  # fmt: skip

    @rule(data=st.data(), mode=st.sampled_from(MODES), point=st.sampled_from(CRASH_POINTS))
    def kill_a_night(self, data: st.DataObject, mode: str, point: str) -> None:
        """A config's mode changes (or stays), and the night is killed at ``point``."""
        self.kill(data.draw(st.sampled_from(sorted(self.model.configs)), label="config"), mode,
                  point)  # fmt: skip

    @precondition(lambda self: "prod" in self.model.configs)
    @rule(data=st.data())
    def online_day(self, data: st.DataObject) -> None:
        """A day of A/B logs: ``prod`` (the control) and up to two other arms, each alike or
        with 30 % fewer clicks; an arm left out long enough has ended."""
        m = self.model
        choices = sorted(c for c in m.configs if c != "prod" and c not in m.ab_ended)
        arms = (
            data.draw(st.lists(st.sampled_from(choices), unique=True, max_size=2), label="arms")
            if choices
            else []
        )
        self.ab_day({arm: data.draw(st.booleans(), label=f"{arm} loses clicks") for arm in arms})

    # an argument, as every rule has one: Hypothesis tries the rules with fewer arguments first
    @precondition(lambda self: self.model.online)
    @rule(load=st.booleans())
    def drop_the_online_table(self, load: bool) -> None:
        """The ``[online]`` table and its gates leave the project file: the next night (on an
        idle or a busy machine) retires every online alert once, and the control's ``online``
        row ends on the index. A later day of logs brings the table back, with none of the
        arms that ended."""
        self.drop_online(load=load)

    @precondition(lambda self: "prod" in self.model.configs)
    @rule(data=st.data(), empty=st.sampled_from(("candidate", "baseline")))
    def interleaved_day(self, data: st.DataObject, empty: str) -> None:
        """A day of an interleaved experiment against ``prod`` whose candidate or baseline
        returned nothing for two of the three queries (``evalplat.interleave``'s own lists):
        its clicks then go to the other side. A new candidate ends the experiment before."""
        m = self.model
        choices = sorted(c for c in m.configs if c != "prod" and c not in m.il_ended)
        if not choices:
            return self.quiet_night(load=False)
        self.interleave(data.draw(st.sampled_from(choices), label="candidate"), empty)

    @rule(load=st.booleans())
    def quiet_night(self, load: bool) -> None:
        self.night("a quiet night" + (" on a busy machine" if load else ""), load=load)

    # ── the steps the rules draw, also taken by the pinned seasons below ─────────────────────

    def change(self, config: str, mode: str) -> None:
        if mode != self.model.configs[config]:
            self.model.set_mode(config, mode)
        self.night(f"{config} set to {mode}")

    def kill(self, config: str, mode: str, point: str) -> None:
        if mode != self.model.configs[config]:
            self.model.set_mode(config, mode)
        self.killed_night(f"{config} set to {mode}", point)

    def rateable(self) -> list[str]:
        """The ``fresh`` configs whose latest run has a ``yN`` no person graded (the judge's
        grade alone leaves it to grade: ``evalplat.store.people_judged``)."""
        m = self.model
        ungraded = set(TOPICS) - m.graded
        return sorted(c for c, mode in m.configs.items() if mode == "fresh" and ungraded)

    def rate(self, config: str) -> None:
        """``evalplat rate task --from-run CONFIG@latest`` (its unjudged ``yN``), one rater grades
        every pair 0 in the app, the task is closed: a version of people's grades."""
        m = self.model
        task = f"rate{self.nights}"
        made = self.world.cli("rate", "task", task, "--testset", "topics", "--from-run",
                              f"{config}@latest", "--db", self.db_url)  # fmt: skip
        pairs = len(set(TOPICS) - m.graded)
        said = f"{pairs} pair{'s' if pairs > 1 else ''} of"
        assert made.exit_code == 0 and said in made.stdout, (made.stdout, made.stderr)
        rate_in_the_app(self.world.cli, self.db_url, task, {"ana": 0})
        closed = self.world.cli("rate", "close", task, "--db", self.db_url)
        assert closed.exit_code == 0, closed.stderr
        m.graded |= set(TOPICS)
        m.changed = True
        self.night(f"{config}'s unjudged documents rated")

    def ab_day(self, drops: dict[str, bool]) -> None:
        m = self.model
        m.online, m.day, m.changed = True, m.day + 1, True
        attention = {"prod": 1.0} | {arm: 0.7 if drop else 1.0 for arm, drop in drops.items()}
        log = ubi_log(self.folder / f"day{m.day}.jsonl", m.day, attention, seed=100 + m.day)
        self.import_events(log)
        m.ab_last |= dict.fromkeys(attention, m.day)
        for arm, drop in drops.items():
            m.ab_bad.setdefault(arm, []).append(drop)
        m.served[m.day] = {arm: m.version_of(arm) for arm in attention}
        self.night(f"A/B day {m.day}: {attention}")

    def interleave(self, candidate: str, empty: str) -> None:
        m = self.model
        m.online, m.day, m.changed = True, m.day + 1, True
        m.experiment = candidate
        rankings = {text: sorted(docs) for text, docs in GRADES.items()}
        nothing = {text: [] if i < 2 else ranking for i, (text, ranking) in
                   enumerate(sorted(rankings.items()))}  # fmt: skip
        cand, base = (nothing, rankings) if empty == "candidate" else (rankings, nothing)
        records = interleaved_records(cand, base, GRADES, names=(candidate, "prod"), sessions=600,
                                      seed=200 + m.day,
                                      start=datetime(2026, 3, m.day, 8, tzinfo=UTC))  # fmt: skip
        log = self.folder / f"interleaved{m.day}.jsonl"
        log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        summary = self.import_events(log)
        assert summary["interleaved"] == summary["searches"] > 0, summary
        m.il_last[candidate] = m.day
        m.il_bad.setdefault(candidate, []).append(empty == "candidate")
        self.night(f"interleaved day {m.day} of {candidate}, the {empty} returned nothing")

    def histories(self, subject: Subject) -> list[list[str]]:
        """The events of each alert of ``subject`` so far, oldest alert first."""
        ids = sorted(i for i, s in self.ledger.subjects.items() if s == subject)
        return [self.ledger.events[i] for i in ids]

    def import_events(self, log: Path) -> dict[str, Any]:
        """``evalplat events import``: every search of the log taken, none set aside."""
        result = self.world.cli("events", "import", str(log), "--json", "--db", self.db_url)
        assert result.exit_code == 0, f"events import {log.name}: {result.stderr}"
        summary: dict[str, Any] = json.loads(result.stdout)
        assert summary["unknown_configs"] == {} and summary["rejected"] == 0, summary
        return summary

    def roll_back(self, config: str, mode: str) -> None:
        """The project file goes back to an earlier content of ``config``."""
        assert mode in self.model.contents[config], f"{config} never was {mode}"
        self.model.set_mode(config, mode)
        self.night(f"{config} rolled back to {mode} (v{self.model.version_of(config)})")

    def drop(self, config: str) -> None:
        m = self.model
        del m.configs[config]
        if m.experiment == config:
            m.experiment = None
        m.targets = [t for t in m.targets if t[0] != config]
        m.dropped.add(config)
        m.changed = True
        self.night(f"{config} dropped")

    def drop_online(self, *, load: bool = False) -> None:
        self.model.drop_online()
        self.night("the [online] table dropped", load=load)

    def target(self, config: str, goal: tuple[str, str]) -> None:
        if not any(t[:2] == (config, goal[0]) for t in self.model.targets):
            self.model.targets.append((config, *goal))
            self.model.changed = True
        self.night(f"a target {goal} of {config}")

    # ── the night and what it must end with ──────────────────────────────────────────────────

    def write_project(self) -> Path:
        path = self.folder / "evalplat.toml"
        path.write_text(
            self.model.project_text(
                self.folder,
                search_url=self.world.search.url,
                hook=f"{self.world.hook.url}/ok",
                judge_url=self.world.judge.url,
            ),
            encoding="utf-8",
        )
        return path

    def killed_night(self, what: str, point: str) -> None:
        """A night killed (SIGKILL) at crash ``point`` (``evalplat.db.faults``), in a process of
        its own, then the next night, uninterrupted, on the same project file: what the killed
        night recorded (read from the store) and what the next one does must together be what
        one whole night does."""
        self.nights += 1
        where = f"night {self.nights} ({what}, killed at {point})"
        quiet, self.model.changed = not self.model.changed, False
        self.model.judge_grades()
        self.model.end_online()
        path = self.write_project()
        before = self.ledger.live()
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVALPLAT_CRASH")}
        env["EVALPLAT_CRASH_AT"] = point
        command = "from evalplat.cli import main; main()"
        done = subprocess.run(
            [sys.executable, "-c", command, "nightly", "--project", str(path), "--db",
             self.db_url, "--json"],
            env=env, capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        output = done.stdout + done.stderr
        assert "Traceback" not in output, f"{where}: a traceback\n{output}"
        assert done.returncode in (-9, 0, 1, 3), f"{where}: exit {done.returncode}\n{output}"
        self.kills.append(done.returncode == -9)
        recorded = self._recorded(where)
        self.night(f"the night after night {self.nights}", killed=(before, recorded, quiet))

    def _recorded(self, where: str) -> list[tuple[str, Subject]]:
        """The alert events the store holds beyond the ledger's, entered in the ledger."""
        with Store.open(self.db_url) as store:
            alerts = store.list_alerts()
        found = []
        for alert in sorted(alerts, key=lambda a: a.id):
            assert alert.state != "pending", f"{where}: alert {alert.id} is pending"
            metric = None if alert.kind == "operational" else alert.metric
            subject: Subject = (alert.kind, alert.config, alert.test_set, metric)
            if alert.engine is not None:
                subject = engine_subject(alert.engine)
            assert self.ledger.subjects.setdefault(alert.id, subject) == subject, (
                f"{where}: alert {alert.id} changed subject to {subject}"
            )
            stored = ["opened"] + ([alert.state] if alert.state in CLOSING else [])
            history = self.ledger.events.setdefault(alert.id, [])
            assert stored[: len(history)] == history, f"{where}: alert {alert.id} {stored}"
            found += [(event, subject) for event in stored[len(history) :]]
            history[:] = stored
        return found

    def night(
        self,
        what: str,
        *,
        load: bool = False,
        killed: tuple[dict[Subject, int], list[tuple[str, Subject]], bool] | None = None,
    ) -> None:
        """Run a night and check it (module doc). ``killed``: this night follows one that was
        killed, whose live alerts before it, recorded events and quietness are given: the two
        are checked as one night."""
        self.nights += 1
        where = f"night {self.nights} ({what})"
        quiet, self.model.changed = not self.model.changed, False
        self.model.judge_grades()
        self.model.end_online()
        path = self.write_project()
        before, earlier = self.ledger.live(), list[tuple[str, Subject]]()
        if killed is not None:
            before, earlier, quiet = killed
        args = ("nightly", "--project", str(path), "--db", self.db_url, "--json")
        if load:
            with busy_core():
                result = self.world.cli(*args)
        else:
            result = self.world.cli(*args)
        output = result.stdout + result.stderr
        assert "Traceback" not in output, f"{where}: a traceback\n{output}"
        assert result.exit_code != 2, f"{where}: the project file was refused: {result.stderr}"
        steps = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        events = self._events(where, steps)
        if killed is not None:
            events = [*earlier, *events]
        self._check_events(where, before, events, quiet)
        self._check_code(where, result.exit_code, steps)
        self._check_store(where)
        self._check_channels(where)
        self._check_versions(where)
        self._check_figures(where, steps)
        self._check_index(where, steps)
        self._check_compare(where, steps)
        self._check_online(where, steps)

    def _events(self, where: str, steps: list[dict[str, Any]]) -> list[tuple[str, Subject]]:
        """Tonight's alert events, entered in the ledger: each alert opens once, ends at most
        once, and keeps its subject."""
        found = []
        for step in steps:
            if step["step"] != "alert":
                continue
            assert "error" not in step, f"{where}: an alert was not recorded: {step}"
            metric = None if step["kind"] == "operational" else step.get("metric")
            subject: Subject = (step["kind"], step["config"], step["testset"], metric)
            if "engine" in step:
                subject = engine_subject(step["engine"])
            alert, event = step["alert"], step["event"]
            assert self.ledger.subjects.setdefault(alert, subject) == subject, (
                f"{where}: alert {alert} changed subject to {subject}"
            )
            history = self.ledger.events.setdefault(alert, [])
            expected_before = [] if event == "opened" else ["opened"]
            assert history == expected_before, f"{where}: alert {alert} {event} after {history}"
            history.append(event)
            found.append((event, subject))
        return found

    def _check_events(
        self, where: str, before: dict[Subject, int], events: list[tuple[str, Subject]], quiet: bool
    ) -> None:
        expected = self.model.expected_open()
        planted: list[tuple[str, Subject]] = []
        for subject, state in expected.items():
            if state is True and subject not in before:
                planted.append(("opened", subject))
            elif state is False and subject in before:
                planted.append(("resolved", subject))
        planted += [("retired", s) for s in before if s not in expected]
        free = {s for s, state in expected.items() if state is None}
        got = Counter(e for e in events if e[1] not in free)
        assert got == Counter(planted), (
            f"{where}: alert events {sorted(got, key=str)}, expected {sorted(planted, key=str)}"
        )
        if quiet:
            opened = [s for e, s in events if e == "opened"]  # latency too, at any load
            assert not opened, f"{where}: nothing changed, yet {opened} opened"

    def _check_code(self, where: str, code: int, steps: list[dict[str, Any]]) -> None:
        """The exit code of the table: 3 beats 1 beats 0."""
        m = self.model
        accepted = self._accepted()
        waiting = m.hook_down and any(self.ledger.counts() - accepted)
        failed = m.remote and m.engine_down
        regressions = [s for s in self.ledger.live() if s[0] == "regression" and s[1] in m.configs]
        expected = 3 if failed or waiting else 1 if regressions else 0
        problems = [s for s in steps if "error" in s or s.get("status") == "failed"]
        assert code == expected, (
            f"{where}: exit {code}, expected {expected} (a run failed: {failed}, events "
            f"waiting: {waiting}, open regressions: {regressions}); problems: {problems}"
        )

    def _check_store(self, where: str) -> None:
        with Store.open(self.db_url) as store:
            states = {a.id: a.state for a in store.list_alerts()}
        assert set(states) == set(self.ledger.events), (
            f"{where}: the store has alerts {sorted(states)}, "
            f"the night told {sorted(self.ledger.events)}"
        )
        for alert, history in self.ledger.events.items():
            state = history[-1] if history[-1] in CLOSING else "open"
            assert states[alert] == state, f"{where}: alert {alert} is {states[alert]}, not {state}"

    def _accepted(self) -> Counter[tuple[int, str]]:
        return Counter(
            (a["alert_id"], a["event"])
            for r in self.world.hook.accepted("/ok")
            for a in r.body["alerts"]
        )

    def _check_channels(self, where: str) -> None:
        expected = self.ledger.counts()
        lines = (
            (self.folder / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
            if (self.folder / "alerts.jsonl").exists()
            else []
        )
        written = Counter((r["alert_id"], r["event"]) for r in map(json.loads, lines))
        assert written == expected, (
            f"{where}: alerts.jsonl holds {dict(written)}, not {dict(expected)}"
        )
        accepted = self._accepted()
        twice = [key for key, n in accepted.items() if n > 1]
        assert not twice, f"{where}: the webhook acted twice on {twice}"
        assert not accepted - expected, f"{where}: the webhook got {dict(accepted - expected)}"
        if not self.model.hook_down:
            assert accepted == expected, f"{where}: the webhook lacks {dict(expected - accepted)}"

    def _check_versions(self, where: str) -> None:
        """``config show`` names the version the file holds, a rollback's included."""
        for config in self.model.configs:
            shown = self.world.cli("config", "show", config, "--json", "--db", self.db_url)
            assert shown.exit_code == 0, f"{where}: config show {config}: {shown.stderr}"
            version = json.loads(shown.stdout)["version"]
            assert version == self.model.version_of(config), (
                f"{where}: config show {config} says v{version}, the file holds "
                f"v{self.model.version_of(config)}"
            )

    def _check_figures(self, where: str, steps: list[dict[str, Any]]) -> None:
        """One figure per fact: tonight's runs read the same on ``runs show`` and ``history``."""
        for step in steps:
            if step["step"] != "run" or step.get("status") != "complete":
                continue
            run, config, test_set = step["run"], step["config"], step["testset"]
            db = ("--json", "--db", self.db_url)
            shown = self.world.cli("runs", "show", str(run), *db)
            assert shown.exit_code == 0, f"{where}: runs show {run}: {shown.stderr}"
            history = self.world.cli("history", config, "--testset", test_set, *db)
            assert history.exit_code == 0, f"{where}: history {config}: {history.stderr}"
            rows = [r for r in json.loads(history.stdout) if r["run_id"] == run]
            assert len(rows) == 1, f"{where}: history {config} has {len(rows)} rows of run {run}"
            means = json.loads(shown.stdout)["means"]
            for metric in ("nDCG@10", "P@5", "RR@10"):
                figures = {means.get(metric), rows[0]["means"].get(metric)}
                assert len(figures) == 1, (
                    f"{where}: run {run}'s {metric} reads {figures} on runs show / history"
                )
            self._check_index_figure(where, config, test_set, run, means["nDCG@10"])

    def _check_index_figure(
        self, where: str, config: str, test_set: str, run: int, figure: float
    ) -> None:
        """The index row of ``config`` links tonight's run and shows its nDCG@10."""
        html = (self.folder / "site" / "index.html").read_text(encoding="utf-8")
        row = re.search(
            rf'<tr data-config="{config}" data-testset="{test_set}".*?</tr>', html, flags=re.S
        )
        assert row is not None, f"{where}: no index row of {config} on {test_set}"
        linked = re.search(r'href="runs/run-(\d+)\.html"', row.group(0))
        shown = re.search(r"nDCG@10 ([0-9.]+)", row.group(0))
        assert linked and int(linked.group(1)) == run, f"{where}: {config}'s row {row.group(0)}"
        assert shown and shown.group(1) == f"{figure:.4f}", (
            f"{where}: {config}'s row shows {shown and shown.group(1)}, runs show {figure:.4f}"
        )

    def _check_index(self, where: str, steps: list[dict[str, Any]]) -> None:
        page = read_index(self.folder / "site" / "index.html")
        live = self.ledger.live()
        shown = {int(a["data-alert-id"]) for a in page.alerts}
        assert shown == set(live.values()), (
            f"{where}: the index shows alerts {sorted(shown)}, open {sorted(live.values())}"
        )
        regressed = {(s[1], s[2]) for s in live if s[0] == "regression"}
        verdicts = {
            (s["config"], s["testset"]): s["verdict"] for s in steps if s["step"] == "compare"
        }
        for row in page.rows:
            key = (row["data-config"], row["data-testset"])
            assert key[0] not in self.model.dropped, f"{where}: the index lists dropped {key[0]}"
            assert self.model.online or key[1] != "online", (
                f"{where}: the index lists {key} live, the [online] table is gone"
            )
            alerted = key in regressed
            assert (row["data-verdict"] == "regression") == alerted, (
                f"{where}: index row {key} says {row['data-verdict']!r} while "
                f"{'a' if alerted else 'no'} regression alert is open"
            )
            if key in verdicts:
                assert row["data-verdict"] == verdicts[key], (
                    f"{where}: index row {key} says {row['data-verdict']!r}, the night "
                    f"{verdicts[key]!r}"
                )

    def _check_compare(self, where: str, steps: list[dict[str, Any]]) -> None:
        """``compare`` of the night's pair, with the project's thresholds, gives its verdicts."""
        gated = [g for g, s in self.model.all_gates() if s is None and g not in UNPREDICTED]
        for step in steps:
            if step["step"] != "compare" or step["config"] not in self.model.configs:
                continue
            args = [str(step["baseline_run"]), str(step["candidate_run"]), "--max-drop", "0.01"]
            for metric in gated:
                args += ["--metric", metric, "--gate", metric]
            result = self.world.cli("compare", *args, "--json", "--db", self.db_url)
            assert result.exit_code == 0, f"{where}: compare {args}: {result.stderr}"
            verdicts = {m["metric"]: m["verdict"] for m in json.loads(result.stdout)["metrics"]}
            night = {m: v for m, v in step["verdicts"].items() if m in gated}
            assert {m: verdicts[m] for m in night} == night, (
                f"{where}: compare of runs {step['baseline_run']} → {step['candidate_run']} "
                f"says {verdicts}, the night {step['verdicts']}"
            )

    def _check_online(self, where: str, steps: list[dict[str, Any]]) -> None:
        """The A/B comparisons of the night: the latest A/B day's arms of the project, each
        against the version of ``prod`` that served that day."""
        m = self.model
        compared = [s for s in steps if s["step"] == "online_compare"]
        if not m.online or not m.served:
            assert not compared, f"{where}: A/B comparisons without an [online] table: {compared}"
            return
        day = max(m.served)
        arms = m.served[day]
        expected = {f"{arm}@{v}" for arm, v in arms.items() if arm != "prod" and arm in m.configs}
        assert {s["candidate"] for s in compared} == expected, (
            f"{where}: A/B comparisons {compared}, expected day {day}'s arms {sorted(expected)}"
        )
        control = f"prod@{arms['prod']}"
        for step in compared:
            assert (step["day"], step["baseline"]) == (f"2026-03-{day:02d}", control), (
                f"{where}: an A/B comparison of {step['day']} against {step['baseline']}, "
                f"expected day {day} against {control}, which served it"
            )


# ── the search, on each database ─────────────────────────────────────────────────────────────


@pytest.fixture
def world(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], sqlite_template: Path
) -> Iterator[World]:
    def fresh_db(folder: Path) -> str:
        if db_url.startswith("sqlite"):
            shutil.copyfile(sqlite_template, folder / "evalplat.db")
            return f"sqlite:///{folder / 'evalplat.db'}"
        _empty_tables(db_url)
        return db_url

    with search_server() as search, chat_server() as judge:
        hook = HookServer()
        with serving(hook, poll=0.05):
            yield World(tmp_path, fresh_db, cli, search, hook, judge)
            hook.release.set()


SEARCH = settings(
    max_examples=4,
    stateful_step_count=5,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # a night is too slow to shrink
)


def test_the_season_as_a_search(world: World) -> None:
    SeasonSearch.world = world
    run_state_machine_as_test(SeasonSearch, settings=SEARCH)


# ── pinned seasons: defects of issue 53 (and 54) fixed on main, as rule sequences ─────────────


@pytest.fixture
def season(world: World) -> SeasonSearch:
    SeasonSearch.world = world
    return SeasonSearch()  # its first night is behind it


def test_a_target_on_a_measure_that_reads_no_judgments_is_judged_like_any_other(
    season: SeasonSearch,
) -> None:
    """Issue 53, item 1: a target on Coverage or ZeroResult crashed the night (exit 1, no
    reports, no delivery), and ``compare --target "ZeroResult<=0.01"`` printed a traceback."""
    season.target("prod", ("Coverage", "min = 0.99"))
    season.target("prod", ("ZeroResult", "max = 0.01"))
    season.target("prod", ("Latency(p=95)", "max = 60000"))
    season.change("prod", "empty")  # both targets missed, the gate regressed: exit 1
    season.change("prod", "good")  # all three resolve
    result = season.world.cli("compare", "1", "prod@latest", "--metric", "nDCG@10",
                              "--target", "ZeroResult<=0.01", "--db", season.db_url)  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "ZeroResult<=0.01" in result.stdout and "Traceback" not in result.stdout


def test_a_rollback_moves_the_name_back(season: SeasonSearch) -> None:
    """Issue 53, item 4: the file back at version 1's content leaves ``prod`` at version 1 on
    ``config show`` (checked after every night) and on ``runs show prod@latest``."""
    season.change("prod", "bad")
    season.roll_back("prod", "good")
    shown = season.world.cli("runs", "show", "prod@latest", "--json", "--db", season.db_url)
    assert json.loads(shown.stdout)["config_version"] == 1, shown.stdout


def test_history_of_a_segment_no_query_has_is_refused_and_writes_nothing(
    season: SeasonSearch,
) -> None:
    """Issue 54, item 7: a refused ``history --segment`` left a row behind."""
    before = table_counts(season.db_url)
    result = season.world.cli("history", "prod", "--segment", "nosuchtag", "--db", season.db_url)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "nosuchtag" in lines[0], lines
    assert table_counts(season.db_url) == before


def test_an_outage_opens_one_alert_and_a_failed_night_reads_as_not_scored(
    season: SeasonSearch,
) -> None:
    """Issue 53, items 18 and 19: an engine outage opens one alert, for the config whose engine
    is down, not one per config; ``history`` shows its failed night as not scored, not
    ``vNone``."""
    season.add_a_config("good")
    season.engine_down_or_back()  # exit 3, one operational alert (the model expects one)
    history = season.world.cli("history", "remote", "--db", season.db_url)
    assert history.exit_code == 0 and "vNone" not in history.stdout, history.stdout
    season.engine_down_or_back()  # resolved


def test_a_segment_alert_keeps_its_brackets_in_alerts_list(season: SeasonSearch) -> None:
    """Issue 53, item 12: ``alerts list`` swallowed ``[segment tail]`` as markup."""
    season.add_a_gate(("nDCG@10", "tail"))
    season.change("prod", "bad")
    listed = season.world.cli("alerts", "list", "--db", season.db_url)
    assert "nDCG@10 [segment tail]" in listed.stdout, listed.stdout


def test_a_channel_down_keeps_its_events_until_it_is_back(season: SeasonSearch) -> None:
    """A webhook receiver down while an alert opens: exit 3 while the event waits, delivered
    once when it is back."""
    season.channel_down_or_back()
    season.change("prod", "bad")
    season.quiet_night(load=False)
    season.channel_down_or_back()


def test_a_quiet_night_on_a_busy_machine_opens_nothing(season: SeasonSearch) -> None:
    """Issue 53, items 2 and 17: with a latency gate, a night on a loaded machine opened a
    Latency(p=95) alert; both versions are now timed together, so load moves both alike."""
    season.add_a_gate(("Latency(p=95)", None))
    season.quiet_night(load=True)


@pytest.mark.parametrize("point", ["commit:9", "delivered:1"])
def test_a_night_killed_mid_way_and_the_next_make_one_night(
    season: SeasonSearch, point: str
) -> None:
    """Issue 53: a SIGKILL mid-night, then the next night: each alert opened once and
    delivered once per key, the store and the channels agreeing, as after one whole night."""
    season.add_a_gate(("RR@10", None))
    season.kill("prod", "bad", point)
    season.kill("prod", "good", point)
    assert season.kills == [True, True]


def test_model_grades_move_no_figure_on_any_surface(season: SeasonSearch) -> None:
    """Issue 53, item 5: with a nightly judge adding model grades, one run read three figures
    (its comparison, the index and ``history``, ``runs show``). The judge grades prod's new
    ``yN``, which the gates leave out: prod's nDCG@10 and P@5 still need judgments, and every
    surface reads the people's figure."""
    season.judge_on_or_off()
    season.change("prod", "fresh")
    assert season.model.judged == set(TOPICS)
    asked = {doc for doc, _, _ in season.world.judge.requests}
    assert asked == {f"y{n}" for n in TOPICS}, sorted(asked)
    season.judge_on_or_off()
    season.quiet_night(load=False)


def test_rated_grades_settle_what_needs_judgments(season: SeasonSearch) -> None:
    """``evalplat rate``: prod's new ``yN`` need judgments; a person grades them in the app,
    the task is closed, and the next night the gates are unchanged again."""
    season.change("prod", "fresh")
    live = season.ledger.live()
    assert ("needs_judgments", "prod", "topics", "nDCG@10") in live, live
    season.rate("prod")
    live = season.ledger.live()
    assert ("needs_judgments", "prod", "topics", "nDCG@10") not in live, live


def test_pairs_only_the_judge_graded_are_offered_to_people(season: SeasonSearch) -> None:
    """The judge grades prod's new ``yN``; ``rate task --from-run`` still offers every one of
    them to people (a model's grade is not a person's), and once a person graded them the gates
    that needed judgments are unchanged again, the judge's grades kept beside."""
    season.judge_on_or_off()
    season.change("prod", "fresh")
    assert season.model.judged == set(TOPICS)
    assert season.rateable() == ["prod"]
    season.rate("prod")  # every yN: 30 pairs, each graded by the judge alone
    live = season.ledger.live()
    assert ("needs_judgments", "prod", "topics", "nDCG@10") not in live, live


def test_an_arm_whose_days_flap_opens_one_alert_under_two_of_three(season: SeasonSearch) -> None:
    """Issue 57: the online gates carry 2 of 3 and 2 clear days; an arm that loses clicks on
    days 1, 2, 4 and 5 and is alike on day 3 opens one alert (on day 2) and keeps it open,
    where each day alone would open, resolve and open it again; two alike days resolve it."""
    season.confirm_online_gates((2, 3, 2))
    season.add_a_config("good")
    for drop in (True, True, False, True, True, False, False):
        season.ab_day({"new1": drop})
    assert season.histories(("regression", "new1", "online", "online:CTR")) == [
        ["opened", "resolved"]
    ]


def test_an_arm_that_ends_retires_its_alert_once(season: SeasonSearch) -> None:
    """Online days: an A/B arm loses clicks (its alert opens, exit 1), is alike the next day
    (resolved), loses clicks again (a second alert), then gets no traffic: two days on, its
    alert is retired, once; a later day opens nothing for it."""
    season.add_a_config("good")
    season.ab_day({"new1": True})
    season.ab_day({"new1": False})
    season.ab_day({"new1": True})
    season.ab_day({})
    season.ab_day({})
    assert "new1" in season.model.ab_ended
    season.ab_day({})
    assert season.histories(("regression", "new1", "online", "online:CTR")) == [
        ["opened", "resolved"],
        ["opened", "retired"],
    ]


def test_an_interleaved_log_with_an_empty_ranker_is_taken_whole_and_judged(
    season: SeasonSearch,
) -> None:
    """Issue 53, items 6 and 7: ``evalplat.interleave``'s own lists, where one ranker returned
    nothing, import whole; the candidate returning nothing loses (the Preference alert opens),
    the baseline returning nothing leaves it the winner (resolved); the experiment's traffic
    ends while A/B days go on, and its alert, opened again, is retired once."""
    season.add_a_config("good")
    season.interleave("new1", "candidate")
    season.interleave("new1", "baseline")
    season.interleave("new1", "candidate")
    season.ab_day({})
    season.ab_day({})
    assert "new1" in season.model.il_ended
    assert season.histories(("regression", "new1", "online", "online:Preference")) == [
        ["opened", "resolved"],
        ["opened", "retired"],
    ]


def test_one_engine_down_under_two_configs_opens_one_alert(season: SeasonSearch) -> None:
    """Issue 53, item 18: one engine outage opened one alert per config on it. Two configs on
    the search server, the server down: one alert, the engine's, naming both configs, opened
    once and delivered once per channel (the night's checks); a config dropped meanwhile
    leaves it open; resolved once when the engine answers again."""
    season.second_remote_on_or_off()  # remote2 added beside remote
    season.engine_down_or_back()  # exit 3, one alert: the model expects the engine's alone
    lines = (season.folder / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    outages = [r for r in map(json.loads, lines) if r["kind"] == "operational"]
    engine = season.model.engine
    assert [(r["event"], r["title"], r["configs"]) for r in outages] == [
        ("opened", f"Run failed: engine {engine} down: configs remote, remote2 failed",
         ["remote", "remote2"]),
    ], outages  # fmt: skip
    season.second_remote_on_or_off()  # remote2 dropped: the engine is still down under remote
    season.engine_down_or_back()  # resolved
    lines = (season.folder / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    events = [
        (r["event"], r["title"]) for r in map(json.loads, lines) if r["kind"] == "operational"
    ]
    assert events[1:] == [("resolved", f"Recovered: engine {engine}")], events


def test_a_rollback_of_the_control_while_a_b_logs_exist(season: SeasonSearch) -> None:
    """Issue 53: ``prod`` rolled back after days of A/B logs. The rolled-back-to version served
    only older days; the night compared its last day again, against the arm's old verdict (the
    open alert resolved with no new day). The latest day stays the one compared, against the
    version that served it, until a new day comes, served by the version now current."""
    season.add_a_config("good")
    season.ab_day({"new1": False})  # served by prod@1
    season.change("prod", "bad")  # prod@2
    season.ab_day({"new1": True})  # served by prod@2: new1's alert opens
    season.roll_back("prod", "good")  # prod@1 again: day 2 is still the one compared
    assert season.histories(("regression", "new1", "online", "online:CTR")) == [["opened"]]
    with Store.open(season.db_url) as store:  # and the Offline vs online page's Δ takes it
        assert _control_version(store, "prod") == "prod@2"
    season.ab_day({"new1": False})  # served by prod@1: resolved
    assert season.model.served == {1: {"prod": 1, "new1": 1}, 2: {"prod": 2, "new1": 1},
                                   3: {"prod": 1, "new1": 1}}  # fmt: skip
    assert season.histories(("regression", "new1", "online", "online:CTR")) == [
        ["opened", "resolved"]
    ]


def test_dropping_the_online_table_retires_every_online_alert_once(season: SeasonSearch) -> None:
    """Issue 53: with the ``[online]`` table gone from the file, the control's ``online`` row
    stayed live on the index. Each config's ``online`` pair is now among the pairs a night
    runs: the table's going ends them, the index moves the rows to "Ended" and the night
    retires every online alert once, with the same words; a later day opens none again."""
    season.add_a_config("good")
    season.add_a_config("good")
    season.ab_day({"new1": True})
    season.interleave("new2", "candidate")
    live = season.ledger.live()
    online = [s for s in live if s[2] == "online"]
    assert sorted(online) == [
        ("regression", "new1", "online", "online:CTR"),
        ("regression", "new2", "online", "online:Preference"),
    ], live
    season.drop_online()
    for subject in online:
        assert season.histories(subject) == [["opened", "retired"]]
    with Store.open(season.db_url) as store:
        notes = {a.note for a in store.list_alerts() if a.test_set == "online"}
    assert notes == {"the [online] table is no longer in evalplat.toml"}, notes
    html = (season.folder / "site" / "index.html").read_text(encoding="utf-8")
    assert 'data-ended-config="prod" data-ended-testset="online"' in html
    assert "the [online] table is no longer in evalplat.toml" in html
    season.ab_day({})  # the table is back, prod alone: nothing of the arms that ended opens
    for subject in online:
        assert season.histories(subject) == [["opened", "retired"]]
