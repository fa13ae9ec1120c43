"""The same two runs get the same verdict however they are compared: by the night that gated
them, by an ad-hoc ``compare`` (and its ``--report``), and by ``report compare``, when the gated
metrics are the same: the relevance metrics, with the same test, alpha and Holm family.
On both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from .project import write_project as _project

Cli = Callable[..., Any]


def _verdicts(data: dict[str, Any]) -> dict[str, tuple[str, float | None]]:
    return {m["metric"]: (m["verdict"], m["p_corrected"]) for m in data["metrics"] if m["gated"]}


def test_nightly_compare_and_report_compare_agree(db_url: str, tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "project"
    steps: list[dict[str, Any]] = []
    for good in (30, 22):  # a night, then a config that lost 8 of its 30 topics
        run_nightly(load_project(_project(folder, good)), db_url=db_url, log=steps.append)
    (night,) = [s for s in steps if s["step"] == "compare"]
    with Store.open(db_url) as store:
        nightly = store.load_comparison(night["comparison"]).to_dict()
    adhoc = cli("compare", "engine@baseline", "engine@latest", "--json", "--db", db_url,
                "--report", str(tmp_path / "adhoc.html"), "--fail-on-regression")  # fmt: skip
    assert adhoc.exit_code == 1, adhoc.stderr
    data = json.loads(adhoc.stdout)
    paged = cli("report", "compare", "engine@baseline", "engine@latest", "--db", db_url,
                "--out", str(tmp_path / "paged.html"))  # fmt: skip
    assert paged.exit_code == 0, paged.stderr
    with Store.open(db_url) as store:
        (latest, *_) = store.recent_comparisons("topics", 1)
        report = store.load_comparison(latest.id).to_dict()
    assert report["id"] not in (nightly["id"], data["id"])
    assert _verdicts(nightly) == _verdicts(data) == _verdicts(report)
    assert set(_verdicts(data)) == {"nDCG@10", "P@5"}  # latency, zero results: shown only
    assert nightly["verdict"] == data["verdict"] == report["verdict"] == "regression"
    assert data["gating"]["family"] == 2 and data["gating"]["correction"] == "holm"
    latency = {m["metric"]: m for m in data["metrics"]}["Latency(p=95)"]
    assert (latency["gated"], latency["reason"]) == (False, "not_gated")
    page = (tmp_path / "adhoc.html").read_text(encoding="utf-8")
    assert "an operational measure" in page  # the page says why latency was not gated


def test_the_console_says_what_was_gated_and_why_a_drop_did_not_regress(
    db_url: str, tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "project"
    for good in (30, 26):  # 4 topics lost: p = 0.125, not credible
        run_nightly(load_project(_project(folder, good)), db_url=db_url, log=lambda _: None)
    shown = cli("compare", "engine@baseline", "engine@latest", "--db", db_url)
    assert shown.exit_code == 0, shown.stderr
    out = shown.stdout
    assert "gated     P@5, nDCG@10: randomization test, alpha 0.05, any credible drop" in out
    assert "Holm correction over 2 gated tests" in out
    assert "not gated Latency" in out
    why = [line for line in out.splitlines() if line.startswith("why       nDCG@10")]
    assert why and "(0.25 after Holm over 2 gated tests), not below alpha 0.05" in why[0], out
    assert why[0].endswith(": unchanged")
    # with a minimum effect larger than the drop, that is the reason given
    shown = cli("compare", "engine@baseline", "engine@latest", "--db", db_url, "--gate",
                "nDCG@10", "--max-drop", "0.5", "--json")  # fmt: skip
    row = {m["metric"]: m for m in json.loads(shown.stdout)["metrics"]}["nDCG@10"]
    assert row["reason"] in ("below_threshold", "not_significant")
    assert json.loads(shown.stdout)["gating"]["gated"][0]["max_drop"] == 0.5
