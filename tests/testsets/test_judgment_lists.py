"""The judgment lists of other tools (Quepid, RRE, SRW, LTR): what each reads, how its format
is told from the content, how its queries get ids, and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.formats.judgment_files import judgments_format, parse_judgments
from evalplat.formats.judgment_lists import positioned_json, text_query_id
from evalplat.testsets.content import load_testset

# written from each format's documented structure
QUEPID = (
    "query,docid,rating\n"
    "trail running shoes,sku-11,3\n"
    "trail running shoes,sku-12,1\n"
    '"waterproof jacket, women",sku-40,2\n'
    "gift ideas,,\n"
)
QUEPID_DETAILED = (
    "Team Name,Case Name,Case ID,Query Text,Doc ID,Title,Rating,brand\n"
    "outdoor,shoes,7,trail running shoes,sku-11,Ridge Runner,3,acme\n"
    "outdoor,shoes,7,trail running shoes,sku-13,Road Racer,,acme\n"
)
RRE = {
    "index": "catalogue",
    "id_field": "sku",
    "topics": [
        {
            "description": "footwear",
            "query_groups": [
                {
                    "name": "shoes-1",
                    "queries": [{"template": "q.json", "placeholders": {"$query": "trail shoes"}}],
                    "relevant_documents": {"3": ["sku-11"], "1": ["sku-12", "sku-14"]},
                }
            ],
        }
    ],
    "query_groups": [
        {
            "name": "Jackets for rain",
            "queries": [
                {"template": "q.json", "placeholders": {"$query": "rain jacket"}},
                {"template": "q.json", "placeholders": {"$query": "raincoat"}},
            ],
            "relevant_documents": {"sku-40": {"gain": 2}},
        }
    ],
}
SRW = {
    "name": "catalogue judgments",
    "type": "IMPORT_JUDGMENT",
    "judgmentRatings": [
        {"query": "trail shoes", "ratings": [{"docId": "sku-11", "rating": "3.000"},
                                             {"docId": "sku-12", "rating": 1}]},
        {"query": "rain jacket", "ratings": []},
    ],
}  # fmt: skip
LTR = (
    "# grade (0-3) qid # doc_id\n"
    "# qid:1: trail shoes\n"
    "# qid:2: rain jacket\n"
    "3 qid:1 # sku-11 Ridge Runner\n"
    "1 qid:1 1:0.5 2:3.0 # sku-12 Road Racer\n"
    "2\tqid:2\t#\tsku-40\n"
    "0 qid:3 # sku-70 socks\n"
    "1 qid:3 # sku-71 socks\n"
)


def _file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _pairs(path: Path, fmt: str | None = None) -> set[tuple[str, str, int]]:
    frame = parse_judgments(path, fmt).frame
    return set(zip(frame["query_id"], frame["doc_id"], frame["grade"].tolist(), strict=True))


def _texts(path: Path, fmt: str | None = None) -> dict[str, str]:
    queries = load_testset(path, format=fmt).queries
    return dict(zip(queries["query_id"], queries["text"], strict=True))


def test_a_quepid_csv_is_told_from_a_plain_csv_by_its_header(tmp_path: Path) -> None:
    quepid = _file(tmp_path, "ratings.csv", QUEPID)
    plain = _file(tmp_path, "judgments.csv", "query_id,doc_id,grade\n1,a,2\n")
    assert judgments_format(quepid) == "quepid"
    assert judgments_format(plain) == "csv"
    shoes, jacket = text_query_id("trail running shoes"), text_query_id("waterproof jacket, women")
    assert _pairs(quepid) == {(shoes, "sku-11", 3), (shoes, "sku-12", 1), (jacket, "sku-40", 2)}
    texts = _texts(quepid)
    assert texts[shoes] == "trail running shoes" and texts[jacket] == "waterproof jacket, women"
    assert texts[text_query_id("gift ideas")] == "gift ideas"  # a query nobody rated counts


def test_quepid_detailed_export_reads_its_ratings_and_skips_unrated_rows(tmp_path: Path) -> None:
    path = _file(tmp_path, "detailed.csv", QUEPID_DETAILED)
    assert _pairs(path) == {(text_query_id("trail running shoes"), "sku-11", 3)}


def test_query_ids_from_text_are_stable_and_free_of_whitespace() -> None:
    assert text_query_id("trail shoes") == text_query_id("  trail shoes ")
    assert text_query_id("trail shoes") != text_query_id("Trail shoes")
    assert text_query_id("trail shoes").startswith("q") and len(text_query_id("x")) == 13


def test_rre_reads_topics_groups_and_both_shapes_of_relevant_documents(tmp_path: Path) -> None:
    path = _file(tmp_path, "ratings.json", json.dumps(RRE, indent=2))
    assert judgments_format(path) == "rre"
    rain, coat = text_query_id("rain jacket"), text_query_id("raincoat")
    # a one-query group named like an id keeps its name; a group of two shares its documents
    assert _pairs(path) == {
        ("shoes-1", "sku-11", 3), ("shoes-1", "sku-12", 1), ("shoes-1", "sku-14", 1),
        (rain, "sku-40", 2), (coat, "sku-40", 2),
    }  # fmt: skip
    assert _texts(path)["shoes-1"] == "trail shoes"


def test_srw_reads_string_and_number_ratings_and_keeps_unrated_queries(tmp_path: Path) -> None:
    path = _file(tmp_path, "judgments.json", json.dumps(SRW))
    assert judgments_format(path) == "srw"
    shoes = text_query_id("trail shoes")
    assert _pairs(path) == {(shoes, "sku-11", 3), (shoes, "sku-12", 1)}
    assert set(_texts(path).values()) == {"trail shoes", "rain jacket"}
    wrapped = {"hits": {"hits": [{"_id": "x", "_source": SRW}]}}
    assert _pairs(_file(tmp_path, "get.json", json.dumps(wrapped)), "srw") == _pairs(path)


def test_ltr_reads_headers_features_and_a_repeated_trailing_text(tmp_path: Path) -> None:
    path = _file(tmp_path, "judgments.txt", LTR)
    assert judgments_format(path) == "ltr"
    assert judgments_format(_file(tmp_path, "qrels.txt", "1 0 d1 2\n")) == "trec"
    assert _pairs(path) == {
        ("1", "sku-11", 3), ("1", "sku-12", 1), ("2", "sku-40", 2), ("3", "sku-70", 0),
        ("3", "sku-71", 1),
    }  # fmt: skip
    # headers name queries 1 and 2; query 3 repeats "socks" on every line, titles differ on 1
    assert _texts(path) == {"1": "trail shoes", "2": "rain jacket", "3": "socks"}


@pytest.mark.parametrize(
    ("name", "fmt", "text", "line", "message"),
    [
        ("r.csv", None, "query,docid,rating\nshoes,a,3\nshoes,b,great\n", 3, "not a whole number"),
        ("r.csv", None, "query,docid,rating\nshoes,,2\n", 2, "missing doc id"),
        ("r.csv", None, "query,docid,rating\nshoes,a,3\nshoes,a,2\n", 3, "duplicate judgment"),
        ("r.csv", None, "query,docid,rating\n,a,3\n", 2, "missing query text"),
        ("r.csv", None, 'query,"docid,rating\nx,y,1\n', 1, "malformed CSV"),
        ("r.json", None, '{"judgmentRatings": [\n {"query": "a", "ratings": [\n'
         '  {"docId": "x", "rating": "2.5"}]}]}', 3, "'2.5' is not a whole number"),
        ("r.json", None, '{"judgmentRatings": [\n {"query": "a", "ratings": [\n'
         '  {"rating": 1}]}]}', 3, "missing docId"),
        ("r.json", None, '{"query_groups": [\n {"name": "g", "queries": [\n'
         '  {"template": "t", "placeholders": {"$query": "a"}}],\n'
         '  "relevant_documents": {"high": ["x"]}}]}', 4, "'high' is not a whole"),
        ("r.json", None, '{"query_groups": [\n {"name": "g", "queries": [\n'
         '  {"template": "t"}], "relevant_documents": {}}]}', 3, "without placeholders"),
        ("r.json", "rre", '{"queries": [}', 1, "invalid JSON"),
        ("l.txt", None, "3 qid:1 # a\nx qid:1 # b\n", 2, "grade 'x' is not an integer"),
        ("l.txt", None, "3 qid:1 # a\n2 qid:1 #\n", 2, "missing doc id"),
        ("l.txt", "ltr", "3 qid:1 a\n", 1, "missing '# doc_id'"),
        ("l.txt", None, "# qid:1: a\n# qid:1: b\n1 qid:1 # d\n", 2, "has the text 'b' here"),
    ],
)  # fmt: skip
def test_a_bad_line_is_one_error_naming_file_and_line(
    tmp_path: Path, name: str, fmt: str | None, text: str, line: int, message: str
) -> None:
    path = _file(tmp_path, name, text)
    with pytest.raises(InputError, match=message) as caught:
        load_testset(path, format=fmt)
    assert caught.value.path is not None and Path(caught.value.path) == path
    assert caught.value.line == line


def test_a_json_file_that_is_neither_rre_nor_srw_asks_for_a_format(tmp_path: Path) -> None:
    path = _file(tmp_path, "judgments.json", '{"ratings": []}')
    with pytest.raises(InputError, match="pass --format"):
        load_testset(path)


def test_a_queries_file_still_wins_over_the_texts_of_a_judgment_list(tmp_path: Path) -> None:
    ltr = _file(tmp_path, "j.txt", "# qid:1: from the list\n2 qid:1 # d1\n")
    queries = _file(tmp_path, "queries.tsv", "1\tfrom the queries file\n")
    content = load_testset(ltr, queries=queries)
    assert content.queries["text"].tolist() == ["from the queries file"]


def test_a_project_file_testset_takes_the_same_format_names(tmp_path: Path) -> None:
    from evalplat.nightly.prep import load_test_sets
    from evalplat.nightly.project import load_project

    _file(tmp_path, "ratings.export", QUEPID)
    project = tmp_path / "evalplat.toml"
    project.write_text(
        '[[testsets]]\nname = "shop"\nqrels = "ratings.export"\nformat = "quepid"\n\n'
        '[[configs]]\nname = "c"\nsearcher = "builtin"\ntestsets = ["shop"]\n',
        encoding="utf-8",
    )
    contents = load_test_sets(load_project(project), lambda _event: None)
    assert "trail running shoes" in contents["shop"].queries["text"].tolist()
    assert len(contents["shop"].judgments) == 3


class _Walked(str):
    """A text that counts the characters its ``count`` calls walk: how a reader that looks
    up lines by counting newlines from the start of the text spends its time."""

    walked = 0

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        first, last, _ = slice(start, end).indices(len(self))
        _Walked.walked += max(0, last - first)
        return super().count(sub, first, last)


def _walked_for(ratings: int) -> tuple[int, int]:
    """(characters walked finding every object's line, length) of an SRW list of ``ratings``."""
    entries = [{"query": f"query {q}", "ratings": [{"docId": f"d{q}", "rating": 1}]}
               for q in range(ratings)]  # fmt: skip
    text = _Walked(json.dumps({"judgmentRatings": entries}, indent=1))
    _Walked.walked = 0
    value, line_of = positioned_json(text, Path("srw.json"))
    for entry in value["judgmentRatings"]:
        line_of(entry)
        line_of(entry["ratings"][0])
    return _Walked.walked, len(text)


def test_finding_the_lines_of_a_json_list_walks_its_text_a_bounded_number_of_times() -> None:
    """The line of every object of an SRW or RRE file is found in time linear in the file
    (counting newlines from the start for each object made a 4 MB import take 76 s)."""
    small, small_length = _walked_for(500)
    large, large_length = _walked_for(2000)
    assert large_length > 3.9 * small_length
    assert small <= 2 * small_length and large <= 2 * large_length, (small, large)


def test_a_json_key_written_twice_is_refused_naming_the_key_and_line(tmp_path: Path) -> None:
    text = (
        '{"query_groups": [{"name": "g", "queries": [\n'
        ' {"template": "t", "placeholders": {"$query": "a"}}],\n'
        ' "relevant_documents": {"3": ["x"],\n'
        '  "3": ["y"]}}]}\n'
    )
    path = _file(tmp_path, "r.json", text)
    with pytest.raises(InputError, match=r"duplicate key '3'") as caught:
        load_testset(path)
    assert caught.value.line == 4
