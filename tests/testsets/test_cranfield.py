"""The bundled Cranfield test set and the script that converts it from the Glasgow files."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from evalplat.resources import bundled_testset
from evalplat.testsets.content import TestSetContent, load_testset

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO.parent / "shared" / "data" / "cranfield"
OUTPUTS = ("qrels.txt", "queries.tsv", "docs.jsonl")


@pytest.fixture(scope="module")
def converter() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "convert_cranfield", REPO / "scripts" / "convert_cranfield.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cranfield() -> TestSetContent:
    folder = bundled_testset("cranfield")
    return load_testset(folder / "qrels.txt", folder / "queries.tsv", folder / "docs.jsonl")


def test_bundled_cranfield_has_every_query_document_and_judgment(
    cranfield: TestSetContent,
) -> None:
    assert cranfield.documents is not None
    assert cranfield.queries["query_id"].tolist() == [str(n) for n in range(1, 226)]
    assert cranfield.documents["doc_id"].tolist() == [str(n) for n in range(1, 1401)]
    # 1837 qrels lines, no repeated pair, -1 kept as grade 0: one judgment per line
    assert len(cranfield.judgments) == 1837


def test_bundled_cranfield_grades_are_remapped_so_higher_is_better(
    cranfield: TestSetContent,
) -> None:
    counts = Counter(cranfield.judgments["grade"].tolist())
    # source codes 1/2/3/4/-1 occur 128/387/734/363/225 times; g' = 5 - g, -1 -> 0
    assert counts == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}
    relevant = cranfield.judgments[cranfield.judgments["grade"] >= 1]
    assert relevant["query_id"].nunique() == 225  # every query has a relevant document


def test_bundled_cranfield_queries_are_numbered_by_position(cranfield: TestSetContent) -> None:
    texts = dict(zip(cranfield.queries["query_id"], cranfield.queries["text"], strict=True))
    assert "heat conduction in composite slabs" in texts["3"]  # .I 004 in cran.qry
    assert texts["4"].startswith("can a criterion be developed")  # .I 008
    judged_q3 = cranfield.judgments[cranfield.judgments["query_id"] == "3"]
    assert {"5", "6", "90"} <= set(judged_q3[judged_q3["grade"] >= 1]["doc_id"])
    assert not any("\r" in text or "  " in text for text in texts.values())


def test_bundled_cranfield_keeps_empty_abstracts_and_extra_fields(
    cranfield: TestSetContent,
) -> None:
    assert cranfield.documents is not None
    docs = cranfield.documents.set_index("doc_id")
    assert docs.loc["471", "text"] == "" and docs.loc["995", "text"] == ""
    assert (docs["text"] != "").sum() == 1398
    assert docs.loc["1", "title"].startswith("experimental investigation of the aerodynamics")
    assert docs.loc["1", "fields"] == (
        '{"author":"brenckman,m.","bibliography":"j. ae. scs. 25, 1958, 324."}'
    )
    # a stray ".A" line inside doc 240's abstract does not cut the abstract short
    assert "application to turbulent separations" in docs.loc["240", "text"]
    assert not docs["text"].str.contains(r"(?:^|\s)\.[ABTW](?:\s|$)").any()


def test_converter_reproduces_the_committed_files_byte_for_byte(
    converter: ModuleType, tmp_path: Path
) -> None:
    if not SOURCE.is_dir():
        pytest.skip(f"the Cranfield source folder is not next to the checkout ({SOURCE.name})")
    assert converter.main([str(SOURCE), "--out", str(tmp_path)]) == 0
    for name in OUTPUTS:
        produced = (tmp_path / name).read_bytes()
        assert produced == (REPO / "testsets" / "cranfield" / name).read_bytes(), name


@pytest.mark.parametrize(("code", "grade"), [(1, 4), (2, 3), (3, 2), (4, 1), (-1, 0)])
def test_relevance_codes_map_to_higher_is_better_grades(
    converter: ModuleType, code: int, grade: int
) -> None:
    assert converter.remap_grade(code) == grade


@pytest.mark.parametrize("code", [0, 5, -2])
def test_an_unknown_relevance_code_stops_the_conversion(converter: ModuleType, code: int) -> None:
    with pytest.raises(converter.ConversionError, match=f"unexpected relevance code {code}"):
        converter.remap_grade(code)


def test_converter_reads_smart_records_with_every_quirk(
    converter: ModuleType, tmp_path: Path
) -> None:
    queries = tmp_path / "cran.qry"
    queries.write_bytes(b".I 001\r\n.W\r\nfirst  query\r\ntext .\r\n.I 004\r\n.W\r\nsecond .\r\n")
    assert converter.read_queries(queries) == [(1, "first query text ."), (2, "second .")]
    docs = tmp_path / "cran.all.1400"
    docs.write_text(
        ".I 1\n.T\ntitle\n.A\nsmith\n.B\njournal\n.W\nabstract starts\n.A\ncontinues .\n"
        ".I 2\n.T\n.A\n.B\n.W\n",
        encoding="ascii",
    )
    assert converter.read_documents(docs) == [
        {
            "id": "1",
            "title": "title",
            "text": "abstract starts continues .",
            "author": "smith",
            "bibliography": "journal",
        },
        {"id": "2", "title": "", "text": "", "author": "", "bibliography": ""},
    ]
    qrels = tmp_path / "cranqrel"
    qrels.write_text("1 184 2 \n1 29 -1 \n", encoding="ascii")
    assert [(j.query_id, j.doc_id, j.grade) for j in converter.read_qrels(qrels)] == [
        (1, 184, 3),
        (1, 29, 0),
    ]
    qrels.write_text("1 184 2\n1 184 3\n", encoding="ascii")
    with pytest.raises(converter.ConversionError, match="line 2: repeated pair"):
        converter.read_qrels(qrels)
