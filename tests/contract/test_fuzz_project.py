"""``nightly --dry-run``: a valid project file with one key of one table made bad is refused
naming the file and the key's line, and nothing is written.

The base file has every table; each line ``key = value`` of it is a place to corrupt, with
values that key must refuse (wrong types, out of range, non-finite, too long, control
characters). ``KNOWN`` lists values that were once accepted (judge settings, ``[[alerts]]``);
each is tried on its own by ``test_known_gaps``, so that it stays refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzzkit import FUZZ, HUGE_INT, refused

BASE = """\
[database]
url = "sqlite:///unused.db"

[[testsets]]
name = "main"
qrels = "qrels.txt"
queries = "queries.tsv"
docs = "docs.jsonl"
format = "trec"
gains = { 0 = 0, 1 = 1, 2 = 3 }

[[configs]]
name = "bm25"
searcher = "builtin"
testsets = ["main"]
label = "v1"
depth = 100
concurrency = 4

[[configs]]
name = "prod"
searcher = "builtin"
compare_to = "bm25"

[metrics]
names = ["nDCG@10", "P@5"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
max_relative_drop = 0.02
test = "randomization"
alpha = 0.05
consecutive = 1
within = 3
clear = 2
unjudged = "bound"
segment = "head"
testset = "main"

[[targets]]
metric = "P@5"
min = 0.5
config = "bm25"
testset = "main"
segment = "head"
consecutive = 2
within = 3
clear = 2
max_slide = 0.02
window = "30d"

[[judges]]
name = "gpt"
url = "http://127.0.0.1:9/v1"
model = "m"
scale = [0, 3]
temperature = 0
concurrency = 2
budget = 100
timeout = 30
retries = 3
min_kappa = 0.4

[nightly]
judge = "gpt"
judge_budget = 50

[[alerts]]
type = "json"
path = "alerts.json"

[online]
baseline = "bm25"
metrics = ["online:CTR"]
min_sessions = 30
retire_after_days = 7
agreement = [["nDCG@10", "online:CTR"]]

[[online.interleaving]]
candidate = "prod"
baseline = "bm25"

[[sweeps]]
config = "bm25"
testset = "main"
grid = { operator = ["or", "and"] }
metric = "nDCG@10"
folds = 2
seed = 0
max_runs = 4
strategy = "grid"
every = "week"

[reports]
dir = "reports"
base_url = "https://example.com/r/"

[retention]
keep_results_days = 90

[segments]
min_queries = 20
"""

STRING = ['""', "1", "true", "[]", "{}", '"\\u0000"', '"a\\u0001b"', f'"{"x" * 201}"']
WHOLE = ["0", "-1", "1.5", "true", '"1"', "inf", "nan", "[]", HUGE_INT, "2147483648"]
REAL = ["-1", "-inf", "inf", "nan", "true", '"0.1"', "[]", "1e400"]
FRACTION = ["0", "1", "-0.5", "1.5", "inf", "nan", "true", '"0.05"']
PATH = ['""', "1", "[]", '"\\u0000"']
NAMES = ["[1]", '["nosuch"]', '["main", 1]', "{}"]
METRIC = ['""', '"nosuch@10"', "1", '"P@0"', '"P@" ', f'"P@{"1" * 90}"', '"nDCG@10\\u0000"']
BAD: dict[str, list[str]] = {
    "url": ['""', "1", '"no-scheme"', '"http://\\u0000"'],
    "name": [*STRING, '"a@b"'],
    "qrels": [*PATH, '"missing.txt"'],
    "queries": [*PATH, '"missing.tsv"'],
    "docs": [*PATH, '"missing.jsonl"'],
    "format": ['"xml"', "1", '""'],
    "gains": ["1", "{ x = 1 }", "{ 1 = -1 }", "{ 1 = inf }", "{ 1 = nan }", '{ 1 = "3" }',
              "{ 1 = true }", "{ 99999999999 = 1 }", "[1, 2]"],
    "searcher": ['"nosuch"', "1", '""'],
    "testsets": [*NAMES[:-1], '"main"'],
    "label": ["1", '"a\\u0001"', f'"{"x" * 201}"', '"\\u0000"'],
    "depth": [*WHOLE, "100001"],
    "concurrency": [*WHOLE, "1001"],
    "compare_to": ['"nosuch"', "1", '""'],
    "metrics": ["[]", "[\"nDCG@10\"]", "[\"nosuch\"]", "\"online:CTR\"", "[1]"],
    "agreement": ['"nDCG@10"', "[[]]", '[["nDCG@10"]]', '[["nDCG@10", "AP"]]', "[[1, 2]]",
                  '[["online:CTR", "online:CTR"]]', '[["nosuch", "online:CTR"]]', "{}"],
    "names": ["[]", '["nosuch"]', '"nDCG@10"', "[1]", f'["P@{"1" * 90}"]'],
    "metric": METRIC,
    "max_drop": REAL,
    "max_relative_drop": REAL,
    "test": ['"z-test"', "1", '""'],
    "alpha": FRACTION,
    "consecutive": [*WHOLE, "61"],
    "within": [*WHOLE, "61"],
    "clear": [*WHOLE, "61"],
    "unjudged": ['"maybe"', "1"],
    "segment": ['""', "1", '"a\\u0001"', f'"{"s" * 80}"', '"\\u0000"'],
    "testset": ['"nosuch"', "1", "[]"],
    "min": ["inf", "nan", '"0.5"', "true", "[]"],
    "config": ['"nosuch"', "1"],
    "max_slide": REAL,
    "window": ['"30"', '"0d"', '"-1d"', '"d"', "30", f'"{"9" * 30}d"', '"\\u0663d"'],
    "model": ['""', "1"],
    "scale": ["[3, 0]", "[0]", '["0", "3"]', "[0, 101]", "[-1, 3]", "3"],
    "temperature": REAL,
    "budget": ["-1", "1.5", "true", "inf", HUGE_INT],
    "timeout": REAL,
    "retries": ["-1", "1.5", "true", "inf"],
    "min_kappa": ["-2", "2", "nan", "inf", "true", '"0.4"'],
    "judge": ['"nosuch"', "1"],
    "judge_budget": ["-1", "1.5", "true", "inf", '"50"'],
    "type": ['"nosuch"', "1"],
    "path": ["1", '""'],
    "baseline": ['"nosuch"', '"bm25@x"', '"bm25@0"', "1", '""'],
    "candidate": ['"nosuch"', '"prod@x"', '"prod@0"', "1", '""', '"bm25"'],
    "min_sessions": WHOLE,
    "retire_after_days": WHOLE,
    "dir": ["1", '""'],
    "base_url": ['"ftp://x"', "1", '""'],
    "keep_results_days": WHOLE,
    "min_queries": WHOLE,
    "grid": ["1", "{}", "[]", "{ operator = \"or\" }", "{ operator = [] }",
             "{ nosuch = [1, 2] }", "{ operator = [\"xor\"] }", "{ operator = [[1]] }",
             "{ weights = { title = [inf] } }", "{ weights = { title = [-1] } }",
             "{ operator = [\"or\", \"and\"], tokenizer = [\"porter\", \"ascii\", \"x\"] }"],
    "folds": [*WHOLE, "1"],
    "seed": ["-1", "1.5", "true", '"1"', "inf", "4294967296"],
    "max_runs": [*WHOLE, "10001"],
    "strategy": ['"nosuch"', "1", '""'],
    "every": ['"day"', "1", '""', '"weekly"', "[]"],
}  # fmt: skip
LINES = BASE.splitlines()


def places() -> list[tuple[int, str, str]]:
    """(line, table, key) of every ``key = value`` line of the base file."""
    found, table = [], ""
    for n, line in enumerate(LINES, start=1):
        if line.startswith("["):
            table = line.strip("[]")
        elif " = " in line:
            found.append((n, table, line.split(" = ", 1)[0]))
    return found


PLACES = places()
# Judge settings and [[alerts]] values once accepted, or refused without the file and line.
KNOWN = {
    *(("judges", key, v) for key in ("temperature", "timeout") for v in ("inf", "nan", "1e400")),
    ("judges", "concurrency", "2147483648"),
    ("judges", "concurrency", "1001"),
    ("judges", "url", '"http://\\u0000"'),
    ("judges", "min_kappa", "true"),
    ("alerts", "type", '"nosuch"'),
    ("alerts", "path", "1"),
}
# Errors found where the line is not the key's own: a missing file is named itself, and an
# unknown searcher kind names its [[configs]] table.
WHERE = {"qrels": "missing.txt", "queries": "missing.tsv", "docs": "missing.jsonl"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    (tmp_path / "queries.tsv").write_text("q1\tone\t1\thead\nq2\ttwo\n", encoding="utf-8")
    (tmp_path / "docs.jsonl").write_text('{"id": "d1", "text": "one"}\n', encoding="utf-8")
    return tmp_path


def cases() -> list[tuple[int, str, str, str]]:
    return [
        (n, table, key, value)
        for n, table, key in PLACES
        for value in BAD[key] + (['"online"'] if table == "[testsets]" and key == "name" else [])
        if (table.strip("[]"), key, value) not in KNOWN
    ]


def check(
    cli: Callable[..., Any], db_url: str, folder: Path, n: int, table: str, key: str, value: str
) -> None:
    lines = list(LINES)
    lines[n - 1] = f"{key} = {value}"
    path = folder / "evalplat.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    where = ["evalplat.toml", f"line {n}"]
    if key in WHERE and value.strip('"') == WHERE[key]:
        where = [WHERE[key]]
    elif key == "searcher" and value == '"nosuch"':
        where = ["evalplat.toml", "line ", "unknown searcher"]
    refused(f"nightly --dry-run [{table.strip('[]')}]", cli, db_url, "nightly", "--dry-run",
            "--project", str(path), where=where)  # fmt: skip


def test_the_base_project_is_valid(cli: Callable[..., Any], db_url: str, folder: Path) -> None:
    path = folder / "evalplat.toml"
    path.write_text(BASE, encoding="utf-8")
    result = cli("nightly", "--dry-run", "--project", str(path), "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert all(key in BAD for _, _, key in PLACES)


@settings(FUZZ, max_examples=100)
@given(case=st.sampled_from(cases()))
def test_a_bad_value_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, case: tuple[int, str, str, str]
) -> None:
    check(cli, db_url, folder, *case)


@pytest.mark.parametrize(("table", "key", "value"), sorted(KNOWN))
def test_known_gaps(
    cli: Callable[..., Any], db_url: str, folder: Path, table: str, key: str, value: str
) -> None:
    n = next(n for n, t, k in PLACES if t.strip("[]") == table and k == key)
    check(cli, db_url, folder, n, table, key, value)
