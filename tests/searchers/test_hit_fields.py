"""``hit_fields``: document field values read from each hit, stored with the run's results.

A real HTTP server on 127.0.0.1 plays Elasticsearch (honouring the ``_source`` filter of the
request) and Solr (honouring ``fl``), so the presets are shown to ask for the fields they read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from evalplat.errors import InputError
from evalplat.running import runner
from evalplat.searchers import SearchContext, get_kind, validate_config
from evalplat.store import Store
from evalplat.testsets.content import load_testset

# The engine's documents: d3 has no kind, d4 has a null site, d2 a list of tags
DOCUMENTS: dict[str, dict[str, Any]] = {
    "d1": {"site": "wiki", "kind": "page", "meta": {"lang": "en"}},
    "d2": {"site": "news", "kind": "article", "tags": ["a", "b"]},
    "d3": {"site": "wiki"},
    "d4": {"site": None, "kind": "page"},
}


class Handler(BaseHTTPRequestHandler):
    server: EngineServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # Elasticsearch: POST /index/_search
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        wanted = body.get("_source", True)
        hits = []
        for rank, (doc_id, source) in enumerate(list(DOCUMENTS.items())[: body["size"]]):
            hit: dict[str, Any] = {"_id": doc_id, "_score": 9.0 - rank}
            if wanted is not False:
                keys = source if wanted is True else wanted
                hit["_source"] = {key: source[key] for key in keys if key in source}
            hits.append(hit)
        self.send({"hits": {"hits": hits}})

    def do_GET(self) -> None:  # Solr: GET /core/select?fl=...
        query = parse_qs(urlsplit(self.path).query)
        self.server.requests.append(query)
        listed = query["fl"][0].split(",")
        docs = [
            {"id": doc_id, "score": 5.0 - rank}
            | {key: value for key, value in source.items() if key in listed}
            for rank, (doc_id, source) in enumerate(DOCUMENTS.items())
        ]
        self.send({"response": {"docs": docs[: int(query["rows"][0])]}})

    def send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class EngineServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[Any] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[EngineServer]:
    instance = EngineServer()
    threading.Thread(target=instance.serve_forever, daemon=True).start()
    yield instance
    instance.shutdown()
    instance.server_close()


ES_FIELDS = {"source": "_source.site", "type": "_source.kind", "first_tag": "_source.tags[0]"}


def test_elasticsearch_preset_asks_for_the_fields_and_reads_them_per_hit(
    server: EngineServer,
) -> None:
    params = {"url": f"{server.url}/idx", "preset": "elasticsearch", "hit_fields": ES_FIELDS}
    with get_kind("http").create(params, SearchContext()) as searcher:
        hits, fields = searcher.search_with_fields("q1", "anything", 4)
        plain = searcher.search("q1", "anything", 4)
    assert server.requests[-1]["_source"] == ["site", "kind", "tags"]
    assert hits == plain == [("d1", 9.0), ("d2", 8.0), ("d3", 7.0), ("d4", 6.0)]
    assert fields == [
        {"source": "wiki", "type": "page"},
        {"source": "news", "type": "article", "first_tag": "a"},
        {"source": "wiki"},  # no kind in the document: no value, not an error
        {"type": "page"},  # a null site counts as missing
    ]


def test_without_hit_fields_the_preset_body_and_the_hits_are_unchanged(
    server: EngineServer,
) -> None:
    params = {"url": f"{server.url}/idx", "preset": "elasticsearch"}
    with get_kind("http").create(params, SearchContext()) as searcher:
        hits, fields = searcher.search_with_fields("q1", "anything", 2)
    assert server.requests[-1]["_source"] is False
    assert (hits, fields) == ([("d1", 9.0), ("d2", 8.0)], None)


def test_solr_preset_lists_the_fields_in_fl(server: EngineServer) -> None:
    params = {
        "url": f"{server.url}/solr/core",
        "preset": "solr",
        "hit_fields": "source=site,meta=meta",  # the command line's key=value spelling
    }
    with get_kind("http").create(params, SearchContext()) as searcher:
        _, fields = searcher.search_with_fields("q1", "anything", 2)
    assert server.requests[-1]["fl"] == ["id,score,site,meta"]
    assert fields == [{"source": "wiki", "meta": {"lang": "en"}}, {"source": "news"}]


@pytest.mark.parametrize(
    ("hit_fields", "problem"),
    [
        ({"1st": "_source.x"}, "invalid field name '1st'"),
        ({"site name": "_source.x"}, "invalid field name 'site name'"),
        ({"site": 3}, "field 'site' needs a path in a hit as a string"),
        ({"site": ""}, "field 'site' needs a path"),
        ({"site": "_source..x"}, "invalid response path"),
        ({"tags": "_source.tags[]"}, "may select several values"),
    ],
)
def test_bad_hit_fields_are_refused_when_the_config_is_declared(
    hit_fields: dict[str, Any], problem: str
) -> None:
    params = {"url": "http://127.0.0.1:9/idx", "preset": "elasticsearch", "hit_fields": hit_fields}
    with pytest.raises(InputError, match="hit_fields") as error:
        validate_config("http", params)
    assert problem in str(error.value)


def test_config_add_with_a_bad_field_name_exits_2_and_stores_nothing(
    db_url: str, cli: Any, tmp_path: Path
) -> None:
    file = tmp_path / "es.toml"
    file.write_text(
        'url = "http://127.0.0.1:9/idx"\npreset = "elasticsearch"\n'
        'hit_fields = { "my site" = "_source.site" }\n',
        encoding="utf-8",
    )
    assert cli("init", "--db", db_url).exit_code == 0
    result = cli("config", "add", "es", "-s", "http", "--file", str(file), "--db", db_url)
    assert result.exit_code == 2
    assert "invalid field name 'my site'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert json.loads(cli("config", "list", "--db", db_url, "--json").stdout) == []
    dotted = cli(
        "config", "add", "es", "-s", "http", "--db", db_url, "-p", "url=http://127.0.0.1:9/idx",
        "-p", "preset=elasticsearch", "-p", "hit_fields.site=_source.site",
    )  # fmt: skip
    assert dotted.exit_code == 0, dotted.stderr
    shown = json.loads(cli("config", "show", "es", "--db", db_url, "--json").stdout)
    assert shown["params"]["hit_fields"] == {"site": "_source.site"}


def _test_set(tmp_path: Path) -> Any:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d3 1\nq2 0 d2 1\n", encoding="utf-8")
    (tmp_path / "queries.tsv").write_text("q1\tfirst\nq2\tsecond\n", encoding="utf-8")
    # the document dump: d3 has a kind here (the engine has none), d2 another site
    docs = [
        {"id": "d1", "title": "One", "text": "t", "site": "wiki-dump", "kind": "page"},
        {"id": "d2", "title": "Two", "text": "t", "site": "news-dump"},
        {"id": "d3", "title": "Three", "text": "t", "kind": "stub"},
    ]
    (tmp_path / "docs.jsonl").write_text(
        "".join(json.dumps(doc) + "\n" for doc in docs), encoding="utf-8"
    )
    return load_testset(
        tmp_path / "qrels.txt", queries=tmp_path / "queries.tsv", docs=tmp_path / "docs.jsonl"
    )


def test_a_run_stores_hit_fields_and_reads_them_back_with_the_documents_as_fallback(
    store: Store, server: EngineServer, tmp_path: Path
) -> None:
    store.import_test_set("small", _test_set(tmp_path))
    hit_fields = {"source": "_source.site", "kind": "_source.kind"}
    params = {"url": f"{server.url}/idx", "preset": "elasticsearch", "hit_fields": hit_fields}
    store.add_config("es", "http", params)
    settings = runner.RunSettings(depth=3, cache_dir=tmp_path)
    info = runner.run(store, "es", "small", metrics=["P@1"], settings=settings)
    assert info.status == "complete"
    frame = store.result_fields(info.id, ["source", "kind"])
    assert list(frame.columns) == ["query_id", "rank", "doc_id", "field", "value", "source"]
    q1 = frame[frame["query_id"] == "q1"]
    assert [tuple(row) for row in q1.itertuples(index=False)] == [
        ("q1", 1, "d1", "source", "wiki", "hit"),  # the engine's value wins over the dump's
        ("q1", 1, "d1", "kind", "page", "hit"),
        ("q1", 2, "d2", "source", "news", "hit"),
        ("q1", 2, "d2", "kind", "article", "hit"),
        ("q1", 3, "d3", "source", "wiki", "hit"),
        ("q1", 3, "d3", "kind", "stub", "document"),  # the engine has none: from the dump
    ]
    assert len(frame[frame["query_id"] == "q2"]) == 6
    assert store.result_field_names(info.id) == ["kind", "site", "source"]
    every = store.result_fields(info.id)
    assert set(every["field"]) == {"kind", "site", "source"}
    assert every[every["field"] == "site"]["source"].eq("document").all()


def test_result_fields_of_a_run_without_documents_or_hit_fields_is_empty(
    store: Store, server: EngineServer, tmp_path: Path
) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "queries.tsv").write_text("q1\tfirst\n", encoding="utf-8")
    store.import_test_set(
        "bare", load_testset(tmp_path / "qrels.txt", queries=tmp_path / "queries.tsv")
    )
    store.add_config("plain", "http", {"url": f"{server.url}/idx", "preset": "elasticsearch"})
    info = runner.run(store, "plain", "bare", settings=runner.RunSettings(cache_dir=tmp_path))
    assert store.result_fields(info.id).empty
    assert store.result_field_names(info.id) == []


def _config_with_source(store: Store, server: EngineServer, tmp_path: Path) -> None:
    """The small test set and a config ``es`` that reads each hit's site as ``source``."""
    store.import_test_set("small", _test_set(tmp_path))
    params = {"url": f"{server.url}/idx", "preset": "elasticsearch",
              "hit_fields": {"source": "_source.site"}}  # fmt: skip
    store.add_config("es", "http", params)


def test_diversity_of_a_run_reads_the_stored_hit_fields(
    store: Store, server: EngineServer, tmp_path: Path
) -> None:
    import math

    _config_with_source(store, server, tmp_path)
    metrics = ["Diversity(field=source)@3", "Diversity(field=source,norm=true)@3",
               "Diversity(field=source)@1"]  # fmt: skip
    info = runner.run(store, "es", "small", metrics=metrics, settings=runner.RunSettings(depth=3))
    # top 3 of every query: wiki, news, wiki -> shares 2/3 and 1/3
    entropy = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    assert info.means["Diversity(field=source)@3"] == pytest.approx(entropy)
    assert info.means["Diversity(field=source,norm=true)@3"] == pytest.approx(entropy / 1.0)
    assert info.means["Diversity(field=source)@1"] == 0.0  # one value: no spread


def test_a_diversity_metric_of_an_unknown_field_is_refused_before_anything_is_written(
    store: Store, server: EngineServer, tmp_path: Path
) -> None:
    _config_with_source(store, server, tmp_path)
    with pytest.raises(InputError, match=r"no field 'colour'.*fields: kind, site, source"):
        runner.run(store, "es", "small", metrics=["Diversity(field=colour)@3"])
    assert store.list_runs() == []
