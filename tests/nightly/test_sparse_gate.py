"""Gating a sparse test set (docs/adoption.md): on Cranfield, whose top 10 is mostly unjudged,
a drop in nDCG@10 stays ``needs_judgments`` for good, while the same drop in a judged-only
measure, which unjudged documents cannot move, fails the gate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.resources import bundled_testset
from evalplat.store import Store

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

CRANFIELD = bundled_testset("cranfield")


def project_file(folder: Path, body_weight: int) -> Path:
    """The project of docs/adoption.md's "Gating a sparse test set", with the body field's
    BM25 weight as given (0 drops the field from the ranking)."""
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "cranfield"
qrels = "{CRANFIELD / "qrels.txt"}"
queries = "{CRANFIELD / "queries.tsv"}"
docs = "{CRANFIELD / "docs.jsonl"}"

[[configs]]
name = "docs-bm25"
searcher = "builtin"
testsets = ["cranfield"]
[configs.params]
weights = {{ title = 1, text = {body_weight} }}

[metrics]
names = ["nDCG@10", "nDCG(judged_only=true)@10", "Bpref", "Judged@10"]

[[gates]]
metric = "nDCG(judged_only=true)@10"
max_relative_drop = 0.05

[[gates]]
metric = "nDCG@10"
max_relative_drop = 0.05
""",
        encoding="utf-8",
    )
    return path


def test_dropping_the_body_field_fails_the_judged_only_gate_of_a_sparse_set(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    def night(body_weight: int) -> tuple[int, list[dict[str, Any]]]:
        path = project_file(tmp_path, body_weight)
        result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
        steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        return result.exit_code, steps

    assert night(1)[0] == 0
    code, steps = night(0)
    assert code == 1, steps
    with Store.open(db_url) as store:
        opened = {(a.kind, a.metric) for a in store.list_alerts() if a.state == "open"}
    [compared] = [s for s in steps if s.get("step") == "compare"]
    verdicts = compared["verdicts"]
    # the plain measure turns on unjudged documents and cannot fail; the judged-only ones can
    assert verdicts["nDCG@10"] == "needs_judgments"
    assert verdicts["nDCG(judged_only=true)@10"] == "regression"
    assert ("regression", "nDCG(judged_only=true)@10") in opened
    assert ("regression", "nDCG@10") not in opened


def test_only_measures_that_keep_unjudged_documents_are_moved_by_them() -> None:
    from evalplat.metrics.names import parse

    moved = {name: parse(name).moved_by_unjudged for name in (
        "nDCG@10", "AP", "P@10", "nDCG(judged_only=true)@10", "P(judged_only=true)@10", "Bpref",
        "Latency", "ZeroResult",
    )}  # fmt: skip
    assert moved == {
        "nDCG@10": True, "AP": True, "P@10": True, "nDCG(judged_only=true)@10": False,
        "P(judged_only=true)@10": False, "Bpref": False, "Latency": False, "ZeroResult": False,
    }  # fmt: skip
