"""One rule set for one question: which gates decide a pair of runs. ``compare`` in a project
directory (or with ``--project``) applies the project's ``[[gates]]``; without gates a night
gates what ``compare`` gates; the leaderboard's verdicts are ``compare``'s and its default
baseline is production (the config the others are gated against)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.comparison.thresholds import default_gates
from evalplat.errors import InputError
from evalplat.nightly.project import load_project
from evalplat.store import Store

from .helpers import content, good_rankings, store_run

PROJECT = """
[[testsets]]
name = "small"
qrels = "qrels.txt"

[[configs]]
name = "prod"
searcher = "builtin"
testsets = ["small"]

[[configs]]
name = "cand"
searcher = "builtin"
testsets = ["small"]
compare_to = "prod"

[metrics]
names = ["nDCG@10", "P@5", "AP", "Judged@10", "Latency"]
{gates}{nightly}
[online]
baseline = "prod"
metrics = ["online:CTR", "online:MRR"]
"""


def _project(tmp_path: Path, gates: str = "", nightly: str = "") -> Path:
    (tmp_path / "qrels.txt").write_text("q00 0 q00-d0 1\n", encoding="utf-8")
    path = tmp_path / "evalplat.toml"
    path.write_text(PROJECT.format(gates=gates, nightly=nightly), encoding="utf-8")
    return path


def test_without_gates_a_project_gates_what_compare_gates(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path))
    gated = [g.metric for g in project.gates_for("small")]
    assert gated == [g.metric for g in default_gates(project.metrics_for("small"))]
    assert gated == ["nDCG@10", "P@5", "AP"]  # not Judged@10, not latency
    assert [g.metric for g in project.ab_gates()] == ["online:CTR", "online:MRR"]
    assert project.fail_on == ("production", "outage")
    assert project.fails_on("prod") and not project.fails_on("cand")


def test_stated_gates_replace_the_default_and_fail_on_is_the_teams_choice(
    tmp_path: Path,
) -> None:
    gates = '[[gates]]\nmetric = "AP"\nmax_drop = 0.01\n'
    nightly = '[nightly]\nfail_on = ["experiment"]\n'
    project = load_project(_project(tmp_path, gates, nightly))
    assert [g.metric for g in project.gates_for("small")] == ["AP"]
    assert [g.metric for g in project.ab_gates()] == ["online:CTR", "online:MRR"]
    assert project.fails_on("cand") and not project.fails_on("prod")
    with pytest.raises(InputError, match=r"line \d+.*fail_on.*must be a list of some of"):
        load_project(_project(tmp_path, nightly='[nightly]\nfail_on = ["staging"]\n'))


def _runs(db_url: str) -> dict[str, int]:
    with Store.open(db_url) as store:
        store.import_test_set("small", content())
        good = good_rankings(content())
        worse = {q: docs[:1] for q, docs in good.items()}
        return {
            "prod": store_run(store, "prod", "small", good),
            "cand": store_run(store, "cand", "small", worse),
            "other": store_run(store, "other", "small", worse),
        }


def test_compare_in_a_project_directory_applies_its_gates(
    db_url: str, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _runs(db_url)
    pair = (str(ids["prod"]), str(ids["cand"]))
    plain = cli("compare", *pair, "--json", "--db", db_url)
    assert plain.exit_code == 0, plain.stderr
    assert {g["metric"] for g in json.loads(plain.stdout)["gating"]["gated"]} == {
        "nDCG@10", "P@5", "AP"
    }  # fmt: skip
    path = _project(tmp_path, '[[gates]]\nmetric = "P@5"\nmax_drop = 0.5\n')
    given = cli("compare", *pair, "--json", "--project", str(path), "--db", db_url)
    assert given.exit_code == 0, given.stderr
    gated = json.loads(given.stdout)["gating"]["gated"]
    assert [(g["metric"], g["max_drop"]) for g in gated] == [("P@5", 0.5)]
    monkeypatch.chdir(tmp_path)  # ./evalplat.toml, found as the other commands find it
    here = cli("compare", *pair, "--json", "--db", db_url)
    assert [g["metric"] for g in json.loads(here.stdout)["gating"]["gated"]] == ["P@5"]
    named = cli("compare", *pair, "--json", "--gate", "AP", "--db", db_url)
    assert [g["metric"] for g in json.loads(named.stdout)["gating"]["gated"]] == ["AP"]


def test_leaderboard_verdicts_are_compares_against_production(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    from evalplat.comparison.verdicts import Gate

    ids = _runs(db_url)
    with Store.open(db_url) as store:  # nights gate cand and other against prod
        for name in ("cand", "other"):
            store.compare_runs(ids["prod"], ids[name], gating=True)
        pair = store.compare_runs(ids["prod"], ids["cand"], metrics=["P@5", "AP"])
        gated = store.compare_runs(ids["prod"], ids["cand"], metrics=["P@5", "AP"],
                                   gates=[Gate("AP", max_drop=0.01)])  # fmt: skip
    board = cli("leaderboard", "--config-glob", "*", "-m", "P@5", "-m", "AP", "--json",
                "--db", db_url)  # fmt: skip
    assert board.exit_code == 0, board.stderr
    data = json.loads(board.stdout)
    assert data["baseline"] == "prod@1"  # not "cand", the first by name
    rows = {(m["metric"], r["run"]): r for m in data["metrics"] for r in m["runs"]}
    for metric in ("P@5", "AP"):
        row, expected = rows[(metric, "cand@1")], pair.metric(metric)
        assert (row["verdict"], row["p_corrected"]) == (expected.verdict, expected.p_corrected)
    path = _project(tmp_path, '[[gates]]\nmetric = "AP"\nmax_drop = 0.01\n')
    board = cli("leaderboard", "--config-glob", "*", "-m", "P@5", "-m", "AP", "--json",
                "--project", str(path), "--db", db_url)  # fmt: skip
    assert board.exit_code == 0, board.stderr
    rows = {(m["metric"], r["run"]): r for m in json.loads(board.stdout)["metrics"]
            for r in m["runs"]}  # fmt: skip
    assert rows[("P@5", "cand@1")]["verdict"] == "not gated"
    assert rows[("AP", "cand@1")]["verdict"] == gated.metric("AP").verdict


def test_a_dropped_configs_run_on_older_judgments_is_left_out_not_a_refusal(
    db_url: str, cli: Callable[..., Any]
) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("small", content())
        good = good_rankings(content())
        dropped = store_run(store, "a-dropped", "small", good)  # first by name, then dropped
        store.import_test_set("small", content(relevant=5))  # new judgments: version 2
        prod = store_run(store, "prod", "small", good)
        cand = store_run(store, "cand", "small", {q: d[:1] for q, d in good.items()})
        store.compare_runs(prod, cand, gating=True)
    board = cli("leaderboard", "--config-glob", "*", "-m", "P@5", "--db", db_url)
    assert board.exit_code == 0, board.stderr
    assert "a-dropped@1 is left out: it has no scores on small@2" in board.stdout
    assert "baseline prod@1" in " ".join(board.stdout.split())
    named = cli("leaderboard", "prod@latest", str(dropped), "--db", db_url)
    assert named.exit_code == 2
    assert f"evalplat rescore {dropped} --testset small@2" in named.stderr


def test_the_sites_leaderboard_gates_what_the_project_states(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    """The site's leaderboard page gives each run the verdicts ``leaderboard --project`` gives:
    with the project's gates on AP alone, the other metrics are not gated; the page is written
    again when the gates change, though no run did."""
    ids = _runs(db_url)
    with Store.open(db_url) as store:
        for name in ("cand", "other"):
            store.compare_runs(ids["prod"], ids[name], gating=True)
    site = tmp_path / "site"
    plain = cli("report", "site", "--out", str(site), "--db", db_url)
    assert plain.exit_code == 0, plain.stderr
    page = site / "leaderboard" / "small.html"
    assert ">not gated<" not in page.read_text(encoding="utf-8")  # the default rule set
    (tmp_path / "project").mkdir()
    path = _project(tmp_path / "project", '[[gates]]\nmetric = "AP"\nmax_drop = 0.01\n')
    stated = cli("report", "site", "--out", str(site), "--project", str(path), "--db", db_url)
    assert stated.exit_code == 0, stated.stderr
    html = page.read_text(encoding="utf-8")
    board = cli("leaderboard", "--config-glob", "*", "--json", "--project", str(path),
                "--db", db_url)  # fmt: skip
    rows = [r for m in json.loads(board.stdout)["metrics"] for r in m["runs"]]
    assert html.count(">not gated<") == sum(r["verdict"] == "not gated" for r in rows) > 0
