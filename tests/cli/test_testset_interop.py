"""`testset import` and `testset export --format` with the judgment lists of Quepid, RRE,
OpenSearch SRW and LTR: each format round-trips, and a bad file leaves the database be."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store
from tests.cli.test_testset_cli import snapshot, write


def _query(text: str) -> dict[str, Any]:
    return {"template": "q.json", "placeholders": {"$query": text}}


RRE_RATINGS = {
    "index": "garden",
    "id_field": "id",
    "query_groups": [
        {
            "name": "grill",
            "queries": [_query("barbecue grill")],
            "relevant_documents": {"3": ["p-1"], "0": ["p-2"]},
        },
        {
            "name": "hose",
            "queries": [_query("garden hose")],
            "relevant_documents": {"p-7": {"gain": 2}},
        },
    ],
}
SRW_LIST = {
    "name": "garden",
    "type": "IMPORT_JUDGMENT",
    "judgmentRatings": [
        {
            "query": "barbecue grill",
            "ratings": [{"docId": "p-1", "rating": "3.000"}, {"docId": "p-2", "rating": "0.000"}],
        },
        {"query": "garden hose", "ratings": [{"docId": "p-7", "rating": 2}]},
    ],
}
# one file per format, written from its documented structure: ratings of the same queries
FILES = {
    "quepid": (
        "ratings.csv",
        "query,docid,rating\nbarbecue grill,p-1,3\nbarbecue grill,p-2,0\n"
        "garden hose,p-7,2\nlawn chairs,,\n",
    ),
    "rre": ("ratings.json", json.dumps(RRE_RATINGS, indent=2)),
    "srw": ("judgments.json", json.dumps(SRW_LIST, indent=2)),
    "ltr": (
        "judgments.txt",
        "# qid:1: barbecue grill\n# qid:2: garden hose\n"
        "3 qid:1 # p-1\n0 qid:1 # p-2\n2 qid:2 # p-7\n",
    ),
}


def _judgments(store: Store, name: str) -> dict[tuple[str, str], int]:
    content = store.load_test_set(name)
    frame = content.judgments.merge(content.queries[["query_id", "text"]], on="query_id")
    return {
        (t, d): int(g)
        for t, d, g in zip(frame["text"], frame["doc_id"], frame["grade"], strict=True)
    }


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_each_format_imports_exports_and_imports_back_to_the_same_version(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, store: Store, fmt: str
) -> None:
    name, text = FILES[fmt]
    source = write(tmp_path, name, text)
    first = cli("testset", "import", "garden", "--qrels", str(source), "--db", db_url)
    assert first.exit_code == 0, first.stderr
    assert _judgments(store, "garden") == {
        ("barbecue grill", "p-1"): 3, ("barbecue grill", "p-2"): 0, ("garden hose", "p-7"): 2,
    }  # fmt: skip
    out = tmp_path / f"exported-{name}"
    exported = cli("testset", "export", "garden", "--format", fmt, "-o", str(out), "--db", db_url)
    assert exported.exit_code == 0, exported.stderr
    assert exported.stdout.strip() == str(out)
    again = cli("testset", "import", "garden", "--qrels", str(out), "--format", fmt, "--db", db_url)
    assert again.exit_code == 0, again.stderr
    assert "unchanged: identical to garden@1" in again.stderr
    # detected from the content alone, too
    detected = cli("testset", "import", "garden", "--qrels", str(out), "--db", db_url)
    assert detected.exit_code == 0 and "identical to garden@1" in detected.stderr


def test_format_quepid_forces_a_file_the_extension_does_not_name(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, store: Store
) -> None:
    path = write(tmp_path, "ratings.export", FILES["quepid"][1])
    refused = cli("testset", "import", "g", "--qrels", str(path), "--db", db_url)
    assert refused.exit_code == 2 and "pass a format" in refused.stderr
    result = cli(
        "testset", "import", "g", "--qrels", str(path), "--format", "quepid", "--db", db_url
    )
    assert result.exit_code == 0, result.stderr
    assert "3 queries, 3 judgments" in result.stdout  # lawn chairs has no ratings and counts


def test_export_to_standard_output_and_from_a_plain_test_set(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", "7 0 d1 2\n7 0 d2 1\n")
    assert cli("testset", "import", "plain", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    quepid = cli("testset", "export", "plain", "--format", "quepid", "--db", db_url)
    # no text: the query is named by its id
    assert quepid.stdout.splitlines() == ["query,docid,rating", "7,d1,2", "7,d2,1"]
    ltr = cli("testset", "export", "plain@1", "--format", "ltr", "--db", db_url)
    assert ltr.stdout.splitlines()[1:] == ["2\tqid:7\t#\td1", "1\tqid:7\t#\td2"]


def test_a_bad_rating_is_refused_with_its_line_and_nothing_is_written(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    path = write(tmp_path, "ratings.csv", "query,docid,rating\ngrill,p-1,3\ngrill,p-2,2.5\n")
    before = snapshot(db_url)
    result = cli("testset", "import", "garden", "--qrels", str(path), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {path} line 3: rating '2.5' is not a whole number (grades are integers)"
    )
    assert snapshot(db_url) == before


def test_export_refuses_an_unknown_format_and_a_missing_folder(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", "1 0 d1 2\n")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    unknown = cli("testset", "export", "t", "--format", "xml", "--db", db_url)
    assert unknown.exit_code == 2 and "unknown format 'xml'" in unknown.stderr
    missing = tmp_path / "nowhere" / "out.csv"
    result = cli("testset", "export", "t", "--format", "quepid", "-o", str(missing), "--db", db_url)
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not missing.parent.exists()
