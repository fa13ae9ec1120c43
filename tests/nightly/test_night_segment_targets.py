"""Targets on a segment (query tag): judged on the segment's queries alone, alerted apart from
the target on all queries, shown in JSON, ``runs show`` and the history page; an unknown tag is
refused before anything is written. On both databases."""

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
from .db_counts import table_counts
from .small_project import QUERIES, write_project

# topics 1-10 are tagged head, 11-30 tail; mode "tail" answers the head only: nDCG@10 is 1 on
# the head, 0 on the tail and 10/30 over all queries
TARGETS = """
[[targets]]
metric = "nDCG@10"
min = 0.3

[[targets]]
metric = "nDCG@10"
min = 0.5
segment = "tail"

[[targets]]
metric = "nDCG@10"
min = 0.9
segment = "head"
"""


def tagged(folder: Path, mode: str, targets: str, hook: str | None = None) -> Path:
    path = write_project(folder, {"engine": mode}, hook=hook, extra_alerts=targets)
    (folder / "queries.tsv").write_text(
        "id\ttext\ttags\n"
        + "".join(
            f"{n}\ttopic {n}\t{'head' if n <= 10 else 'tail'}\n" for n in range(1, QUERIES + 1)
        ),
        encoding="utf-8",
    )
    return path


def test_a_segment_target_is_judged_on_its_queries_and_alerts_on_its_own(
    db_url: str, tmp_path: Path, capture: CaptureServer, cli: Callable[..., Any]
) -> None:
    folder = tmp_path / "p"

    def night(mode: str) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = []
        path = tagged(folder, mode, TARGETS, f"{capture.url}/ok")
        run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return [s for s in steps if s["step"] == "target"]

    rows = {(s["metric"], s["segment"]): s for s in night("tail")}
    assert rows[("nDCG@10", None)]["value"] == pytest.approx(10 / 30)
    assert rows[("nDCG@10", None)]["target_verdict"] == "met"
    tail = rows[("nDCG@10", "tail")]
    assert (tail["value"], tail["ci_low"], tail["ci_high"]) == (0.0, 0.0, 0.0)
    assert tail["target"] == "nDCG@10[tail]>=0.5" and tail["target_verdict"] == "missed"
    assert rows[("nDCG@10", "head")]["value"] == 1.0
    assert rows[("nDCG@10", "head")]["target_verdict"] == "met"
    alerts = [a for r in capture.accepted("/ok") for a in r.body["alerts"] if a["kind"] == "target"]
    assert [(a["event"], a["metric"]) for a in alerts] == [("opened", "nDCG@10 [segment tail]")]
    assert alerts[0]["target"].startswith("nDCG@10[tail]>=0.5: 0.0000 [")
    run_id = tail["run"]
    shown = cli("runs", "show", str(run_id), "--db", db_url, "--json")
    kept = {(t["metric"], t["segment"]): t["target_verdict"] for t in json.loads(shown.stdout)[
        "targets"]}  # fmt: skip
    assert kept == {("nDCG@10", None): "met", ("nDCG@10", "tail"): "missed",
                    ("nDCG@10", "head"): "met"}  # fmt: skip
    text = cli("runs", "show", str(run_id), "--db", db_url).stdout
    assert "target nDCG@10[tail]>=0.5" in text
    [history] = (folder / "site" / "history").glob("engine--*.html")
    page = history.read_text(encoding="utf-8")
    assert "<strong>nDCG@10[tail]</strong>" in page and "<strong>nDCG@10[head]</strong>" in page
    assert page.count('class="c-target"') == 3
    index = (folder / "site" / "index.html").read_text(encoding="utf-8")
    assert '2 met · 0 at risk · <span class="badge v-regression">1 missed</span>' in index
    assert {(s["segment"], s["target_verdict"]) for s in night("good")} == {
        (None, "met"),
        ("tail", "met"),
        ("head", "met"),
    }
    alerts = [a for r in capture.accepted("/ok") for a in r.body["alerts"] if a["kind"] == "target"]
    assert [(a["event"], a["metric"]) for a in alerts] == [
        ("opened", "nDCG@10 [segment tail]"),
        ("resolved", "nDCG@10 [segment tail]"),
    ]
    with Store.open(db_url) as store:
        assert [(a.metric, a.state) for a in store.list_alerts() if a.kind == "target"] == [
            ("nDCG@10 [segment tail]", "resolved")
        ]


def test_an_unknown_segment_in_a_target_is_refused_before_anything_is_written(
    db_url: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    path = tagged(tmp_path, "good", '\n[[targets]]\nmetric = "P@5"\nmin = 0.1\n'
                  '\n[[targets]]\nmetric = "nDCG@10"\nmin = 0.5\nsegment = "tial"\n')  # fmt: skip
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 2, result.stdout
    [line] = result.stderr.splitlines()
    lines = path.read_text(encoding="utf-8").splitlines()
    number = lines.index('segment = "tial"') + 1
    assert line == (
        f"error: {path} line {number}: [[targets]] #2 key 'segment': target nDCG@10[tial]>=0.5: "
        "segment 'tial' is a tag of no query of test set 'topics'"
    )
    given = cli("nightly", "--project", str(write_project(tmp_path / "q", {"engine": "good"})),
                "--db", db_url, "--target", "nDCG@10[tail]>=0.5")  # fmt: skip
    assert given.exit_code == 2
    assert given.stderr.splitlines() == [
        "error: --target 'nDCG@10[tail]>=0.5': target nDCG@10[tail]>=0.5: segment 'tail' is a "
        "tag of no query of test set 'topics'"
    ]
    assert table_counts(db_url) == before
    empty = tagged(tmp_path / "r", "good", '\n[[targets]]\nmetric = "P@5"\nmin = 0.1\n'
                   'segment = ""\n')  # fmt: skip
    result = cli("nightly", "--project", str(empty), "--db", db_url)
    assert result.exit_code == 2 and "key 'segment': target P@5: must be a non-empty" in (
        result.stderr
    )
    assert table_counts(db_url) == before
