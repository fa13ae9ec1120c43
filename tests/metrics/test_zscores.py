"""``evaluate -Z``: values standardised by a Z file, as trec_eval's ``-Z`` does.

Data: NIST trec_eval test data (usnistgov/trec_eval), see tests/data/trec_eval/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.cli.evaluate_direct import parse as parse_command_line
from evalplat.errors import InputError
from evalplat.metrics.evaluation import evaluate
from evalplat.metrics.zscores import MISSING_Z, read_zscores

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
Cli = Callable[..., Any]  # the ``cli`` fixture (tests/conftest.py)


def test_all_trec_with_z_gives_trec_eval_9s_output(cli: Cli) -> None:
    """Every line of trec_eval 9.0.8's ``-q -m all_trec -Z zscores_file`` output, but the run
    id, relstring and ``Rprec_mult_1.00`` (Rprec itself, printed once as ``Rprec``)."""
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"),
         "-m", "all_trec", "-q", "--format", "trec", "-Z", str(DATA / "v9.zscores_file")],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    skipped = ("runid", "relstring", "ZRprec_mult_1.00")
    expected = (DATA / "v9.out.test.aqZ").read_text(encoding="utf-8").splitlines()
    wanted = [line for line in expected if not line.startswith(skipped)]
    assert len(wanted) == 359
    assert sorted(result.stdout.splitlines()) == sorted(wanted)


def _z_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "z.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_rule_of_the_standardisation_by_hand(tmp_path: Path) -> None:
    """P@2 of four topics: a listed one, a flat one at its mean, a flat one off it, one the
    file lacks; q5 is unanswered, so it counts 0; RR's stddev is nan."""
    qrels = pd.DataFrame(
        [(q, d, 1) for q in ("q1", "q2", "q3", "q4", "q5") for d in ("a", "b")],
        columns=["query_id", "doc_id", "grade"],
    )
    run = pd.DataFrame(
        [("q1", "a", 2.0), ("q1", "x", 1.0), ("q2", "a", 2.0), ("q2", "b", 1.0),
         ("q3", "x", 2.0), ("q3", "y", 1.0), ("q4", "a", 1.0)],
        columns=["query_id", "doc_id", "score"],
    )  # fmt: skip
    z = read_zscores(_z_file(
        tmp_path,
        "q1 P_2 0.25 0.5\nq2 P_2 1 0\nq3 P_2 0.5 0\nq5 P_2 0.5 0.1\n"
        "q1 recip_rank 0.5 nan\n",
    ))  # fmt: skip
    result = evaluate(qrels, run, ["P@2", "RR"], zscores=z)
    p2 = dict(zip(result.query_ids, result.values["P@2"], strict=True))
    # q1: P@2 = 0.5, (0.5 - 0.25) / 0.5; q2: 1 = its mean; q3: 0 off a flat mean; q4: absent
    assert p2 == {"q1": 0.5, "q2": 0.0, "q3": MISSING_Z, "q4": MISSING_Z, "q5": 0.0}
    assert result.means["P@2"] == pytest.approx((0.5 + 2 * MISSING_Z) / 5)
    assert math.isnan(result.values["RR"][0])
    assert result.options["zscores"] == str(tmp_path / "z.txt")


def test_geometric_means_standardise_the_logarithm(tmp_path: Path) -> None:
    """gm_map's per-topic value in trec_eval is ln max(AP, 1e-5); its figure is exp of the
    mean z."""
    qrels = pd.DataFrame([("q1", "a", 1), ("q2", "a", 1)], columns=["query_id", "doc_id", "grade"])
    run = pd.DataFrame(
        [("q1", "a", 2.0), ("q2", "x", 2.0), ("q2", "a", 1.0)],
        columns=["query_id", "doc_id", "score"],
    )
    z = read_zscores(_z_file(tmp_path, "q1 gm_map -1 2\nq2 gm_map -1 2\n"))
    result = evaluate(qrels, run, ["GMAP"], zscores=z)
    expected = [(math.log(1.0) + 1) / 2, (math.log(0.5) + 1) / 2]
    assert list(result.values["GMAP"]) == pytest.approx(expected)
    assert result.means["GMAP"] == pytest.approx(math.exp(sum(expected) / 2))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("301 map 0.1 0.2\n301 P_5 0.3\n", "line 2: expected 4 fields"),
        ("301 map 0.1 high\n", "line 1: the stddev must be a number, got 'high'"),
        ("301 map 0.1 0.2\n\n301 map 0.2 0.2\n", "line 3: topic '301', measure 'map' again"),
        ("\n", "no means and standard deviations"),
    ],
)
def test_a_bad_z_file_exits_2_in_one_line_naming_file_and_line(
    cli: Cli, tmp_path: Path, text: str, problem: str
) -> None:
    path = _z_file(tmp_path, text)
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"),
         "-m", "map", "--zscores", str(path)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert f"{path}" in result.stderr and problem in result.stderr


def test_a_missing_z_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_zscores(tmp_path / "absent")


@pytest.mark.parametrize("args", [["-Z", "z.txt"], ["-Zz.txt"], ["--zscores=z.txt"]])
def test_the_plain_command_line_reads_every_spelling_of_the_option(args: list[str]) -> None:
    options = parse_command_line(["--qrels", "q", "--run", "r", *args])
    assert options is not None and options.zscores == Path("z.txt")
