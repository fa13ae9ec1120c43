"""A night's comparisons in a second process: the same night as comparing here, and nothing
lost when that process dies."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly import compare_beside
from evalplat.nightly.compare_beside import Finishing
from evalplat.nightly.job import NightlyOutcome, run_nightly
from evalplat.nightly.project import Project, load_project
from evalplat.reports import render_site
from evalplat.reports.page_keys import PageKeys
from evalplat.store import Store

from .small_project import write_project

# three configs: ``beta`` regresses on the second night
NIGHTS = [
    {"alpha": "good", "beta": "good", "gamma": "first15"},
    {"alpha": "good", "beta": "bad", "gamma": "first15"},
]


def _season(folder: Path, db_url: str) -> tuple[list[NightlyOutcome], list[list[dict[str, Any]]]]:
    outcomes, logs = [], []
    for modes in NIGHTS:
        steps: list[dict[str, Any]] = []
        project = load_project(write_project(folder, modes, reports='dir = "site"'))
        outcomes.append(run_nightly(project, db_url=db_url, log=steps.append))
        logs.append(steps)
    return outcomes, logs


def _facts(outcome: NightlyOutcome) -> tuple[object, ...]:
    """What a night decided, without the ids the database gave its rows."""
    comparisons = [(c["config"], c["verdict"], c["metrics"]) for c in outcome.comparisons]
    alerts = sorted((a["kind"], a["event"], a["config"], a["metric"]) for a in outcome.alerts)
    return outcome.exit_code, comparisons, alerts, [r["status"] for r in outcome.runs]


def comparing_beside(monkeypatch: pytest.MonkeyPatch) -> list[Finishing]:
    """Every night compares in a second process from now on (on any machine, whatever its
    size); returns the nights' ``Finishing``s as they are made."""
    monkeypatch.setattr(compare_beside, "BESIDE_QUERIES", 0)
    monkeypatch.setattr(compare_beside, "cores", lambda: 2)
    made: list[Finishing] = []
    real = Finishing.of_night.__func__  # type: ignore[attr-defined]

    def of_night(cls: type[Finishing], *args: Any) -> Finishing:
        finishing: Finishing = real(cls, *args)
        made.append(finishing)
        return finishing

    monkeypatch.setattr(Finishing, "of_night", classmethod(of_night))
    return made


def _taken_ahead(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages the site writes as they were rendered ahead, from now on."""
    taken: list[str] = []
    real = PageKeys.take_ahead

    def spied(self: PageKeys, path: str, material: object) -> bool:
        took = real(self, path, material)
        if took:
            taken.append(path)
        return took

    monkeypatch.setattr(PageKeys, "take_ahead", spied)
    return taken


@pytest.fixture
def here(tmp_path: Path) -> list[tuple[object, ...]]:
    """The two nights with every comparison made in the night's own process (SQLite)."""
    outcomes, _ = _season(tmp_path / "here", f"sqlite:///{tmp_path / 'here.db'}")
    return [_facts(outcome) for outcome in outcomes]


def test_comparisons_beside_make_the_same_nights(
    db_url: str,
    tmp_path: Path,
    here: list[tuple[object, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = comparing_beside(monkeypatch)
    taken = _taken_ahead(monkeypatch)
    outcomes, logs = _season(tmp_path / "beside", db_url)
    assert [finishing.sent for finishing in made] == [3, 3]  # every comparison went beside
    assert [_facts(outcome) for outcome in outcomes] == here
    # the second process rendered the comparisons' pages, and the site wrote them as they were
    assert [len(finishing.ahead) for finishing in made] == [0, 3]
    assert sorted(taken) == sorted(page.path for page in made[1].ahead)
    with Store.open(db_url) as store:
        fresh = render_site(store, tmp_path / "fresh").parent
    for page in made[1].ahead:
        site = tmp_path / "beside" / "site"
        assert (site / page.path).read_bytes() == (fresh / page.path).read_bytes()
    assert outcomes[1].exit_code == 1
    assert [(a["config"], a["event"]) for a in outcomes[1].alerts] == [("beta", "opened")]
    # the second process's log lines reach the night's log, each config's after its run
    steps = [(s["step"], s.get("config")) for s in logs[1] if s["step"] in ("run", "compare")]
    for config in NIGHTS[1]:
        assert steps.count(("compare", config)) == 1
        assert steps.index(("run", config)) < steps.index(("compare", config))


def test_a_second_process_that_dies_loses_no_comparison(
    tmp_path: Path, here: list[tuple[object, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    made = comparing_beside(monkeypatch)
    real: Callable[..., Any] = Finishing._submit

    def submit_and_kill(self: Finishing, *args: Any) -> Any:
        future = real(self, *args)
        if future is not None and self.pool is not None:  # killed before it could compare
            for process in list(self.pool._processes.values()):  # type: ignore[attr-defined]
                os.kill(process.pid, signal.SIGKILL)
        return future

    monkeypatch.setattr(Finishing, "_submit", submit_and_kill)
    outcomes, _ = _season(tmp_path / "killed", f"sqlite:///{tmp_path / 'killed.db'}")
    assert [finishing.sent for finishing in made] == [0, 0]
    assert [_facts(outcome) for outcome in outcomes] == here


def test_a_small_night_a_store_in_memory_or_an_own_measure_compares_here(tmp_path: Path) -> None:
    from evalplat.nightly.prep import load_test_sets
    from evalplat.store import Store

    project = load_project(write_project(tmp_path / "p", NIGHTS[0]))
    contents = load_test_sets(project, lambda _entry: None)
    with Store.init(f"sqlite:///{tmp_path / 'file.db'}") as store:
        assert Finishing.of_night(store, project, contents, NightlyOutcome()).url is None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare_beside, "BESIDE_QUERIES", 0)
        patch.setattr(compare_beside, "cores", lambda: 2)
        with Store.init(f"sqlite:///{tmp_path / 'file2.db'}") as store:
            assert Finishing.of_night(store, project, contents, NightlyOutcome()).url is not None
        with Store.init("sqlite://") as memory:
            assert Finishing.of_night(memory, project, contents, NightlyOutcome()).url is None
        # a measure the calling program registered: a fresh process would not know it
        from evalplat.metrics import registry
        from evalplat.metrics.model import Measure

        patch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
        patch.setattr(registry, "_LOOKUP", dict(registry._LOOKUP))
        registry.register(
            Measure(
                name="TeamScore", description="a team's own", formula="x", cutoff="none",
                compute="evalplat.metrics.gain:ndcg", inputs=("judgments",),
            )
        )  # fmt: skip
        with Store.init(f"sqlite:///{tmp_path / 'file3.db'}") as store:
            assert Finishing.of_night(store, project, contents, NightlyOutcome()).url is None


def _first_night(folder: Path) -> tuple[str, Project]:
    """An SQLite store after the first night of the small project (compared here)."""
    url = f"sqlite:///{folder / 'night.db'}"
    project = load_project(write_project(folder / "p", NIGHTS[0]))
    assert run_nightly(project, db_url=url).exit_code == 0
    return url, project


def test_a_comparison_that_fails_beside_fails_its_config_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import Future

    from evalplat.nightly.config_night import ConfigNight
    from evalplat.nightly.prep import load_test_sets

    url, project = _first_night(tmp_path)
    contents = load_test_sets(project, lambda _entry: None)
    with Store.open(url) as store:
        # what the second process sends back when its comparison fails: no test set version 9
        monkeypatch.setattr(compare_beside, "_STORE", [store])
        run = store.run_info(1)
        entries, result, error, page = compare_beside._compare(
            project, run.config, "topics", run, frozenset(), 9
        )
        assert result is None and error is not None and error.startswith("NotFoundError: ")
        assert page is None
        # ... and what the night makes of it: that config failed, its outage alert opened
        steps: list[dict[str, Any]] = []
        spec = next(spec for spec in project.configs if spec.name == run.config)
        night = ConfigNight(store, project, spec, "topics", [], steps.append)
        night.done = run
        outcome = NightlyOutcome()
        finishing = Finishing(url, outcome)
        future: Future[compare_beside.Compared] = Future()
        future.set_result((entries, result, error, page))
        finishing.pending.append((night, 9, contents, future))
        finishing.close()
    assert outcome.exit_code == 3
    assert [(s["step"], s["config"], s["error"]) for s in steps if "error" in s] == [
        ("failed", run.config, error)
    ]
    assert [(a["kind"], a["event"], a["config"]) for a in outcome.alerts] == [
        ("operational", "opened", run.config)
    ]


def test_a_page_that_cannot_be_rendered_beside_is_left_to_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from evalplat.reports import site

    url, _ = _first_night(tmp_path)
    with Store.open(url) as store:
        monkeypatch.setattr(compare_beside, "_STORE", [store])
        monkeypatch.setattr(compare_beside, "_PAGES", [None])
        stored = SimpleNamespace(id=12345)  # a comparison the store does not hold
        assert compare_beside._page_ahead(stored) is None  # type: ignore[arg-type]

        def broken(*args: Any) -> Any:
            raise RuntimeError("the page could not be made")

        monkeypatch.setattr(site, "comparison_page_ahead", broken)
        assert compare_beside._page_ahead(SimpleNamespace(id=1)) is None  # type: ignore[arg-type]
        assert compare_beside._page_ahead(None) is None
