"""Every example in docs/ is accepted by the code it documents.

- TOML blocks of configuration.md, searchers.md and alerts.md load with ``load_project``; their
  configs are registered with ``Store.add_config`` and their alert channels built, as ``nightly``
  does before it writes anything; ``http`` and ``sql`` configs are also created and (http) render
  a request, so a template that does not compile is caught.
- ``evalplat config add`` lines of searchers.md run against a fresh SQLite database.
- Example files of formats.md are read by the real readers.
- The trec_eval name mapping of coming-from.md agrees with the metric registry.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalplat.alerts.registry import channels_from_tables
from evalplat.alerts.webhook import payload
from evalplat.cli import app
from evalplat.metrics import parse
from evalplat.nightly.project import load_project
from evalplat.searchers import get_kind
from evalplat.store import Store

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def blocks(page: str, language: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.S | re.M)


def toml_examples() -> Iterator[tuple[str, int, str]]:
    for page in ("configuration.md", "searchers.md", "alerts.md"):
        for index, block in enumerate(blocks(page, "toml")):
            yield page, index, block


TOML_EXAMPLES = list(toml_examples())


def test_pages_have_examples() -> None:
    pages = {page for page, _index, _block in TOML_EXAMPLES}
    assert pages == {"configuration.md", "searchers.md", "alerts.md"}


@pytest.mark.parametrize(
    ("page", "index", "block"), TOML_EXAMPLES, ids=[f"{p}#{i}" for p, i, _ in TOML_EXAMPLES]
)
def test_toml_example_is_a_valid_project(
    page: str, index: int, block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PLACEHOLDER.findall(block):
        monkeypatch.setenv(name, f"value-of-{name.lower()}")
    (tmp_path / "evalplat.toml").write_text(block, encoding="utf-8")
    project = load_project(tmp_path)
    channels = channels_from_tables(project.alerts)
    assert len(channels) == len(project.alerts)
    store = Store.init(f"sqlite:///{tmp_path / 'docs.db'}")
    try:
        for spec in project.configs:
            added = store.add_config(spec.name, spec.searcher, spec.params, label=spec.label)
            assert added.created
            assert store.config_version(spec.name).params == added.version.params
            if spec.searcher in ("http", "sql"):
                check_searcher(spec.searcher, spec.params)
    finally:
        store.close()


def check_searcher(kind: str, params: dict[str, object]) -> None:
    """Create the searcher (templates compiled, URL parsed) without contacting any server."""
    searcher = get_kind(kind).create(params)
    try:
        if kind == "http":
            request = searcher.build_request("q1", 'flow "past" a plate', 10)  # type: ignore[attr-defined]
            assert request.url.host
            if request.content:
                assert 'flow "past" a plate' in strings(json.loads(request.content))
            else:
                assert 'flow "past" a plate' in request.url.params.values()
    finally:
        searcher.close()


def strings(value: object) -> list[str]:
    """Every string inside a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def config_add_lines() -> list[str]:
    lines = []
    for block in blocks("searchers.md", "bash"):
        lines += [line for line in block.splitlines() if line.startswith("evalplat config add ")]
    return lines


def test_config_add_examples_are_accepted(tmp_path: Path) -> None:
    lines = config_add_lines()
    assert len(lines) >= 2
    runner = CliRunner()
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    for line in lines:
        result = runner.invoke(app, [*shlex.split(line)[1:], "--db", db])
        assert result.exit_code == 0, f"{line}\n{result.output}"


def test_config_add_keeps_placeholders_unexpanded(tmp_path: Path) -> None:
    line = next(line for line in config_add_lines() if "${" in line)
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    added = runner.invoke(app, [*shlex.split(line)[1:], "--db", db])
    assert added.exit_code == 0, f"{line}\n{added.output}"
    name = shlex.split(line)[3]
    shown = runner.invoke(app, ["config", "show", name, "--json", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert "${ES_API_KEY}" in json.dumps(json.loads(shown.stdout))


def test_webhook_payload_example_has_the_channel_field_names() -> None:
    from evalplat.alerts import AlertMessage
    from evalplat.alerts.notice import Notice

    (example,) = blocks("alerts.md", "json")
    shown = json.loads(example)
    entries = [AlertMessage.from_dict(entry) for entry in shown["alerts"]]
    keys = [entry["idempotency_key"] for entry in shown["alerts"]]
    real = payload(Notice(tuple(entries), tuple(keys)))
    assert sorted(shown) == sorted(real)
    for entry, made in zip(shown["alerts"], real["alerts"], strict=True):
        assert sorted(entry) == sorted(made)
        assert entry["title"] == made["title"]
    assert shown["title"] == real["title"]


def format_examples() -> list[tuple[str, str, str]]:
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: (\w+) (\S+) -->\n```text\n(.*?)^```$", text, re.S | re.M)
    return [(kind, name, body) for kind, name, body in found]


FORMAT_EXAMPLES = format_examples()


def test_formats_page_shows_every_kind_of_file() -> None:
    kinds = {kind for kind, _name, _body in FORMAT_EXAMPLES}
    assert kinds == {"judgments", "run", "queries", "documents", "list"}


@pytest.mark.parametrize(
    ("kind", "name", "body"), FORMAT_EXAMPLES, ids=[n for _k, n, _b in FORMAT_EXAMPLES]
)
def test_format_example_is_read(kind: str, name: str, body: str, tmp_path: Path) -> None:
    from evalplat.formats.testset_files import read_documents, read_judgments, read_queries
    from evalplat.formats.trec import read_run

    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    if kind == "list":  # another tool's judgment list: detected, with its query texts
        from evalplat.testsets.content import load_testset

        content = load_testset(path)
        assert len(content.judgments) >= 3
        assert content.queries["text"].str.len().gt(0).all()
        return
    readers = {
        "judgments": read_judgments,
        "queries": read_queries,
        "documents": read_documents,
        "run": read_run,
    }
    frame = readers[kind](path)
    rows = [line for line in body.splitlines() if line and not line.startswith("#")]
    header = 1 if kind == "judgments" and name.endswith(".csv") else 0
    assert len(frame) == len(rows) - header


def trec_eval_rows() -> list[tuple[str, str, str]]:
    text = (DOCS / "coming-from.md").read_text(encoding="utf-8")
    table = text.split("| evalplat | trec_eval `-m` | trec_eval prints |", 1)[1]
    return re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|$", table, flags=re.M)


def test_trec_eval_mapping_agrees_with_the_registry() -> None:
    rows = trec_eval_rows()
    assert len(rows) >= 10
    for ours, option, printed in rows:
        metric = parse(ours)
        assert metric.trec_name == printed, ours
        assert parse(printed) == metric, printed
        assert option.replace(".", "_", 1) == printed, option


def test_ranx_tie_example_matches_the_engine() -> None:
    from evalplat.metrics.evaluation import evaluate

    data = REPO_ROOT / "tests" / "data" / "trec_eval"
    peers = json.loads((data / "edge.peer_values.json").read_text(encoding="utf-8"))
    result = evaluate(data / "edge.qrels", data / "edge.run", ["AP"])
    ours = dict(zip(result.query_ids, result.values["AP"], strict=True))["A"]
    page = (DOCS / "coming-from.md").read_text(encoding="utf-8")
    assert f"AP {ours:.4f} in evalplat" in page
    assert f"{peers['ranx']['map']['A']:.4f} in ranx" in page
