"""Gates and targets apply where they can: a segment gate or target only on the test sets whose
queries carry its tag (or the one it names), a tag no test set has refused before anything is
written (``--dry-run`` too), and a gate on a metric the baseline was never scored with compared
after rescoring the baseline, or skipped with one log line when its results were pruned.
On both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store
from evalplat.store.base import utcnow

from .db_counts import table_counts
from .small_project import QUERIES, write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

Cli = Callable[..., Any]

TAIL_GATE = """
[[gates]]
metric = "P@5"
max_drop = 0.01
segment = "tail"

[[targets]]
metric = "nDCG@10"
min = 0.5
segment = "tail"
"""


def two_test_sets(folder: Path, mode: str, extra: str = "") -> Path:
    """Test set ``topics`` (topics 1-10 tagged ``head``, 11-30 ``tail``) and ``plain`` (the
    same topics, no tags); one config on both, answering by ``mode``."""
    path = write_project(folder, {"engine": mode}, extra_alerts=extra)
    (folder / "queries.tsv").write_text(
        "id\ttext\ttags\n"
        + "".join(
            f"{n}\ttopic {n}\t{'head' if n <= 10 else 'tail'}\n" for n in range(1, QUERIES + 1)
        ),
        encoding="utf-8",
    )
    (folder / "plain.tsv").write_text(
        "".join(f"{n}\ttopic {n}\n" for n in range(1, QUERIES + 1)), encoding="utf-8"
    )
    text = path.read_text(encoding="utf-8")
    text = text.replace('testsets = ["topics"]', 'testsets = ["topics", "plain"]')
    text = text.replace(
        "[[configs]]",
        '[[testsets]]\nname = "plain"\nqrels = "qrels.txt"\nqueries = "plain.tsv"\n\n[[configs]]',
        1,
    )
    path.write_text(text, encoding="utf-8")
    return path


def night(path: Path, db_url: str) -> tuple[int, list[dict[str, Any]]]:
    steps: list[dict[str, Any]] = []
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
    return outcome.exit_code, steps


def test_a_tail_gate_leaves_the_test_set_without_tail_queries_to_its_other_gates(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "p"
    code, steps = night(two_test_sets(folder, "good", TAIL_GATE), db_url)
    assert code == 0, steps
    code, steps = night(two_test_sets(folder, "bad", TAIL_GATE), db_url)
    assert code == 1, [s for s in steps if s["step"] in ("failed", "alert")]
    assert not [s for s in steps if s["step"] == "failed"]
    compares = {s["testset"]: s for s in steps if s["step"] == "compare"}
    assert compares["plain"]["verdicts"] == {"nDCG@10": "regression"}
    assert compares["plain"]["verdict"] == "regression"
    assert compares["topics"]["verdicts"] == {"nDCG@10": "regression"}
    with Store.open(db_url) as store:
        plain = store.load_comparison(compares["plain"]["comparison"])
        topics = store.load_comparison(compares["topics"]["comparison"])
        alerts = {(a.test_set, a.kind, a.metric, a.state) for a in store.list_alerts()}
    assert plain.segments == () and all(g.segment is None for g in plain.gates)
    tail = next(s for s in topics.segments if s.segment == "tail" and s.metric == "P@5")
    assert tail.gated and tail.verdict == "regression"
    assert alerts == {
        ("plain", "regression", "nDCG@10", "open"),
        ("topics", "regression", "nDCG@10", "open"),
        ("topics", "regression", "P@5 [segment tail]", "open"),
        ("topics", "target", "nDCG@10 [segment tail]", "open"),
    }
    targets = {(s["testset"], s["segment"]) for s in steps if s["step"] == "target"}
    assert targets == {("topics", "tail")}


def test_a_segment_no_test_set_carries_is_refused_by_dry_run_and_by_a_night(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    good = two_test_sets(tmp_path / "good", "good", TAIL_GATE)
    assert cli("nightly", "--project", str(good), "--db", db_url, "--dry-run").exit_code == 0
    before = table_counts(db_url)
    misspelt = two_test_sets(
        tmp_path / "misspelt", "good", TAIL_GATE.replace('"tail"', '"tial"', 1)
    )
    named = two_test_sets(
        tmp_path / "named", "good", TAIL_GATE.replace('segment = "tail"', 'segment = "tail"\n'
                                                      'testset = "plain"', 1)
    )  # fmt: skip
    for path, problem in (
        (misspelt, "segment 'tial' is a tag of no query of any test set (topics, plain)"),
        (named, "segment 'tail' is a tag of no query of test set 'plain'"),
    ):
        lines = path.read_text(encoding="utf-8").splitlines()
        number = next(i for i, line in enumerate(lines, 1) if line.startswith("segment ="))
        expected = (
            f"error: {path} line {number}: [[gates]] #2 key 'segment': gate on P@5: {problem}"
        )
        for dry_run in (("--dry-run",), ()):
            result = cli("nightly", "--project", str(path), "--db", db_url, *dry_run)
            assert result.exit_code == 2, (dry_run, result.stdout)
            assert result.stderr.splitlines() == [expected]
            assert table_counts(db_url) == before
    unknown = two_test_sets(tmp_path / "unknown", "good", TAIL_GATE.replace(
        'segment = "tail"', 'testset = "other"', 1))  # fmt: skip
    result = cli("nightly", "--project", str(unknown), "--db", db_url, "--dry-run")
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "[[gates]] #2 key 'testset': gate P@5: 'other' is not defined in [[testsets]]" in line
    scoped = '\n[[targets]]\nmetric = "nDCG@10"\nmin = 0.5\nsegment = "tail"\ntestset = "plain"\n'
    result = cli("nightly", "--project", str(two_test_sets(tmp_path / "target", "good", scoped)),
                 "--db", db_url, "--dry-run")  # fmt: skip
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.endswith(
        "[[targets]] #1 key 'segment': target nDCG@10[tail]>=0.5: segment 'tail' is a tag of "
        "no query of test set 'plain'"
    )
    assert table_counts(db_url) == before


def test_a_gate_and_a_gain_map_added_after_the_baseline_compare_after_rescoring(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "p"
    assert night(write_project(folder, {"engine": "good"}), db_url)[0] == 0
    added = '\n[[gates]]\nmetric = "ERR@20"\nmax_drop = 0.01\n'

    def later(mode: str) -> Path:
        path = write_project(folder, {"engine": mode}, extra_alerts=added)
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace('qrels = "qrels.txt"', 'qrels = "qrels.txt"\ngains = { 1 = 10 }')
        )
        return path

    code, steps = night(later("good"), db_url)
    assert code == 0, steps
    [rescore] = [s for s in steps if s["step"] == "rescore"]
    assert rescore["metrics"] == ["ERR@20", "nDCG(gains={1:10})@10"] and "skipped" not in rescore
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"] == {"nDCG(gains={1:10})@10": "unchanged", "ERR@20": "unchanged"}
    code, steps = night(later("bad"), db_url)
    assert code == 1
    assert not [s for s in steps if s["step"] == "rescore"]  # the baseline has them now
    with Store.open(db_url) as store:
        alerts = {(a.kind, a.metric, a.state) for a in store.list_alerts()}
    assert alerts == {
        ("regression", "ERR@20", "open"),
        ("regression", "nDCG(gains={1:10})@10", "open"),
    }


def test_a_gate_the_pruned_baseline_cannot_be_rescored_for_is_skipped_and_the_night_goes_on(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "p"
    assert night(write_project(folder, {"engine": "good"}), db_url)[0] == 0
    code, steps = night(write_project(folder, {"engine": "good"}), db_url)
    assert code == 0
    second = next(s["run"] for s in steps if s["step"] == "run")
    with Store.open(db_url) as store:  # retention prunes night 2, then it becomes the baseline
        assert store.prune_results(0, now=utcnow() + timedelta(days=1)) == [second]
        store.set_baseline("engine", second)
    added = '\n[[gates]]\nmetric = "ERR@20"\nmax_drop = 0.01\n'
    path = write_project(folder, {"engine": "bad"}, extra_alerts=added)
    result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
    assert result.exit_code == 1, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    [gate] = [s for s in steps if s["step"] == "gate"]
    assert (gate["config"], gate["testset"], gate["metric"]) == ("engine", "topics", "ERR@20")
    assert f"run {second} has no scores for ERR@20" in gate["skipped"]
    assert "pruned" in gate["skipped"]
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["baseline_run"] == second
    assert compare["verdicts"] == {"nDCG@10": "regression"}
    assert not [s for s in steps if s["step"] == "failed"]
    with Store.open(db_url) as store:
        alerts = {(a.kind, a.metric, a.state) for a in store.list_alerts()}
    assert alerts == {("regression", "nDCG@10", "open")}
