"""The response path language of the http searcher: what it selects, and how it says where a
response did not have the shape the config expects."""

from __future__ import annotations

from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.searchers.base import SearchError
from evalplat.searchers.response_path import parse_path, select_hits, select_one

RESPONSE = {
    "data": [
        {"items": [{"id": "a", "score": 2}, {"id": "b"}]},
        {"items": [{"id": "c", "score": 1}]},
    ],
    "meta": {"total": 3, "empty": {}, "nothing": None},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("data[].items", ["a", "b", "c"]),
        ("data[-1].items", ["c"]),
        ("data[0].items[]", ["a", "b"]),
    ],
)
def test_hits_are_selected_and_flattened(path: str, expected: list[str]) -> None:
    hits = select_hits(RESPONSE, parse_path(path))
    assert [select_one(hit, parse_path("id")) for hit in hits] == expected


def test_a_response_that_is_a_list_is_read_from_its_start() -> None:
    assert select_hits([[{"id": "x"}]], parse_path("[0]")) == [{"id": "x"}]
    assert select_hits([{"id": "x"}], parse_path("")) == [{"id": "x"}]


@pytest.mark.parametrize("text", ["data..items", "data.[0]", "data[x]", "[0].[1]", "a]"])
def test_an_invalid_path_is_an_input_error_naming_the_segment(text: str) -> None:
    with pytest.raises(InputError, match="invalid response path") as raised:
        parse_path(text)
    assert repr(text) in str(raised.value)


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (RESPONSE, "meta", "response path 'meta' is an object with keys total, empty, nothing, "),
        ({}, "", "response path '(the response)' is an empty object, not a list of hits"),
        (RESPONSE, "meta.total[0]", "response 'meta.total' is a int, not a list"),
        (RESPONSE, "data[5].items", "response 'data' has no element 5"),
        (
            RESPONSE,
            "data[].hits",
            "response has no 'data[].hits' (found an object with keys items)",
        ),
        (RESPONSE, "meta.nothing.x", "response has no 'meta.nothing.x' (found null)"),
        (RESPONSE, "meta.empty.x", "(found an empty object)"),
        ({"hits": [[1, 2]]}, "hits[0][7]", "response 'hits[0]' has no element 7"),
    ],
)
def test_a_response_of_the_wrong_shape_says_how_far_the_path_got(
    document: Any, path: str, message: str
) -> None:
    with pytest.raises(SearchError) as raised:
        select_hits(document, parse_path(path))
    assert message in str(raised.value)


def test_a_field_path_gives_one_value_or_none_when_missing() -> None:
    hit = {"fields": {"id": ["d1", "d2"]}, "score": 1.5}
    assert select_one(hit, parse_path("fields.id[0]")) == "d1"
    assert select_one(hit, parse_path("fields.title")) is None
    with pytest.raises(SearchError, match=r"field path 'fields.id\[\]' gives 2 values in a hit"):
        select_one(hit, parse_path("fields.id[]"))
