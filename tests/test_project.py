"""The project file: paths relative to it, validation that names the table's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalplat.errors import InputError
from evalplat.nightly.project import load_project

GOOD = """
[database]
url = "sqlite:///evalplat.db"

[[testsets]]
name = "cranfield"
qrels = "testsets/cranfield/qrels.txt"
queries = "testsets/cranfield/queries.tsv"

[[configs]]
name = "docs-bm25"
searcher = "builtin"
testsets = ["cranfield"]
[configs.params]
tokenizer = "porter"

[metrics]
names = ["NDCG@10", "P@5", "AP"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
consecutive = 2

[[alerts]]
type = "webhook"
url = "${EVALPLAT_WEBHOOK_URL}"

[reports]
dir = "site"

[retention]
keep_results_days = 90
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "evalplat.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_project_paths_are_relative_to_the_file_and_names_canonical(tmp_path: Path) -> None:
    project = load_project(write(tmp_path, GOOD))
    assert project.testsets[0].qrels == tmp_path.resolve() / "testsets/cranfield/qrels.txt"
    assert project.reports_dir == tmp_path.resolve() / "site"
    assert project.metrics == ("nDCG@10", "P@5", "AP")
    assert project.configs[0].params == {"tokenizer": "porter"}
    assert project.gates[0].consecutive == 2 and project.gates[0].test == "randomization"
    assert project.gates[0].unjudged == "bound"  # the default guard
    assert project.alerts[0]["url"] == "${EVALPLAT_WEBHOOK_URL}"
    assert project.keep_results_days == 90


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (
            ('testsets = ["cranfield"]', 'testsets = ["trec"]'),
            13,
            "[[configs]] #1 key 'testsets': config 'docs-bm25' names test set 'trec', which is not"
            " defined in [[testsets]]",
        ),
        (
            ('metric = "nDCG@10"', 'metric = "nDGC@10"'),
            21,
            "[[gates]] #1 key 'metric': unknown metric 'nDGC@10'",
        ),
        (
            ("consecutive = 2", "consecutive = 0"),
            23,
            "[[gates]] #1 key 'consecutive': gate nDCG@10: must be a whole number ≥ 1",
        ),
        (
            ('searcher = "builtin"', 'searcher = "builtin"\nsercher = "x"'),
            13,
            "[[configs]] #1 key 'sercher': unknown key",
        ),
        (
            ("keep_results_days = 90", "keep_results_days = 0"),
            33,
            "[retention] key 'keep_results_days': must be a whole number of days ≥ 1",
        ),
        (
            ('names = ["NDCG@10"', 'nmes = 1\nnames = ["NDCG@10"'),
            18,
            "[metrics] key 'nmes': unknown key",
        ),
        (
            ("consecutive = 2", 'unjudged = "hope"'),
            23,
            "[[gates]] #1 key 'unjudged': gate nDCG@10:"
            " must be one of bound, needs_judgments, ignore",
        ),
        (
            ('names = ["NDCG@10", "P@5", "AP"]', "names = []"),
            18,
            "[metrics] key 'names': must be a non-empty list of metric names",
        ),
        (
            ('names = ["NDCG@10", "P@5", "AP"]', 'names = ["Prec@5"]'),
            18,
            "[metrics] key 'names': unknown metric 'Prec@5'",
        ),
        (
            ('names = ["NDCG@10", "P@5", "AP"]', 'names = ["AP" "P@5"]'),
            18,
            "invalid TOML: Unclosed array",
        ),
        (
            ("max_drop = 0.01", "max_drop = -1"),
            22,
            "[[gates]] #1 key 'max_drop': gate nDCG@10: must be a number ≥ 0",
        ),
        (
            ("max_drop = 0.01", 'max_drop = 0.01\ntest = "z-test"'),
            23,
            "[[gates]] #1 key 'test': gate nDCG@10: must be one of randomization, t-test, wilcoxon",
        ),
        (
            ("max_drop = 0.01", "max_drop = 0.01\nalpha = 1.5"),
            23,
            "[[gates]] #1 key 'alpha': gate nDCG@10: must be between 0 and 1",
        ),
        (
            ('type = "webhook"', 'kind = "webhook"'),
            25,
            "[[alerts]] #1 key 'type':"
            ' needs type = "webhook" (or slack, teams, email, junit, json)',
        ),
        (('url = "sqlite:///evalplat.db"', "url = 5"), 3, "[database] key 'url': must be a string"),
        (
            ('[configs.params]\ntokenizer = "porter"', 'params = "porter"'),
            14,
            "[[configs]] #1 key 'params': config 'docs-bm25': must be a table",
        ),
        (
            ('testsets = ["cranfield"]', 'testsets = "cranfield"'),
            13,
            "[[configs]] #1 key 'testsets': config 'docs-bm25': must be a list of names",
        ),
        (
            ('searcher = "builtin"', 'searcher = "builtin"\ndepth = 0'),
            13,
            "[[configs]] #1 key 'depth': config 'docs-bm25': must be a whole number ≥ 1",
        ),
        (
            ('qrels = "testsets/cranfield/qrels.txt"', "qrels = 3"),
            7,
            "[[testsets]] #1 key 'qrels': test set 'cranfield' qrels must be a file path",
        ),
        (
            ('name = "cranfield"', 'name = ""'),
            6,
            "[[testsets]] #1 key 'name': needs name = \"...\" (a non-empty string)",
        ),
        (('dir = "site"', "dir = 3"), 30, "[reports] key 'dir': dir must be a file path"),
        (
            ("keep_results_days = 90", "keep_results_days = 90\n[extras]"),
            34,
            "[extras]: unknown table",
        ),
        (
            ("[[configs]]", '[[testsets]]\nname = "cranfield"\nqrels = "q.txt"\n\n[[configs]]'),
            11,
            "[[testsets]] #2 key 'name': test set 'cranfield' is defined twice",
        ),
        (
            ("[metrics]", '[[configs]]\nname = "docs-bm25"\nsearcher = "builtin"\n\n[metrics]'),
            18,
            "[[configs]] #2 key 'name': config 'docs-bm25' is defined twice",
        ),
    ],
)
def test_invalid_project_names_the_table_the_key_and_its_line(
    tmp_path: Path, change: tuple[str, str], line: int, message: str
) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(InputError) as raised:
        load_project(path)
    assert f"evalplat.toml line {line}: " in str(raised.value)
    assert message in str(raised.value)


def test_a_gate_chooses_how_unjudged_documents_weigh(tmp_path: Path) -> None:
    text = GOOD.replace("consecutive = 2", 'unjudged = "needs_judgments"')
    assert load_project(write(tmp_path, text)).gates[0].unjudged == "needs_judgments"


def test_a_second_table_entry_is_named_by_its_number(tmp_path: Path) -> None:
    second = '[[configs]]\nname = "b"\nsearcher = "builtin"\ndepth = -1\n'
    with pytest.raises(InputError) as raised:
        load_project(write(tmp_path, GOOD + second))
    assert "evalplat.toml line 37: [[configs]] #2 key 'depth'" in str(raised.value)


@pytest.mark.parametrize("text", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "9" * 5000])
def test_pathological_toml_is_one_input_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="invalid TOML"):
        load_project(write(tmp_path, text))


def test_missing_project_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="project file not found"):
        load_project(tmp_path / "nope.toml")


def test_compare_to_must_name_a_config_of_the_project(tmp_path: Path) -> None:
    text = GOOD.replace('testsets = ["cranfield"]', 'testsets = ["cranfield"]\ncompare_to = "prod"')
    with pytest.raises(InputError, match="compare_to names 'prod'"):
        load_project(write(tmp_path, text))
    ok = GOOD.replace(
        'testsets = ["cranfield"]', 'testsets = ["cranfield"]\ncompare_to = "docs-bm25"'
    )
    assert load_project(write(tmp_path, ok)).configs[0].compare_to == "docs-bm25"


def test_unknown_key_in_a_plain_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\[reports\] key 'directory': unknown key"):
        load_project(write(tmp_path, GOOD.replace('dir = "site"', 'directory = "site"')))


def test_a_project_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evalplat.toml"
    path.write_bytes(GOOD.replace("docs-bm25", "d\xe9").encode("latin-1"))
    with pytest.raises(InputError, match=r"evalplat.toml: not UTF-8 text \(byte \d+\)"):
        load_project(path)


def test_a_test_set_declares_a_default_gain_map_for_its_gain_measures(tmp_path: Path) -> None:
    text = GOOD.replace(
        'queries = "testsets/cranfield/queries.tsv"',
        'queries = "testsets/cranfield/queries.tsv"\ngains = { 0 = 0, 1 = 1, 2 = 3, 3 = 10 }',
    )
    project = load_project(write(tmp_path, text))
    assert project.testsets[0].gains == ((2, 3), (3, 10))
    assert project.metrics_for("cranfield") == ["nDCG(gains={2:3,3:10})@10", "P@5", "AP"]
    assert project.gates_for("cranfield")[0].metric == "nDCG(gains={2:3,3:10})@10"
    assert project.metrics_for("other") == ["nDCG@10", "P@5", "AP"]


@pytest.mark.parametrize(
    ("gains", "message"),
    [
        ("{ 1 = -2 }", "the gain of grade 1 must be finite and ≥ 0"),
        ("{ a = 2 }", "grade 'a' is not an integer"),
        ("{ 1 = nan }", "must be finite"),
        ('{ 1 = "x" }', "must be a number"),
        ("[1, 2]", "must be a table of grade = gain"),
    ],
)
def test_a_bad_gain_map_names_the_file_the_table_and_the_key(
    tmp_path: Path, gains: str, message: str
) -> None:
    text = GOOD.replace(
        'queries = "testsets/cranfield/queries.tsv"',
        f'queries = "testsets/cranfield/queries.tsv"\ngains = {gains}',
    )
    with pytest.raises(InputError) as raised:
        load_project(write(tmp_path, text))
    assert "evalplat.toml line 9: [[testsets]] #1 key 'gains': " in str(raised.value)
    assert message in str(raised.value)
