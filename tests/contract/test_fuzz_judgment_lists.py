"""``testset import`` of other tools' judgment lists (Quepid CSV, RRE and SRW JSON): a valid
list with one value made bad, or one key written twice, is refused naming the file and the
line, and nothing is written (on both databases).

The JSON bases are written one object per line, so the line of each value is known: a rating's
docId and rating are on the rating's line, an RRE document's gain on its document's line, a
query's text on its query's line. A key written twice is named at its second value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .fuzzkit import (
    BAD_GRADE,
    BAD_ID,
    BAD_TEXT,
    FUZZ,
    HUGE_INT,
    J_BAD_GRADE,
    J_BAD_ID,
    Field,
    corrupt_line,
    encode,
    placed,
    refused,
)

QUEPID = [["trail shoes", "a", "3"], ["trail shoes", "b", "1"], ["rain jacket", "c", "2"]]
# JSON text of a value a field must refuse: what ``json.dumps`` writes, and integers past
# Python's 4300 digits, which only their text can hold
J_GRADES = [*map(json.dumps, J_BAD_GRADE), HUGE_INT, "-" + HUGE_INT]
J_IDS = [*map(json.dumps, J_BAD_ID), HUGE_INT]
J_TEXTS = [*map(json.dumps, [*BAD_TEXT, "", " ", None, 1, [], {}])]


def _srw(parts: list[list[str]], twice: int | None = None) -> str:
    """An SRW list, one object a line (``SRW_LINES``): ``parts`` are the JSON texts of the
    query texts, doc ids and ratings; ``twice``: the line whose rating names its key twice."""
    query, doc, rating = parts
    lines = ['{"name": "l", "type": "IMPORT_JUDGMENT", "judgmentRatings": [']
    for entry, own in ((0, [0, 1]), (1, [2])):
        lines.append(f' {{"query": {query[entry]}, "ratings": [')
        for n, at in enumerate(own):
            again = f', "rating": {rating[at]}' if twice == len(lines) + 1 else ""
            end = "," if n < len(own) - 1 else "]}," if entry == 0 else "]}]}"
            lines.append(f'  {{"docId": {doc[at]}, "rating": {rating[at]}{again}}}{end}')
    return "\n".join(lines) + "\n"


def _rre(parts: list[list[str]], twice: int | None = None) -> str:
    """An RRE ratings file, one object a line (``RRE_LINES``): a group with documents in the
    doc -> gain shape, one in the gain -> docs shape; ``parts`` are the JSON texts of the query
    texts, doc ids and gains; ``twice``: line 4 names its document twice."""
    text, doc, gain = parts
    again = ', "a": {"gain": 0}' if twice == 4 else ""
    lines = [
        '{"index": "i", "query_groups": [',
        f' {{"name": "g1", "queries": [{{"template": "t", "placeholders": {{"$q": {text[0]}}}}}],',
        '  "relevant_documents": {',
        f'   {doc[0]}: {{"gain": {gain[0]}}}{again},',
        f'   {doc[1]}: {{"gain": {gain[1]}}}}}}},',
        f' {{"name": "g2", "queries": [{{"template": "t", "placeholders": {{"$q": {text[1]}}}}}],',
        f'  "relevant_documents": {{{gain[2]}: [{doc[2]}]}}}}]}}',
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


GOOD = {
    "srw": [['"trail shoes"', '"rain jacket"'], ['"a"', '"b"', '"c"'], ["3", "1", '"2.000"']],
    "rre": [['"trail shoes"', '"rain jacket"'], ['"a"', '"b"', '"c"'], ["3", "1", '"2"']],
}
WRITE = {"srw": _srw, "rre": _rre}
# the line of each value by position: query texts, doc ids, grades
LINES = {"srw": ([2, 5], [3, 4, 6], [3, 4, 6]), "rre": ([2, 6], [4, 5, 7], [4, 5, 7])}
# lines where a key can be written twice
TWICE = {"srw": [3, 4, 6], "rre": [4]}


@st.composite
def judgment_list(draw: st.DrawFn, kind: str) -> tuple[str, bytes, int]:
    if kind == "quepid":
        ids = [v for v in BAD_ID if v and "," not in v and "\n" not in v and "\u2028" not in v]
        grades = [v for v in BAD_GRADE if v.strip()]  # an empty rating is "shown, not rated"
        fields = [Field(0, BAD_TEXT), Field(1, ids), Field(2, grades)]
        return ("ratings.csv", *corrupt_line(draw, QUEPID, fields, ",", "query,docid,rating"))
    name = f"{kind}.json"
    if draw(st.integers(0, 4)) == 0:  # a key twice
        line = draw(st.sampled_from(TWICE[kind]))
        return (name, encode(WRITE[kind](GOOD[kind], line)), line)
    parts = [list(part) for part in GOOD[kind]]
    what = draw(st.integers(0, 2))
    at = draw(st.integers(0, len(parts[what]) - 1))
    bad = [J_TEXTS, J_IDS, J_GRADES][what]
    if kind == "rre" and what == 1 and at < 2:  # a doc id that is a key: a string
        bad = [json.dumps(v) for v in J_BAD_ID if isinstance(v, str)]
    if kind == "rre" and what == 2 and at == 2:  # a gain that is a key: a string
        bad = [json.dumps(v) for v in BAD_GRADE]
    parts[what][at] = draw(st.sampled_from(bad))
    return (name, encode(WRITE[kind](parts)), LINES[kind][what][at])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


@pytest.mark.parametrize("kind", ["srw", "rre"])
def test_the_bases_import(cli: Callable[..., Any], db_url: str, folder: Path, kind: str) -> None:
    path = folder / f"{kind}.json"
    path.write_text(WRITE[kind](GOOD[kind]), encoding="utf-8")
    result = cli("testset", "import", "t", "--qrels", str(path), "--json", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["judgments"] == 3


@pytest.mark.parametrize("kind", ["quepid", "srw", "rre"])
@FUZZ
@given(data=st.data())
def test_a_bad_value_of_a_judgment_list_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, kind: str, data: st.DataObject
) -> None:
    path, where = placed(folder, data.draw(judgment_list(kind)))
    refused(f"testset import --qrels ({kind})", cli, db_url, "testset", "import", "t",
            "--qrels", path, where=where)  # fmt: skip


def _rre_with(gain: str = "3", text: str = '"trail shoes"') -> str:
    return _rre([[text, '"rain jacket"'], ['"a"', '"b"', '"c"'], [gain, "1", '"2"']])


def _srw_with(text: str) -> str:
    return _srw([[text, '"rain jacket"'], ['"a"', '"b"', '"c"'], ["3", "1", "2"]])


@pytest.mark.parametrize(
    ("name", "text", "line", "problem"),
    [
        ("gain.json", _rre_with(gain="7" * 5000), 4, "a number of more than 4300 digits"),
        ("surrogate.json", _srw_with('"\\ud800"'), 2, "query text contains a lone surrogate"),
        ("placeholder.json", _rre_with(text='"a\\udfffb"'), 2, "contains a lone surrogate"),
        ("twice.json", _rre([*GOOD["rre"]], twice=4), 4, "duplicate key 'a'"),
        ("rating.json", _srw([*GOOD["srw"]], twice=4), 4, "duplicate key 'rating'"),
    ],
)
def test_inputs_that_gave_tracebacks_or_lost_a_document_are_refused(
    cli: Callable[..., Any], db_url: str, folder: Path, name: str, text: str, line: int,
    problem: str,
) -> None:  # fmt: skip
    path = folder / name
    path.write_text(text, encoding="utf-8")
    refused(f"testset import --qrels {name}", cli, db_url, "testset", "import", "t",
            "--qrels", str(path), where=[name, f"line {line}", problem])  # fmt: skip
