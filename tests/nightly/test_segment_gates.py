"""A gate on a segment (query tag) in evalplat.toml: alerted on its own, small ones never."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from .small_project import QUERIES, write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

SEGMENT_GATES = """
[[gates]]
metric = "nDCG@10"
max_drop = 0.01
segment = "tail"

[[gates]]
metric = "P@5"
segment = "head"
"""


def tagged_project(folder: Path, mode: str, hook: str, min_queries: int | None = None) -> Path:
    """Topics 1-10 tagged ``head``, 11-30 ``tail``; the all-queries gate tolerates any drop."""
    path = write_project(folder, {"engine": mode}, hook=hook)
    (folder / "queries.tsv").write_text(
        "id\ttext\ttags\n"
        + "".join(
            f"{n}\ttopic {n}\t{'head' if n <= 10 else 'tail'}\n" for n in range(1, QUERIES + 1)
        ),
        encoding="utf-8",
    )
    text = path.read_text(encoding="utf-8").replace("max_drop = 0.01", "max_drop = 0.99")
    text += SEGMENT_GATES
    if min_queries is not None:
        text += f"\n[segments]\nmin_queries = {min_queries}\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_segment_gate_opens_its_own_alert_and_a_small_segment_none(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    def night(mode: str) -> tuple[int, list[dict[str, Any]]]:
        path = tagged_project(tmp_path / "p", mode, f"{capture.url}/ok")
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    assert night("good")[0] == 0
    code, steps = night("tail")
    assert code == 1
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"]["nDCG@10"] == "unchanged"  # the all-queries gate passes
    assert compare["verdict"] == "regression"
    [request] = capture.accepted("/ok")
    [alert] = request.body["alerts"]
    assert (alert["kind"], alert["event"], alert["metric"]) == (
        "regression", "opened", "nDCG@10 [segment tail]"
    )  # fmt: skip
    with Store.open(db_url) as store:
        result = store.load_comparison(compare["comparison"])
    head = next(s for s in result.segments if s.segment == "head" and s.metric == "P@5")
    assert not head.gated and head.note == "10 queries, fewer than 20: not gated"
    assert night("good")[0] == 0
    assert [a["event"] for a in capture.accepted("/ok")[1].body["alerts"]] == ["resolved"]


def test_min_queries_and_segment_names_are_checked_in_the_project_file(tmp_path: Path) -> None:
    path = tagged_project(tmp_path / "p", "good", "http://127.0.0.1:9/ok", min_queries=5)
    assert load_project(path).min_segment_queries == 5
    bad = tagged_project(tmp_path / "q", "good", "http://127.0.0.1:9/ok", min_queries=0)
    with pytest.raises(InputError, match="min_queries"):
        load_project(bad)
    long = tagged_project(tmp_path / "r", "good", "http://127.0.0.1:9/ok")
    long.write_text(long.read_text().replace('segment = "tail"', f'segment = "{"x" * 70}"'))
    with pytest.raises(InputError, match="segment name must be at most 62 characters"):
        load_project(long)
