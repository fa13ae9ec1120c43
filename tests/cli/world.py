"""A small real world for the every-command tests: test set files, run files and a database
holding them (test set ``tiny``, config ``prod`` with a baseline and a worse candidate run, config
``engine`` on the builtin searcher, a run to rescore, three open alerts), and the ``Form``
helpers that say what a command's output must show."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evalplat import __version__
from evalplat.cli import app
from evalplat.db import migrate
from evalplat.store import Store

QUERIES = 30
RELEVANT = 4  # judged relevant per query (grades 2, 2, 1, 1)
NON_RELEVANT = 6
HEAD = migrate.head_revision()


@dataclass
class Files:
    """Test set files and two run files: ``good`` ranks the relevant documents first (with one
    unjudged document at rank 5), ``bad`` ranks them last."""

    folder: Path
    qrels: Path
    queries: Path
    docs: Path
    good: Path
    bad: Path


@dataclass
class World:
    """A database holding test set ``tiny``, config ``prod`` with a baseline run and a worse
    candidate, config ``engine`` (builtin searcher), a run to rescore and three open alerts."""

    url: str
    files: Files
    folder: Path
    baseline: int
    candidate: int
    rescorable: int
    alerts: dict[str, int]
    fresh_url: Callable[[], str]
    project: Path


def write_files(folder: Path) -> Files:
    folder.mkdir(parents=True, exist_ok=True)
    qrels, queries, docs, good, bad = [], [], [], [], []
    for n in range(1, QUERIES + 1):
        q = f"q{n:02d}"
        queries.append(f"{q}\ttopic{n} lift")
        relevant = [f"{q}-d{i}" for i in range(RELEVANT)]
        other = [f"{q}-n{i}" for i in range(NON_RELEVANT)]
        qrels += [f"{q} 0 {d} {2 if i < 2 else 1}" for i, d in enumerate(relevant)]
        qrels += [f"{q} 0 {d} 0" for d in other]
        docs += [json.dumps({"id": d, "title": f"topic{n}", "text": "lift drag"}) for d in relevant]
        docs += [
            json.dumps({"id": d, "title": f"topic{n}", "text": "unrelated longer wording"})
            for d in other
        ]
        for name, ranking in (
            (good, [*relevant, f"{q}-x", *other]),
            (bad, [*other, f"{q}-x", *relevant]),
        ):
            name += [f"{q} Q0 {d} {r} {100 - r} tag" for r, d in enumerate(ranking, start=1)]
    paths = []
    for name, lines in (
        ("qrels.txt", qrels),
        ("queries.tsv", queries),
        ("docs.jsonl", docs),
        ("good.run", good),
        ("bad.run", bad),
    ):
        path = folder / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return Files(folder, *paths)


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result


def project_file(folder: Path, files: Files) -> Path:
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "tiny"
qrels = "{files.qrels}"
queries = "{files.queries}"
docs = "{files.docs}"

[[configs]]
name = "engine"
searcher = "builtin"
testsets = ["tiny"]

[metrics]
names = ["nDCG@10", "AP"]

[[judges]]
name = "offline"
url = "http://127.0.0.1:9/v1"
model = "small-model"
budget = 0
""",
        encoding="utf-8",
    )
    return path


def populate(url: str, files: Files) -> tuple[list[int], dict[str, int]]:
    """Fill the database through the CLI; returns the run ids (prod's baseline, prod's
    candidate, old's run) and the open alerts' ids by metric."""
    db = ("--db", url, "--json")
    _invoke(
        "testset",
        "import",
        "tiny",
        "--qrels",
        str(files.qrels),
        "--queries",
        str(files.queries),
        "--docs",
        str(files.docs),
        *db,
    )
    runs = [
        json.loads(_invoke("import-run", str(path), "--config", config, "-t", "tiny", *db).stdout)
        for path, config in ((files.good, "prod"), (files.bad, "prod"), (files.good, "old"))
    ]
    _invoke("config", "add", "engine", "--searcher", "builtin", *db)
    alerts = {}
    with Store.open(url) as store:
        for metric in ("AP", "P@5", "nDCG@10"):
            details = {"baseline": 0.75, "candidate": 0.25}
            [event] = store.observe(
                "prod", "tiny", metric, runs[0]["id"], None, True, details=details
            )
            alerts[metric] = event.alert.id
    return [run["id"] for run in runs], alerts


@dataclass(frozen=True)
class Form:
    """One invocation: its arguments, built from the world, and what its output must show."""

    args: Callable[[Any], list[str]]
    check: Callable[[Any, Any], None]
    exit_code: int = 0


def parsed(result: Any) -> Any:
    return json.loads(result.stdout)


def shows(*fragments: str) -> Callable[[Any, Any], None]:
    """Every fragment (formatted with the world as ``w``) appears in stdout."""

    def check(w: Any, result: Any) -> None:
        for fragment in fragments:
            text = fragment.format(w=w, head=HEAD, version=__version__)
            assert text in result.stdout, f"{text!r} not in:\n{result.stdout}"

    return check


def holds(predicate: Callable[[Any, Any], bool]) -> Callable[[Any, Any], None]:
    """``predicate(parsed JSON, world)`` is true."""

    def check(w: Any, result: Any) -> None:
        data = parsed(result)
        assert predicate(data, w), json.dumps(data, indent=1, default=str)[:3000]

    return check


def by(rows: list[dict[str, Any]], key: str, value: Any) -> dict[str, Any]:
    [row] = [r for r in rows if r[key] == value]
    return row


def page(key: str = "path") -> Callable[[Any, Any], None]:
    def check(w: Any, result: Any) -> None:
        text = result.stdout.strip()
        path = Path(parsed(result)[key] if text.startswith("{") else text)
        assert path.is_file(), path
        assert "<html" in path.read_text(encoding="utf-8")[:500].lower()

    return check


def site(w: Any, result: Any) -> None:
    text = result.stdout.strip()
    index = Path(parsed(result)["path"] if text.startswith("{") else text)
    assert index.name == "index.html" and index.is_file()
    folder = index.parent
    assert list(folder.rglob("compare-*.html")), "the site has no comparison page"


def db_args(*args: str) -> Callable[[World], list[str]]:
    """``args`` formatted with the world, then ``--db URL``."""
    return lambda w: [a.format(w=w) for a in args] + ["--db", w.url]


def json_db_args(*args: str) -> Callable[[World], list[str]]:
    return lambda w: [*db_args(*args)(w), "--json"]
