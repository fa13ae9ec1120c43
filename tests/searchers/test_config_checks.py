"""The one validator behind ``config add``, ``run`` and ``nightly`` refuses every param a run
would fail on, for every kind, without the network or the environment."""

from __future__ import annotations

from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.searchers import get_kind, validate_config

ES = {"preset": "elasticsearch", "url": "http://127.0.0.1:9200/docs"}
JSON_API = {"url": "http://127.0.0.1:9/search", "results_path": "items"}


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("http", {**JSON_API, "url": "http://x/{{ nosuch.attr }}"},
         "url template uses 'nosuch', which is not defined; templates see query, query_id"),
        ("http", {**JSON_API, "query_params": {"q": "{{ query.nosuch.x }}"}},
         "query param q template fails for the query 'evalplat': UndefinedError"),
        ("http", {**JSON_API, "headers": {"X-Q": "{% if fields %}{{ oops }}{% endif %}"}},
         "header X-Q template uses 'oops', which is not defined"),
        ("http", {**JSON_API, "body": {"size": "{{ depth // 0 }}"}},
         "body template fails for the query 'evalplat': ZeroDivisionError"),
        ("http", {**JSON_API, "body": '{"q": {{ query|tojson }},}'},
         "http searcher body is not valid JSON"),
        ("http", {**ES, "url": "file:///etc/passwd"}, "url 'file:///etc/passwd' must start with"),
        ("http", {**ES, "url": "ftp://es:9200/docs"}, "must start with http:// or https://"),
        ("http", {**ES, "method": "GE T"}, "method 'GE T' is not an HTTP method"),
        ("http", {**ES, "headers": {"Bad Name": "x"}}, "'Bad Name' is not a valid header"),
        ("http", {**ES, "headers": {"X-A": "a\r\nX-B: b"}}, "header X-A must be one line"),
        ("http", {**ES, "auth": "elastic"}, "auth must be user:password"),
        ("http", {**ES, "timeout": 1e300}, "'timeout' must be at most 86400"),
        ("http", {**ES, "timeout": "1_0"}, "'timeout' must be a number, got '1_0'"),
        ("http", {**ES, "retries": 10**6}, "'retries' must be at most 100"),
        ("http", {**ES, "probe": True}, "'probe' must be a string, or false, got True"),
        ("builtin", {"weights": {"title": "abc"}}, "weight for 'title' must be a number"),
        ("builtin", {"weights": "title=1_0"}, "weight for 'title' must be a number, got '1_0'"),
        ("builtin", {"weights": {"title": "٢"}}, "weight for 'title' must be a number"),
        ("builtin", {"weights": {"title": True}}, "weight for 'title' must be a number"),
        ("builtin", {"weights": {"title": -1}}, "weight for 'title' must be at least 0"),
        ("command", {"command": []}, "'command' must name a program to start"),
        ("command", {"command": ""}, "'command' must name a program to start"),
        ("command", {"command": [" ", "x"]}, "'command' must name a program to start"),
        ("command", {"command": "engine", "processes": 10**9}, "'processes' must be at most"),
        ("command", {"command": "engine", "timeout": 1e300}, "'timeout' must be at most 86400"),
        ("python", {"function": "foo"}, "must look like 'module:function', got 'foo'"),
        ("python", {"function": "engine:"}, "must look like 'module:function'"),
        ("python", {"function": "my engine:search"}, "must look like 'module:function'"),
        ("sql", {"url": "sqlite:///x.db", "query": "SELECT id FROM docs"},
         "must use the :query parameter"),
        ("sql", {"url": "mysql://u@h/db", "query": "SELECT :query"},
         "sql searcher url: not a database URL evalplat can use"),
        ("sql", {"url": "sqlite:///x.db", "query": "SELECT :query", "timeout": 1e300},
         "'timeout' must be at most 86400"),
    ],
)  # fmt: skip
def test_params_a_run_would_fail_on_are_refused(
    kind: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        validate_config(kind, params)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("http", ES),
        ("http", {**ES, "url": "${ES_URL}/docs"}),  # the scheme is checked once it is filled in
        ("http", {**ES, "url": "{{ 'http' }}://es/docs"}),
        ("http", {**ES, "probe": False, "auth": "${ES_AUTH}", "method": "post"}),
        ("http", {**JSON_API, "body": '{"size": ${SIZE}, "q": {{ query|tojson }}}'}),
        ("http", {**JSON_API, "url": "http://x/{{ range(depth)|length }}/{{ fields|join }}"}),
        ("http", {**JSON_API, "body": "q={{ query }}", "headers": {"Content-Type": "text/plain"}}),
        ("builtin", {"weights": "title=2,text=0.5"}),
        ("builtin", {"weights": {"title": 2, "text": 1e-3}}),
        ("command", {"command": "python engine.py --index ${INDEX}"}),
        ("python", {"function": "engines.bm25:Engine.search", "k1": 0.9}),
        ("sql", {"url": "postgresql://u:${PW}@h/db", "query": "SELECT :query"}),
        ("sql", {"url": "${DATABASE}", "query": "SELECT :query, :depth"}),
    ],
)
def test_runnable_params_pass_without_the_environment(kind: str, params: dict[str, Any]) -> None:
    assert validate_config(kind, params)


@pytest.mark.parametrize(
    ("params", "reads"),
    [
        (ES, True),
        ({**ES, "preset": "solr"}, True),
        ({**JSON_API, "url": "http://x/docs/{{ query_id }}"}, False),
        ({**JSON_API, "body": {"id": "{{ query_id }}", "n": "{{ depth }}"}}, False),
        ({**JSON_API, "body": {"q": "{{ query }}"}}, True),
        ({**JSON_API, "headers": {"X-Query": "{{ query|upper }}"}}, True),
    ],
)
def test_an_http_searcher_reads_the_text_when_a_template_reads_query(
    params: dict[str, Any], reads: bool
) -> None:
    kind = get_kind("http")
    assert kind.uses_text(validate_config("http", params)) is reads


def test_every_other_kind_reads_the_text() -> None:
    for name in ("builtin", "sql", "python", "command"):
        assert get_kind(name).reads_text is True
