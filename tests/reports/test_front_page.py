"""The index as the morning read: a ``compare_to`` candidate that regresses shows, night after
night, the verdict its alert came from, and the index row, the alert row and the alert messages
all lead to the one comparison page that raised it."""

from __future__ import annotations

from pathlib import Path

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from ..nightly.small_project import write_project
from .index_hooks import read_index

BASE = "https://search.example.com/evalplat/"


def project(folder: Path, capture: CaptureServer, candidate: str) -> Path:
    """``prod`` (good) and ``cand`` gated against prod's baseline (``compare_to``), alerting to a
    webhook and a Slack receiver; the site is served from ``BASE``; an experiment's regression
    fails the night."""
    path = write_project(folder, {"prod": "good"}, hook=f"{capture.url}/hook",
                         reports=f'dir = "site"\nbase_url = "{BASE}"')  # fmt: skip
    text = path.read_text(encoding="utf-8")
    candidate_config = f"""
[[configs]]
name = "cand"
searcher = "python"
testsets = ["topics"]
compare_to = "prod"
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{candidate}"
"""
    slack = f'\n[[alerts]]\nname = "team"\ntype = "slack"\nurl = "{capture.url}/slack"\n'
    text = text.replace("\n[metrics]", candidate_config + "\n[metrics]", 1)
    text = text.replace("\n[reports]", slack + "\n[reports]", 1)
    # cand is an experiment: these nights fail on its regression, as a team asks with fail_on
    nightly = '\n[nightly]\nfail_on = ["production", "experiment", "outage"]\n'
    path.write_text(text + nightly, encoding="utf-8")
    return path


def test_a_compare_to_candidate_shows_and_links_the_comparison_its_alert_came_from(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    folder = tmp_path / "project"
    site = folder / "site"

    def night(candidate: str) -> int:
        outcome = run_nightly(load_project(project(folder, capture, candidate)), db_url=db_url)
        return outcome.exit_code

    assert night("good") == 0
    with Store.open(db_url) as store:
        prod_baseline = store.baseline("prod", "topics")
        assert prod_baseline is not None
        first_cand = store.list_runs("cand")[0]
    row = read_index(site).rows[("cand", "topics")]
    assert row["data-verdict"] == "unchanged"  # against prod's baseline, as gated
    assert f"vs prod #{prod_baseline.run_id}" in " ".join(row["text"].split())

    # night 2 regresses; night 3 stays as bad (unchanged since night 2, still a regression
    # against prod: the alert stays open and the index must keep saying so)
    for night_number in (2, 3):
        assert night("first20") == 1, f"night {night_number}"
        with Store.open(db_url) as store:
            [alert] = [a for a in store.list_alerts() if a.state == "open"]
            latest = store.list_runs("cand")[0]
            gated = store.load_comparison(alert.last_comparison_id or 0)
        assert latest.id != first_cand.id
        assert (gated.baseline_run_id, gated.candidate_run_id) == (prod_baseline.run_id, latest.id)
        hooks = read_index(site)
        row = hooks.rows[("cand", "topics")]
        page = f"compare/compare-{gated.id}.html"
        assert row["data-verdict"] == alert.kind == "regression", f"night {night_number}"
        assert page in row["links"], f"night {night_number}: {row['links']}"
        assert f"vs prod #{prod_baseline.run_id}" in " ".join(row["text"].split())
        assert hooks.alerts[alert.id]["data-alert-kind"] == "regression"
        assert hooks.alerts[alert.id]["alert_links"] == [page]
        assert hooks.rows[("prod", "topics")]["data-verdict"] in ("", "unchanged")
        for target in [*row["links"], *hooks.alerts[alert.id]["links"]]:
            assert (site / target).is_file(), target
        # the opening was sent on night 2 only, once per channel
        assert len(capture.accepted("/hook")) == len(capture.accepted("/slack")) == 1

    # both channels sent the opening once, each linking the page that raised it (night 2's)
    [hook] = capture.accepted("/hook")
    [message] = hook.body["alerts"]
    assert message["event"] == "opened" and message["kind"] == "regression"
    opened_page = message["report"].removeprefix(BASE)
    assert opened_page.startswith("compare/compare-") and (site / opened_page).is_file()
    assert message["index"] == BASE + "index.html"
    [slack] = capture.accepted("/slack")
    context = [e["text"] for b in slack.body["blocks"] if b["type"] == "context"
               for e in b["elements"]]  # fmt: skip
    assert f"<{BASE}{opened_page}|Open the report>" in context
    assert f"<{BASE}index.html|All reports>" in context
    with Store.open(db_url) as store:
        opened = store.load_comparison(int(opened_page.removesuffix(".html").split("-")[-1]))
    assert opened.baseline_run_id == prod_baseline.run_id  # not cand's own first run


def test_an_outage_links_its_failed_run_and_keeps_the_open_regressions_page(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    folder = tmp_path / "project"
    site = folder / "site"
    for mode, code in (("good", 0), ("bad", 1), ("down", 3)):
        path = project(folder, capture, mode)
        assert run_nightly(load_project(path), db_url=db_url).exit_code == code, mode
    with Store.open(db_url) as store:
        alerts = {a.kind: a for a in store.list_alerts() if a.state == "open"}
        failed = store.list_runs("cand")[0]
    assert set(alerts) == {"regression", "operational"}
    hooks = read_index(site)
    # the failed night has no comparison: no verdict, and the outage's row links the failed run
    assert hooks.rows[("cand", "topics")]["data-verdict"] == ""
    assert hooks.alerts[alerts["operational"].id]["alert_links"] == [f"runs/run-{failed.id}.html"]
    # the regression still open from the night before keeps the page of its comparison
    regression = hooks.alerts[alerts["regression"].id]["alert_links"]
    assert regression == [f"compare/compare-{alerts['regression'].last_comparison_id}.html"]
    for link in [*regression, *hooks.alerts[alerts["operational"].id]["alert_links"]]:
        assert (site / link).is_file(), link
    # the outage's message links the failed run's page
    outage = [a for r in capture.accepted("/hook") for a in r.body["alerts"]
              if a["kind"] == "operational"]  # fmt: skip
    assert [a["report"] for a in outage] == [f"{BASE}runs/run-{failed.id}.html"]


def test_the_index_opens_with_what_the_latest_night_opened_resolved_and_retired(
    db_url: str, tmp_path: Path
) -> None:
    """Each night's index lists the alerts that night opened, resolved and retired (a resolved
    alert is nowhere else on the page), and a row's verdict names the metric it is about: the
    gated P@5, not the row's figure nDCG@10."""
    folder = tmp_path / "project"
    site = folder / "site"

    def night(modes: dict[str, str]) -> int:
        path = write_project(folder, modes)
        text = path.read_text(encoding="utf-8")
        gate = 'metric = "nDCG@10"\nmax_drop'
        assert gate in text
        path.write_text(text.replace(gate, 'metric = "P@5"\nmax_drop'), encoding="utf-8")
        return run_nightly(load_project(path), db_url=db_url).exit_code

    def events() -> list[tuple[str, int]]:
        return [(row["data-event"], int(row["data-night-alert"])) for row in read_index(site).night]

    assert night({"prod": "good"}) == 0
    assert events() == []
    assert "0 opened, 0 resolved, 0 retired" in (site / "index.html").read_text(encoding="utf-8")

    assert night({"prod": "first20"}) == 1
    with Store.open(db_url) as store:
        [first] = [a for a in store.list_alerts() if a.state == "open"]
    assert first.metric == "P@5"
    assert events() == [("opened", first.id)]
    row = read_index(site).rows[("prod", "topics")]
    assert row["data-verdict"] == "regression"
    assert row["verdict_metrics"] == "P@5"  # what regressed, beside the row's nDCG@10 figure
    assert "nDCG@10" in row["text"]

    assert night({"prod": "good"}) == 0  # fixed: the alert resolves
    hooks = read_index(site)
    assert events() == [("resolved", first.id)]
    assert first.id not in hooks.alerts  # no longer open: only last night's section shows it
    [resolved] = hooks.night
    assert resolved["alert_links"] and all((site / link).is_file() for link in resolved["links"])
    assert "verdict_metrics" not in hooks.rows[("prod", "topics")]  # unchanged: nothing named

    assert night({"prod": "first20"}) == 1
    with Store.open(db_url) as store:
        [second] = [a for a in store.list_alerts() if a.state == "open"]
    assert night({"other": "good"}) == 0  # prod left the project: its alert retires
    assert events() == [("retired", second.id)]
    assert "0 opened, 0 resolved, 1 retired" in (site / "index.html").read_text(encoding="utf-8")


def test_a_removed_config_whose_alert_retired_moves_to_the_ended_section(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    """cand regresses (alert open, its row says so); dropped from the file, its alert retires
    and its row leaves the live rows for "Ended", without a regression badge; added back, its
    next run makes it live again."""
    folder = tmp_path / "project"
    site = folder / "site"
    path = project(folder, capture, "first20")
    with_cand = path.read_text(encoding="utf-8")
    assert run_nightly(load_project(path), db_url=db_url).exit_code == 1
    hooks = read_index(site)
    assert hooks.rows[("cand", "topics")]["data-verdict"] == "regression"
    assert 'id="ended"' not in (site / "index.html").read_text(encoding="utf-8")
    start = with_cand.index('\n[[configs]]\nname = "cand"')
    end = with_cand.index("\n[metrics]")
    path.write_text(with_cand[:start] + with_cand[end:], encoding="utf-8")
    assert run_nightly(load_project(path), db_url=db_url).exit_code == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    hooks = read_index(site)
    assert ("cand", "topics") not in hooks.rows and ("prod", "topics") in hooks.rows
    ended = page[page.index('<table id="ended">') :]
    ended = ended[: ended.index("</table>")]
    assert 'data-ended-config="cand" data-ended-testset="topics"' in ended
    assert "config cand is no longer in evalplat.toml" in ended
    assert "badge" not in ended and "missed" not in ended
    path.write_text(with_cand.replace('mode = "first20"', 'mode = "good"'), encoding="utf-8")
    run_nightly(load_project(path), db_url=db_url)
    hooks = read_index(site)
    assert ("cand", "topics") in hooks.rows
    assert 'id="ended"' not in (site / "index.html").read_text(encoding="utf-8")


def test_a_config_dropped_without_an_alert_ends_and_another_files_configs_do_not(
    db_url: str, tmp_path: Path
) -> None:
    """A config that leaves the file with no alert of its own moves to "Ended" with the next
    night, as one whose alert retired does; the configs of a second project file sharing the
    database stay live whatever the first file's nights run, and the other way round."""
    first = write_project(tmp_path / "first", {"prod": "good", "cand": "good"})
    other = write_project(tmp_path / "other", {"solo": "good"})
    for path in (first, other, first):
        assert run_nightly(load_project(path), db_url=db_url).exit_code == 0
    site = tmp_path / "first" / "site"
    assert {key[0] for key in read_index(site).rows} == {"prod", "cand", "solo"}
    text = first.read_text(encoding="utf-8")
    start = text.index('\n[[configs]]\nname = "cand"')
    first.write_text(text[:start] + text[text.index("\n[metrics]") :], encoding="utf-8")
    assert run_nightly(load_project(first), db_url=db_url).exit_code == 0
    assert {key[0] for key in read_index(site).rows} == {"prod", "solo"}
    page = (site / "index.html").read_text(encoding="utf-8")
    ended = page[page.index('<table id="ended">') :].split("</table>", 1)[0]
    assert 'data-ended-config="cand" data-ended-testset="topics"' in ended
    assert "config cand is no longer in evalplat.toml" in ended
    assert "solo" not in ended and "prod" not in ended
