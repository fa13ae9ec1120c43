"""What a team receives from its nights: one message per channel and night, every kind of alert
opened once and resolved once, links that work away from the machine, nothing lost when a
config or the reports dir fails."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from .small_project import write_project

Night = Callable[..., tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(modes: dict[str, str], **options: Any) -> tuple[int, list[dict[str, Any]]]:
        path = write_project(tmp_path / "project", modes, hook=f"{capture.url}/ok", **options)
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    return run


def alerts_of(capture: CaptureServer) -> list[list[tuple[str, str, str]]]:
    """Per accepted request: (kind, event, config) of each alert it lists."""
    return [
        [(a["kind"], a["event"], a["config"]) for a in request.body["alerts"]]
        for request in capture.accepted("/ok")
    ]


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_one_message_per_night_lists_every_opened_and_resolved_alert(
    night: Night, capture: CaptureServer
) -> None:
    assert night({"alpha": "good", "beta": "good", "gamma": "good"})[0] == 0
    assert night({"alpha": "bad", "beta": "bad", "gamma": "good"})[0] == 1
    assert alerts_of(capture) == [
        [("regression", "opened", "alpha"), ("regression", "opened", "beta")]
    ]
    [request] = capture.accepted("/ok")
    assert request.body["title"] == "evalplat: 2 regressions opened"
    assert night({"alpha": "bad", "beta": "bad", "gamma": "good"})[0] == 1  # nothing new
    assert len(capture.received("/ok")) == 1
    assert night({"alpha": "good", "beta": "bad", "gamma": "bad"})[0] == 1
    assert alerts_of(capture)[1] == [
        ("regression", "resolved", "alpha"),
        ("regression", "opened", "gamma"),
    ]


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_needs_judgments_has_its_own_alert_opened_once_and_resolved_once(
    night: Night, capture: CaptureServer
) -> None:
    assert night({"alpha": "good"})[0] == 0
    code, steps = night({"alpha": "unjudged"})
    verdict = next(s for s in steps if s["step"] == "compare")["verdicts"]["nDCG@10"]
    assert verdict == "needs_judgments"
    assert code == 0  # not a confirmed regression
    night({"alpha": "unjudged"})
    assert night({"alpha": "good"})[0] == 0
    assert alerts_of(capture) == [
        [("needs_judgments", "opened", "alpha")],
        [("needs_judgments", "resolved", "alpha")],
    ]
    opened = capture.accepted("/ok")[0].body["alerts"][0]
    assert opened["title"] == "Needs judgments: nDCG@10 of alpha on topics"
    assert "evalplat unjudged" in capture.accepted("/ok")[0].body["text"]


def test_a_backend_down_is_isolated_alerted_once_per_outage_and_resolved(
    night: Night, capture: CaptureServer, tmp_path: Path
) -> None:
    assert night({"alpha": "good", "beta": "good"})[0] == 0
    code, steps = night({"alpha": "down", "beta": "bad"})
    assert code == 3  # 3 beats 1: beta's regression is alerted all the same
    assert any(s["step"] == "failed" and s["config"] == "alpha" for s in steps)
    assert any(s["step"] == "report" and "path" in s for s in steps)
    assert alerts_of(capture) == [
        [("operational", "opened", "alpha"), ("regression", "opened", "beta")]
    ]
    failed = capture.accepted("/ok")[0].body["alerts"][0]
    assert failed["title"] == "Run failed: alpha on topics"
    assert "connection refused by the search backend" in failed["error"]
    index = (tmp_path / "project" / "site" / "index.html").read_text(encoding="utf-8")
    assert "run failed" in index and "connection refused by the search backend" in index
    assert night({"alpha": "down", "beta": "bad"})[0] == 3  # the same outage: no new message
    assert len(capture.received("/ok")) == 1
    assert night({"alpha": "good", "beta": "bad"})[0] == 1
    assert alerts_of(capture)[1] == [("operational", "resolved", "alpha")]
    assert alerts_of(capture)[1][0][2] == "alpha"


def test_links_use_the_reports_base_url(
    night: Night, capture: CaptureServer, tmp_path: Path
) -> None:
    base = 'dir = "site"\nbase_url = "https://search.example.com/evalplat/"'
    night({"alpha": "good"}, reports=base)
    night({"alpha": "bad"}, reports=base)
    [request] = capture.accepted("/ok")
    [alert] = request.body["alerts"]
    assert alert["report"].startswith("https://search.example.com/evalplat/compare/compare-")
    assert alert["report"].endswith(".html")
    page = alert["report"].removeprefix("https://search.example.com/evalplat/")
    assert (tmp_path / "project" / "site" / page).is_file()  # the page the URL serves


def test_a_reports_dir_failing_mid_night_loses_no_alert(
    night: Night, capture: CaptureServer, tmp_path: Path
) -> None:
    assert night({"alpha": "good"})[0] == 0
    site = tmp_path / "project" / "site"
    code, steps = night({"alpha": "bad"}, extra=f'replace_with_file = "{site}"')
    assert code == 3
    assert any(s["step"] == "report" and "error" in s for s in steps)
    assert alerts_of(capture) == [[("regression", "opened", "alpha")]]


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_a_dead_channel_keeps_the_alert_for_the_next_night(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    good = write_project(tmp_path / "a", {"alpha": "good"}, hook=f"{capture.url}/bad")
    bad = write_project(tmp_path / "b", {"alpha": "bad"}, hook=f"{capture.url}/bad")
    assert run_nightly(load_project(good), db_url=db_url).exit_code == 0
    # 3 beats 1: the regression is confirmed, but its alert did not reach the channel
    assert run_nightly(load_project(bad), db_url=db_url).exit_code == 3
    with Store.open(db_url) as store:
        [waiting] = store.outbox("pending")
    assert waiting.event == "opened" and waiting.error is not None
    fixed = write_project(tmp_path / "b", {"alpha": "bad"}, hook=f"{capture.url}/ok")
    steps: list[dict[str, Any]] = []
    assert run_nightly(load_project(fixed), db_url=db_url, log=steps.append).exit_code == 1
    [request] = capture.accepted("/ok")
    assert [a["idempotency_key"] for a in request.body["alerts"]] == [waiting.idempotency_key]
    with Store.open(db_url) as store:
        assert store.outbox("pending") == []
    assert json.dumps([s for s in steps if s["step"] == "deliver"]).count('"sent"') == 1


def test_a_base_url_that_is_not_a_web_address_is_refused(tmp_path: Path) -> None:
    from evalplat.errors import InputError

    path = write_project(tmp_path, {"alpha": "good"}, reports='dir = "site"\nbase_url = "site/"')
    with pytest.raises(
        InputError, match=r"evalplat.toml line \d+: \[reports\] key 'base_url': must"
    ):
        load_project(path)


def engine_project(folder: Path, search_url: str, hook: str, paths: dict[str, str]) -> Path:
    """Configs that search one http engine (the season's search server), each reading its
    hits at ``paths[name]`` (a wrong path fails every query of that config alone)."""
    from .season_world import write_testsets

    write_testsets(folder)
    configs = "".join(
        f'\n[[configs]]\nname = "{name}"\nsearcher = "http"\ntestsets = ["catalog"]\n'
        f'[configs.params]\nurl = "{search_url}"\nresults_path = "{path}"\nretries = 0\n'
        'query_params = { q = "{{ query }}", n = "{{ depth }}" }\n'
        for name, path in paths.items()
    )
    text = (
        '[[testsets]]\nname = "catalog"\nqrels = "catalog-qrels.txt"\nqueries = "catalog.tsv"\n'
        f'{configs}\n[[alerts]]\ntype = "webhook"\nurl = "{hook}"\n\n[reports]\ndir = "site"\n'
    )
    (folder / "evalplat.toml").write_text(text, encoding="utf-8")
    return folder / "evalplat.toml"


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_configs_on_one_engine_share_its_outage_and_keep_their_own_failures(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    """Issue 53, item 18: the engine down under three configs is one alert, the engine's; a
    config that fails while the engine answers (its hits read at a wrong path) has its own."""
    from .season_world import search_server

    with search_server() as search:
        engine = search.url.removesuffix("/search")

        def night(paths: dict[str, str]) -> int:
            path = engine_project(tmp_path / "p", search.url, f"{capture.url}/ok", paths)
            return run_nightly(load_project(path), db_url=db_url).exit_code

        broken = {"a": "results", "b": "results", "c": "nowhere"}
        assert night(broken) == 3  # the engine answered a and b: c's failure is its own
        assert alerts_of(capture) == [[("operational", "opened", "c")]]
        search.failing = True
        assert night(broken) == 3
        assert night(broken) == 3  # the same outage: nothing new
        assert alerts_of(capture)[1:] == [[("operational", "opened", "a")]]
        down = capture.accepted("/ok")[1].body["alerts"][0]
        assert (down["engine"], down["configs"]) == (engine, ["a", "b", "c"])
        assert down["title"] == f"Run failed: engine {engine} down: configs a, b, c failed"
        assert down["error"].startswith(f"engine {engine} down: configs a, b, c failed; ")
        search.failing = False
        assert night({**broken, "c": "results"}) == 0
        assert sorted(alerts_of(capture)[2]) == [
            ("operational", "resolved", "a"),  # the engine's, filed under a
            ("operational", "resolved", "c"),
        ]
        with Store.open(db_url) as store:
            alerts = {(a.engine, a.config): a.state for a in store.list_alerts()}
        assert alerts == {(engine, "a"): "resolved", (None, "c"): "resolved"}
