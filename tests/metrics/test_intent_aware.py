"""The intent-aware (diversity) measures by hand, their subtopic column, and where they are
refused. Agreement with ndeval through ir_measures is in ``test_ir_measures_names``."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics.evaluation import coded_qrels, evaluate

Cli = Callable[..., Any]  # the ``cli`` fixture (tests/conftest.py)

# q1 has subtopics 1 {a, c} and 2 {b, c}; the run ranks a, x (unjudged), c.
# q2 has one relevant subtopic {m}: a plain qrels degenerates to one subtopic a topic.
# q3 has judgments but none relevant: it scores 0.
QRELS = "q1 1 a 1\nq1 2 b 1\nq1 1 c 2\nq1 2 c 1\nq1 3 d 0\nq2 0 m 1\nq2 0 n 0\nq3 4 z 0\n"
RUN = "q1 Q0 a 1 3 r\nq1 Q0 x 2 2 r\nq1 Q0 c 3 1 r\nq2 Q0 n 1 2 r\nq2 Q0 m 2 1 r\nq3 Q0 z 1 1 r\n"

L2, L3, L5, L6 = (math.log2(n) for n in (2, 3, 5, 6))
# q1: gains 1 at rank 1 (a: subtopic 1 new), 0 at rank 2, 0.5 + 1 at rank 3 (c); the greedy
# ideal is c (2), then a or b (0.5 each), then the other (0.5)
Q1 = {
    "alpha_DCG@5": (1 + 1.5 / 2) / (2 * (1 + 0.5 / L3 + 0.25 / 2 + 0.125 / L5 + 0.0625 / L6)),
    "alpha_nDCG@5": (1 + 1.5 / 2) / (2 + 0.5 / L3 + 0.5 / 2),
    "ERR_IA@5": (1 + 1.5 / 3) / (2 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4 + 0.0625 / 5)),
    "nERR_IA@5": (1 + 1.5 / 3) / (2 + 0.5 / 2 + 0.5 / 3),
    "NRBP": (1 - 0.5 * 0.5) / 2 * (1 + 0.25 * 1.5),
    "nNRBP": (1 + 0.25 * 1.5) / (2 + 0.5 * 0.5 + 0.25 * 0.5),
    "AP_IA": ((1 + 2 / 3) / 2 + (1 / 3) / 2) / 2,
    "P_IA@5": (2 / 5 + 1 / 5) / 2,
    "P_IA@2": (1 / 2 + 0) / 2,
    "StRecall@1": 1 / 2,
    "StRecall@3": 1.0,
    # rel=2: only c for subtopic 1 counts, and N is 1
    "StRecall(rel=2)@1": 0.0,
    "AP_IA(rel=2)": 1 / 3,
    # judged_only: x goes, c is at rank 2
    "P_IA(judged_only=true)@2": (2 / 2 + 1 / 2) / 2,
    "alpha_nDCG(alpha=1)@3": (1 + 1 / 2) / (2 + 0),
}
# q2: m at rank 2, one subtopic
Q2 = {"alpha_nDCG@5": (1 / L3) / 1, "ERR_IA@5": (1 / 2) / (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4
      + 0.0625 / 5), "NRBP": 0.75 * 0.5, "AP_IA": 0.5, "StRecall@1": 0.0}  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "div.qrels", tmp_path / "div.run"
    qrels.write_text(QRELS, encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    return qrels, run


@pytest.mark.parametrize("name", sorted(Q1))
def test_each_measure_gives_its_worked_example(files: tuple[Path, Path], name: str) -> None:
    result = evaluate(*files, [name])
    values = dict(zip(result.query_ids, result.values[name], strict=True))
    assert values["q1"] == pytest.approx(Q1[name], abs=1e-12)
    if name in Q2:
        assert values["q2"] == pytest.approx(Q2[name], abs=1e-12)
    assert values["q3"] == 0.0  # no relevant subtopic


def test_other_measures_see_each_documents_highest_grade(files: tuple[Path, Path]) -> None:
    result = evaluate(*files, ["alpha_nDCG@5", "P@3", "NumRel"])
    assert result.values["NumRel"].tolist() == [3.0, 1.0, 0.0]  # a, b, c; m; none
    assert result.values["P@3"].tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_a_frame_with_a_subtopic_column_is_read_as_the_file(files: tuple[Path, Path]) -> None:
    rows = [line.split() for line in QRELS.splitlines()]
    frame = pd.DataFrame(rows, columns=["query_id", "subtopic", "doc_id", "grade"])
    frame = frame.astype({"subtopic": int, "grade": int})
    ours = evaluate(frame, files[1], ["nNRBP"]).values["nNRBP"]
    assert ours.tolist() == pytest.approx(evaluate(*files, ["nNRBP"]).values["nNRBP"].tolist())


def test_qrels_without_subtopics_refuse_the_measure_naming_what_is_missing(
    files: tuple[Path, Path],
) -> None:
    plain = pd.DataFrame([("q1", "a", 1)], columns=["query_id", "doc_id", "grade"])
    for qrels in (plain, coded_qrels(plain)):
        with pytest.raises(InputError, match=r"alpha_nDCG@20 needs judgments per subtopic"):
            evaluate(qrels, files[1], ["alpha_nDCG@20"])


def test_a_cutoff_is_required_where_ndeval_has_one() -> None:
    with pytest.raises(InputError, match="needs a cutoff"):
        evaluate(pd.DataFrame(), pd.DataFrame(), ["alpha_nDCG"])


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("q1 x a 1", r"div.qrels line 2: subtopic 'x' is not a whole number"),
        ("q1 -1 a 1", r"div.qrels line 2: subtopic '-1' is not a whole number"),
        ("q1 1 a 1", r"div.qrels line 2: duplicate judgment: query 'q1', subtopic 1, doc 'a'"),
        ("q1 1 b", r"div.qrels line 2: expected 4 fields, found 3"),
        ("q1 1 b high", r"div.qrels line 2: grade 'high' is not an integer"),
    ],
)
def test_a_malformed_subtopic_qrels_exits_2_naming_file_and_line(
    cli: Cli, tmp_path: Path, line: str, problem: str
) -> None:
    qrels, run = tmp_path / "div.qrels", tmp_path / "div.run"
    qrels.write_text(f"q1 1 a 1\n{line}\n", encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    result = cli(*["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "alpha_nDCG@20"])
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.stdout + result.stderr
    assert re.search(problem, message), message


def test_evaluate_prints_the_intent_aware_measures_by_their_names(
    cli: Cli,
    files: tuple[Path, Path],
) -> None:
    result = cli(
        *["evaluate", "--qrels", str(files[0]), "--run", str(files[1]), "-m", "MAP_IA",
         "-m", "alpha_nDCG(alpha=0.5)@5", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    means = json.loads(result.stdout)["means"]
    assert means["AP_IA"] == pytest.approx((Q1["AP_IA"] + Q2["AP_IA"]) / 3)
    assert means["alpha_nDCG@5"] == pytest.approx((Q1["alpha_nDCG@5"] + Q2["alpha_nDCG@5"]) / 3)


@pytest.mark.parametrize(
    "text",
    [
        QRELS,
        QRELS.replace(" ", "\t"),
        "# a diversity qrels\n" + QRELS.replace("q1 1 a 1", "q1  1 a\t1") + "\n",
        "q1 007 a 1\nq1 7 b 2\nq2 0 a -1\n",
    ],
)
def test_the_fast_read_of_diversity_qrels_is_the_line_pass(tmp_path: Path, text: str) -> None:
    from evalplat.formats.subtopic_qrels import _read_fast, _read_slow, read_subtopic_qrels

    path = tmp_path / "div.qrels"
    path.write_text(text, encoding="utf-8")
    slow = _read_slow(path)
    assert read_subtopic_qrels(path).equals(slow)
    fast = _read_fast(path)
    assert fast is None or fast.equals(slow)
    if text == QRELS:
        assert fast is not None  # a plain file takes the vectorised tiers
