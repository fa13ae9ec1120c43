"""The python searcher: a user function imported from a folder written by the test."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.searchers import SearchContext, SearchError, TransientSearchError, get_kind

ENGINE_SOURCE = """
from evalplat.searchers import TransientSearchError

CALLS = []

def search(query, depth, k1=1.2, token=None):
    CALLS.append((query, depth, k1, token))
    if query == "boom":
        raise ValueError("index not loaded")
    if query == "busy":
        raise TransientSearchError("engine busy", retry_after=1.0)
    if query == "dicts":
        return [{"id": "d9", "score": 2}, {"doc_id": 7}]
    if query == "bad":
        return [("d1", "high")]
    if query == "none":
        return None
    return [("d1", 3.0), ("d2", 1.5)][:depth]

class Engine:
    @staticmethod
    def query(query, depth):
        return [("s1", 1.0)]
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Name of a fresh module in a folder that is not on sys.path (restored afterwards)."""
    name = f"user_engine_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(ENGINE_SOURCE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return name


def python(tmp_path: Path, **params: Any) -> Any:
    return get_kind("python").create({"path": str(tmp_path), **params}, SearchContext())


def test_function_gets_query_depth_and_extra_params(tmp_path: Path, module: str) -> None:
    searcher = python(tmp_path, function=f"{module}:search", k1="0.9")
    assert searcher.search("q1", "heat", 1) == [("d1", 3.0)]
    calls = sys.modules[module].CALLS
    assert calls == [("heat", 1, "0.9", None)]


def test_extra_params_have_env_placeholders_expanded(
    tmp_path: Path, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_ENGINE_TOKEN", "t0k")
    searcher = python(tmp_path, function=f"{module}:search", token="${EVALPLAT_TEST_ENGINE_TOKEN}")
    searcher.search("q1", "heat", 2)
    assert sys.modules[module].CALLS[-1][3] == "t0k"


def test_dict_results_and_missing_scores_keep_the_order(tmp_path: Path, module: str) -> None:
    searcher = python(tmp_path, function=f"{module}:search")
    assert searcher.search("q", "dicts", 10) == [("d9", 2.0), ("7", 1.0)]


def test_a_dotted_attribute_is_callable(tmp_path: Path, module: str) -> None:
    assert python(tmp_path, function=f"{module}:Engine.query").search("q", "x", 5) == [("s1", 1.0)]


def test_exceptions_fail_the_query_with_their_message(tmp_path: Path, module: str) -> None:
    searcher = python(tmp_path, function=f"{module}:search")
    with pytest.raises(SearchError, match="ValueError: index not loaded") as error:
        searcher.search("q1", "boom", 1)
    assert not isinstance(error.value, TransientSearchError)
    with pytest.raises(TransientSearchError) as transient:
        searcher.search("q2", "busy", 1)
    assert transient.value.retry_after == 1.0


def test_malformed_return_values_are_named(tmp_path: Path, module: str) -> None:
    searcher = python(tmp_path, function=f"{module}:search")
    with pytest.raises(SearchError, match="non-numeric score 'high'"):
        searcher.search("q", "bad", 1)
    with pytest.raises(SearchError, match="returned NoneType"):
        searcher.search("q", "none", 1)


def test_import_problems_are_input_errors(tmp_path: Path, module: str) -> None:
    with pytest.raises(InputError, match="cannot import module 'no_such_engine_mod'"):
        python(tmp_path, function="no_such_engine_mod:search")
    with pytest.raises(InputError, match="has no 'serch'"):
        python(tmp_path, function=f"{module}:serch")
    with pytest.raises(InputError, match="module:function"):
        python(tmp_path, function="just_a_name")


def test_two_folders_with_a_module_of_the_same_name_each_get_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two projects in one process, each with its own ``engine.py``: each config searches with
    the module its ``path`` names, not the one imported first."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"engine_{uuid.uuid4().hex[:8]}"
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, doc in ((first, "from-first"), (second, "from-second")):
        folder.mkdir()
        (folder / f"{name}.py").write_text(
            f"def search(query, depth):\n    return [({doc!r}, 1.0)]\n"
        )
    try:
        one = python(first, function=f"{name}:search")
        two = python(second, function=f"{name}:search")
        assert [h[0] for h in one.search("q", "text", 10)] == ["from-first"]
        assert [h[0] for h in two.search("q", "text", 10)] == ["from-second"]
        again = python(first, function=f"{name}:search")
        assert [h[0] for h in again.search("q", "text", 10)] == ["from-first"]
    finally:
        sys.modules.pop(name, None)


@given(
    st.lists(
        st.tuples(
            st.one_of(st.text(max_size=5), st.integers(), st.none(), st.booleans()),
            st.one_of(
                st.floats(allow_nan=False), st.integers(-5, 5), st.none(), st.text(max_size=2)
            ),
        ),
        max_size=8,
    )
)
def test_plain_pairs_take_the_quick_path_to_the_same_hits(items: list[tuple[Any, Any]]) -> None:
    """``[(str, float)]`` is checked a column at a time; the hits, or the error, are those of
    the item-by-item reading whatever the mix of types."""
    from evalplat.searchers import base

    def read(quick: bool) -> Any:
        kept = base._plain_hits
        if not quick:
            base._plain_hits = lambda results: None  # type: ignore[assignment]
        try:
            return base.hits_from_results(items, "engine")
        except SearchError as error:
            return str(error)
        finally:
            base._plain_hits = kept

    assert read(quick=True) == read(quick=False)
