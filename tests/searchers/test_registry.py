"""The searcher registry: declared params, validation of stored params, ${ENV} expansion."""

from __future__ import annotations

import pytest

from evalplat.errors import InputError, NotFoundError
from evalplat.searchers import SEARCHERS, expand_env, get_kind, has_placeholder


def test_registry_names_every_kind_with_description_and_documented_params() -> None:
    assert set(SEARCHERS) == {"builtin", "http", "sql", "python", "command"}
    for name, kind in SEARCHERS.items():
        assert kind.name == name
        assert kind.description and "\n" not in kind.description
        for param in kind.params:
            assert param.help, f"{name}.{param.name} has no help"


def test_unknown_kind_lists_the_valid_ones() -> None:
    with pytest.raises(NotFoundError, match="builtin, http, sql, python, command"):
        get_kind("vespa")


def test_validation_fills_defaults() -> None:
    params = get_kind("builtin").validate({})
    assert params == {"tokenizer": "porter", "operator": "or", "weights": {}}


def test_validating_validated_params_changes_nothing() -> None:
    for name, given in [
        ("http", {"url": "http://x", "preset": "solr"}),
        ("sql", {"url": "u", "query": "q"}),
    ]:
        once = get_kind(name).validate(given)
        assert get_kind(name).validate(once) == once


def test_unknown_param_is_refused_and_valid_params_listed() -> None:
    with pytest.raises(InputError, match="no param 'tokeniser'; valid params: tokenizer"):
        get_kind("builtin").validate({"tokeniser": "porter"})


def test_choices_are_enforced() -> None:
    with pytest.raises(InputError, match="must be one of porter, unicode61, trigram"):
        get_kind("builtin").validate({"tokenizer": "snowball"})


def test_strings_from_the_command_line_are_converted_to_the_declared_type() -> None:
    params = get_kind("http").validate(
        {"url": "http://x", "timeout": "2.5", "retries": "5", "verify": "no", "fields": "a b"}
    )
    assert params["timeout"] == 2.5
    assert params["retries"] == 5
    assert params["verify"] is False
    assert params["fields"] == ["a", "b"]
    weights = get_kind("builtin").validate({"weights": "title=2, text=1"})["weights"]
    assert weights == {"title": "2", "text": "1"}


def test_wrong_types_are_refused_naming_the_param() -> None:
    with pytest.raises(InputError, match="'retries' must be an integer, got 'many'"):
        get_kind("http").validate({"url": "http://x", "retries": "many"})
    with pytest.raises(InputError, match="'timeout' must be a number"):
        get_kind("http").validate({"url": "http://x", "timeout": True})
    with pytest.raises(InputError, match="'weights' must be a table"):
        get_kind("builtin").validate({"weights": "title"})


def test_missing_required_param_is_named() -> None:
    with pytest.raises(InputError, match="needs the param 'url'"):
        get_kind("sql").validate({"query": "select 1"})


def test_python_kind_passes_extra_params_through_for_the_function() -> None:
    params = get_kind("python").validate({"function": "m:f", "k1": 0.9})
    assert params["k1"] == 0.9


def test_validation_keeps_placeholders_unexpanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_TOKEN", "s3cret")
    params = get_kind("http").validate(
        {"url": "http://x", "headers": {"Authorization": "Bearer ${EVALPLAT_TEST_TOKEN}"}}
    )
    assert params["headers"] == {"Authorization": "Bearer ${EVALPLAT_TEST_TOKEN}"}


def test_expand_env_replaces_placeholders_recursively() -> None:
    env = {"USER": "ann", "PASS": "pw"}
    value = {"url": "https://${USER}:${PASS}@es", "list": ["${USER}", 3], "n": 1}
    assert expand_env(value, env) == {"url": "https://ann:pw@es", "list": ["ann", 3], "n": 1}


def test_expand_env_names_the_missing_variable() -> None:
    with pytest.raises(InputError, match="environment variable ES_PASSWORD is not set"):
        expand_env({"auth": "elastic:${ES_PASSWORD}"}, {})


def test_expand_env_leaves_dollar_quoting_and_escapes_alone() -> None:
    env = {"X": "1"}
    assert expand_env("SELECT $$a$$, $1, $X", env) == "SELECT $$a$$, $1, $X"
    assert expand_env("literal $${X} and ${X}", env) == "literal ${X} and 1"
    assert expand_env("", env) == ""


def test_has_placeholder_ignores_escaped_ones() -> None:
    assert has_placeholder({"h": ["a ${TOKEN}"]})
    assert not has_placeholder("cost $${X} and $5")
