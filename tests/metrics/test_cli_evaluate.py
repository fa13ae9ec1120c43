"""``evalplat evaluate`` and ``evalplat metrics list`` through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
Cli = Callable[..., Any]  # the ``cli`` fixture (tests/conftest.py)


def _evaluate(cli: Cli, *args: str) -> tuple[int, str, str]:
    result = cli(
        *["evaluate", "--qrels", str(DATA / "edge.qrels"), "--run", str(DATA / "edge.run"), *args],
    )
    return result.exit_code, result.stdout, result.stderr


def test_trec_format_reproduces_trec_eval_lines_byte_for_byte(cli: Cli) -> None:
    measures = ["map", "P_5", "ndcg_cut_10", "recip_rank", "bpref", "num_ret", "num_rel_ret"]
    code, out, _ = _evaluate(cli, "--format", "trec", "--per-query", *[f"-m{m}" for m in measures])
    assert code == 0
    expected = [
        line
        for line in (DATA / "edge.out.v10.q.all_trec").read_text(encoding="utf-8").splitlines()
        if line.split("\t")[0].strip() in measures
    ]
    assert sorted(out.splitlines()) == sorted(expected)


def test_all_trec_prints_every_value_of_trec_eval_9s_all_trec(cli: Cli) -> None:
    """``-m all_trec`` against trec_eval 9.0.8's ``-m all_trec`` output (NIST trec_eval test
    data): the same names, values at four decimals. ``Rprec_mult_1.00`` is Rprec itself and is
    printed once, as ``Rprec``; the run id and relstring are not measures."""
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"),
         "-m", "all_trec", "--format", "trec"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    ours = {line.split("\t")[0].strip(): line for line in result.stdout.splitlines()}
    expected = (DATA / "v9.out.test.a").read_text(encoding="utf-8").splitlines()
    skipped = {"runid", "relstring", "Rprec_mult_1.00"}
    wanted = [line for line in expected if line.split("\t")[0].strip() not in skipped]
    assert [ours.get(line.split("\t")[0].strip()) for line in wanted] == wanted


def test_json_output_has_snake_case_fields_and_the_run_only_warning(cli: Cli) -> None:
    code, out, err = _evaluate(cli, "--format", "json", "-m", "AP", "-m", "P@5", "--per-query")
    assert code == 0
    data = json.loads(out)
    assert round(data["means"]["AP"], 4) == 0.3024
    assert data["queries"] == 4
    assert {row["query_id"] for row in data["per_query"]} == {"A", "B", "C", "D"}
    assert "Z" in err


def test_csv_output_has_the_means(cli: Cli) -> None:
    code, out, _ = _evaluate(cli, "--format", "csv", "-m", "P@5")
    assert code == 0
    assert out.splitlines() == ["query_id,metric,value", "all,P@5,0.25"]


def test_default_metric_set_is_used_without_metric_options(cli: Cli) -> None:
    code, out, _ = _evaluate(cli)
    assert code == 0
    for name in ("nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10"):
        assert name in out


def test_duplicate_doc_in_run_exits_2_naming_the_line(cli: Cli) -> None:
    result = cli(
        *["evaluate", "--qrels", str(DATA / "edge.qrels"), "--run", str(DATA / "edge.run.dup")],
    )
    assert result.exit_code == 2
    assert "edge.run.dup line 2" in result.stderr


def test_unknown_metric_exits_2_with_suggestions(cli: Cli) -> None:
    code, _, err = _evaluate(cli, "-m", "nDGC@10")
    assert code == 2
    assert "did you mean" in err


def test_skip_missing_is_recorded_in_json_options(cli: Cli) -> None:
    code, out, _ = _evaluate(cli, "--format", "json", "--skip-missing", "-m", "AP")
    assert code == 0
    assert json.loads(out)["options"]["missing"] == "skip"


def test_metrics_list_json_covers_the_registry(cli: Cli) -> None:
    from evalplat.metrics import FAMILIES

    result = cli("metrics", "list", "--json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert [row["name"] for row in rows] == list(FAMILIES)
    assert all(row["formula"] and row["description"] for row in rows)


def test_commands_have_help_text(cli: Cli) -> None:
    for args in (["evaluate", "--help"], ["metrics", "list", "--help"]):
        result = cli(*args)
        assert result.exit_code == 0
        assert len(result.stdout.strip()) > 40


def test_cli_help_does_not_import_pandas_or_pyarrow() -> None:
    code = (
        "import sys; from evalplat.cli import app; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "pandas" not in out and "pyarrow" not in out


def test_evaluate_command_does_not_import_pandas() -> None:
    """pandas costs ~0.3 s of start-up; the file-to-numbers path never needs it."""
    code = (
        "import json, sys; from evalplat.cli import app\n"
        f"sys.argv = ['evalplat', 'evaluate', '--qrels', {str(DATA / 'edge.qrels')!r}, "
        f"'--run', {str(DATA / 'edge.run')!r}, '--format', 'trec', '-m', 'map', '-m', 'P_5']\n"
        "try:\n    app()\n    status = 0\nexcept SystemExit as stop:\n    status = stop.code or 0\n"
        "print(json.dumps({'exit': status, 'pandas': 'pandas' in sys.modules}), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {"exit": 0, "pandas": False}
    expected = [
        line
        for line in (DATA / "edge.out.v10.q.all_trec").read_text(encoding="utf-8").splitlines()
        if line.split("\t")[0].strip() in ("map", "P_5") and line.split("\t")[1] == "all"
    ]
    assert len(expected) == 2
    assert sorted(done.stdout.splitlines()) == sorted(expected)


def test_a_tab_separated_run_is_read_without_pandas_too(cli: Cli) -> None:
    """trec_eval's own test files separate fields with tabs and pad scores with spaces, which
    the whitespace-splitting reader handles; a Python scalar handed to pyarrow there would
    import pandas through its shim."""
    args = ["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test")]
    args += ["--format", "trec", "-m", "map", "-m", "P_10"]
    probe = (
        f"import sys; sys.argv = ['evalplat', *{args!r}]\n"
        "from evalplat.cli import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print('pandas' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
    assert "\t" in (DATA / "results.test").read_text(encoding="utf-8").splitlines()[0]
    in_process = cli(*args)  # pandas is loaded here
    assert in_process.exit_code == 0 and done.stdout == in_process.stdout
    assert done.stdout.count("\tall\t") == 2


def test_strict_topics_refuses_a_run_whose_queries_differ_in_one_line(cli: Cli) -> None:
    code, out, err = _evaluate(cli, "--strict-topics", "-m", "AP")
    assert code == 2
    assert out == ""
    assert err.strip().count("\n") == 0
    assert "1 not in the qrels (Z)" in err


def test_strict_topics_names_the_topics_missing_from_the_run(cli: Cli) -> None:
    result = cli(
        *["evaluate", "--qrels", str(DATA / "edge.qrels"), "--run", str(DATA / "edge.run.missingD"),
         "--strict-topics", "-m", "AP"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "1 not in the run (D)" in result.stderr


def test_strict_topics_scores_a_run_over_the_same_queries(cli: Cli) -> None:
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"),
         "--strict-topics", "-m", "map", "--format", "trec"],
    )  # fmt: skip
    assert result.exit_code == 0
    assert result.stdout == "map                   \tall\t0.1785\n"


def test_max_results_keeps_the_first_n_of_each_query_as_trec_eval_m(cli: Cli) -> None:
    """``-M100`` against trec_eval 9.0.8's ``-c -M100`` output (NIST trec_eval test data)."""
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.trunc"),
         "-M100", "-m", "num_ret", "-m", "map", "--format", "trec"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    expected = (DATA / "v9.out.test.aqcM").read_text(encoding="utf-8").splitlines()
    wanted = [line for line in expected if line.split("\t")[0].strip() in ("num_ret", "map")]
    assert result.stdout.splitlines() == [line for line in wanted if "\tall\t" in line]


def test_max_results_below_one_exits_2(cli: Cli) -> None:
    code, _, err = _evaluate(cli, "--max-results", "0", "-m", "AP")
    assert code == 2
    assert "max" in err.lower()
