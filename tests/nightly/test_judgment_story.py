"""A test set's judgments across nights (``evalplat.nightly.judgments``): grades added with
``--add`` or by the night's judge are used by the next night and survive a change of the
project's qrels file with their source; one night's judge adds to one version for every config;
a version the file does not account for is named in the night's log."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..judging.chat_server import ChatServer, chat_server

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

QUERIES = 8

# ``good``: the relevant document first; any other mode is a string of letters, one unjudged
# document ``<letter><topic>`` per letter after the relevant one.
ENGINE = """
def search(query, depth, mode="good", **params):
    topic = query.split()[-1]
    if mode == "good":
        return [("d" + topic, 3.0), ("n1", 2.0), ("n2", 1.0)]
    return [(letter + topic, 2.0 - i / 10) for i, letter in enumerate(mode)]
"""


def write_project(folder: Path, modes: dict[str, str], nightly: str = "", judge: str = "") -> Path:
    """Test set ``topics``: ``dN`` relevant, ``n1``/``n2`` not; documents ``aN`` are relevant
    in their text (the judge reads ``GRADE=``), every other letter's are not."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.py").write_text(ENGINE, encoding="utf-8")
    topics = range(1, QUERIES + 1)
    (folder / "queries.tsv").write_text("".join(f"{n}\ttopic {n}\n" for n in topics))
    if not (folder / "qrels.txt").exists():
        (folder / "qrels.txt").write_text(
            "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in topics)
        )
    grades = {"n1": 0, "n2": 0} | {f"d{n}": 1 for n in topics}
    grades |= {f"{p}{n}": int(p == "a") for n in topics for p in "abcefg"}
    (folder / "docs.jsonl").write_text(
        "".join(
            json.dumps({"id": d, "title": d, "text": f"document {d} GRADE={g}"}) + "\n"
            for d, g in grades.items()
        )
    )
    configs = "".join(
        f"""
[[configs]]
name = "{name}"
searcher = "python"
testsets = ["topics"]
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{mode}"
"""
        for name, mode in modes.items()
    )
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "topics"
qrels = "qrels.txt"
queries = "queries.tsv"
docs = "docs.jsonl"
{configs}
[metrics]
names = ["nDCG@10", "P@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
{judge}
[nightly]
{nightly}
[reports]
dir = "site"
""",
        encoding="utf-8",
    )
    return path


Night = Callable[..., tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def judge_server() -> Iterator[ChatServer]:
    with chat_server() as state:
        yield state


@pytest.fixture
def night(db_url: str, tmp_path: Path) -> Night:
    def run(modes: dict[str, str], **kwargs: str) -> tuple[int, list[dict[str, Any]]]:
        path = write_project(tmp_path / "p", modes, **kwargs)
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        assert outcome.exit_code in (0, 1), steps
        return outcome.exit_code, steps

    return run


def _step(steps: list[dict[str, Any]], name: str, **match: Any) -> dict[str, Any]:
    [found] = [s for s in steps if s["step"] == name and match.items() <= s.items()]
    return found


def _grade_unjudged(cli: Callable[..., Any], db_url: str, tmp_path: Path, source: str) -> Path:
    """What a reviewer sends back for ``evalplat unjudged prod@latest``: each document graded
    relevant, as ``source``."""
    pool = cli("unjudged", "prod@latest", "--k", "10", "--db", db_url)
    assert pool.exit_code == 0, pool.stderr
    rows = list(csv.DictReader(io.StringIO(pool.stdout)))
    assert len(rows) == QUERIES
    graded = tmp_path / f"graded-{source}.csv"
    with graded.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query_id", "doc_id", "grade", "source"])
        writer.writerows((r["query_id"], r["doc_id"], 1, source) for r in rows)
    return graded


def _mean(store: Store, run: int, version: int, metric: str = "nDCG@10") -> float:
    """The run's mean ``metric`` on its latest scoring, which must be on ``version``."""
    assert store.scored_versions(run)[-1] == version
    scores = store.evaluation_scores(run)
    return float(scores[scores["metric"] == metric]["value"].mean())


def test_grades_added_between_nights_are_scored_next_night_and_survive_a_new_file(
    night: Night, cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    night({"prod": "a"})  # night 1: the baseline, its documents unjudged
    graded = _grade_unjudged(cli, db_url, tmp_path, "review")
    added = cli("testset", "import", "topics", "--qrels", str(graded), "--add", "--db", db_url)
    assert added.exit_code == 0, added.stderr

    _, steps = night({"prod": "a"})  # night 2: the file is unchanged, the added grades count
    settled = _step(steps, "testset")
    assert (settled["file_version"], settled["version"], settled["created"]) == (1, 2, False)
    run = _step(steps, "run")
    with Store.open(db_url) as store:
        assert store.run_info(run["run"]).test_set_version == 2
        assert _mean(store, run["run"], 2) > 0.5  # aN judged relevant by the reviewer
        assert [v.parent for v in store.test_set_versions("topics")] == [None, 1]

    # the file changes: a pair is added to it
    with (tmp_path / "p" / "qrels.txt").open("a", encoding="utf-8") as qrels:
        qrels.write("1 0 b1 1\n")
    _, steps = night({"prod": "a"})  # night 3
    settled = _step(steps, "testset")
    assert settled["file_version"] == 3 and settled["created"] is True
    assert (settled["version"], settled["carried"], settled["carried_from"]) == (4, QUERIES, 2)
    with Store.open(db_url) as store:
        infos = {v.version: v for v in store.test_set_versions("topics")}
        assert (infos[3].parent, infos[4].parent) == (None, 3)
        assert infos[4].source is not None and infos[4].source["kind"] == "carried"
        judgments = store.load_test_set("topics@4", documents=False).judgments
        review = judgments[judgments["source"] == "review"]
        assert sorted(review["doc_id"]) == sorted(f"a{n}" for n in range(1, QUERIES + 1))
        assert ("1", "b1") in set(zip(judgments["query_id"], judgments["doc_id"], strict=True))
        run = _step(steps, "run")["run"]
        assert store.run_info(run).test_set_version == 4
        assert _mean(store, run, 4) > 0.5

    _, steps = night({"prod": "a"})  # night 4: nothing new, nothing carried again
    settled = _step(steps, "testset")
    assert (settled["version"], settled["created"]) == (4, False) and "carried" not in settled


def test_the_file_supersedes_a_carried_grade_of_the_same_source_and_query_that_left_is_dropped(
    night: Night, db_url: str, tmp_path: Path
) -> None:
    from evalplat.testsets.content import load_testset

    night({"prod": "good"})
    folder = tmp_path / "p"
    extra = folder / "extra.csv"
    extra.write_text("query_id,doc_id,grade,source\n1,a1,2,alice\n2,a2,1,alice\n3,a3,1,alice\n")
    with Store.open(db_url) as store:
        from evalplat.judging.review import add_judgments

        content = add_judgments(store.load_test_set("topics"), load_testset(extra).judgments, None)
        store.import_test_set("topics", content, source={"added_to": 1}, parent=1)
    # the new file grades (1, a1) as alice too, and query 3 is gone
    (folder / "qrels.csv").write_text(
        "query_id,doc_id,grade,source\n"
        + "".join(f"{n},d{n},1,\n" for n in range(1, QUERIES + 1) if n != 3)
        + "1,a1,0,alice\n"
    )
    path = write_project(folder, {"prod": "good"})
    path.write_text(path.read_text().replace('qrels = "qrels.txt"', 'qrels = "qrels.csv"'))
    (folder / "queries.tsv").write_text(
        "".join(f"{n}\ttopic {n}\n" for n in range(1, QUERIES + 1) if n != 3)
    )
    steps: list[dict[str, Any]] = []
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
    assert outcome.exit_code in (0, 1), steps
    settled = _step(steps, "testset")
    assert (settled["carried"], settled["dropped"]) == (1, 1)
    with Store.open(db_url) as store:
        rows = store.load_test_set(f"topics@{settled['version']}", documents=False).judgments
        alice = rows[rows["source"] == "alice"]
        got = dict(zip(alice["doc_id"], alice["grade"], strict=True))
        assert got == {"a1": 0, "a2": 1}  # the file's grade of (1, a1), the carried (2, a2)


def test_one_night_judges_once_for_every_config_and_grades_accumulate(
    night: Night, db_url: str, judge_server: ChatServer
) -> None:
    judge = f"""
[[judges]]
name = "stub"
url = "{judge_server.url}"
model = "stub-model"
concurrency = 2
timeout = 5
"""
    modes = {"one": "good", "two": "good", "three": "good"}
    assert night(modes, nightly='judge = "stub"', judge=judge)[0] == 0  # the baselines

    modes = {"one": "a", "two": "b", "three": "c"}
    _, steps = night(modes, nightly='judge = "stub"', judge=judge)
    [judged] = [s for s in steps if s["step"] == "judge"]
    assert judged["added"] == 3 * QUERIES and judged["testset"] == "topics@1"
    version = judged["version"]
    assert version == 2
    runs = {s["config"]: s["run"] for s in steps if s["step"] == "run"}
    compares = {s["config"]: s for s in steps if s["step"] == "compare"}
    assert set(compares) == set(runs)
    with Store.open(db_url) as store:
        assert [v.version for v in store.test_set_versions("topics")] == [1, 2]
        for config, run in runs.items():
            assert version in store.scored_versions(run), config
            baseline = compares[config]["baseline_run"]
            assert version in store.scored_versions(baseline), config
        # stored figures are people's grades alone: the judge's moves none of them
        assert _mean(store, runs["one"], version) == _mean(store, runs["two"], version) == 0.0
        rows = store.load_test_set(f"topics@{version}", documents=False).judgments
        judged = rows[rows["source"] == "llm:stub"]
        said = dict(zip(judged["doc_id"], judged["grade"], strict=True))
        assert said["a1"] >= 1 and said["b1"] == 0  # aN: relevant, says the judge

    # night 3: one new document per query; the judge adds it on top of last night's grades
    asked = len(judge_server.requests)
    _, steps = night({"one": "ae", "two": "b", "three": "c"}, nightly='judge = "stub"',
                     judge=judge)  # fmt: skip
    settled = _step(steps, "testset")
    assert (settled["version"], settled["file_version"]) == (2, 1)
    [judged] = [s for s in steps if s["step"] == "judge"]
    assert (judged["testset"], judged["added"], judged["version"]) == ("topics@2", QUERIES, 3)
    assert len(judge_server.requests) - asked == QUERIES  # only the new documents were asked
    with Store.open(db_url) as store:
        infos = store.test_set_versions("topics")
        assert [(v.version, v.parent) for v in infos] == [(1, None), (2, 1), (3, 2)]
        assert infos[2].judgments == infos[1].judgments + QUERIES
        llm = store.load_test_set("topics@3", documents=False).judgments
        assert (llm["source"] == "llm:stub").sum() == 4 * QUERIES


def test_a_version_imported_by_hand_from_another_file_is_named_not_used(
    night: Night, cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    night({"prod": "good"})
    folder = tmp_path / "p"
    other = tmp_path / "other-qrels.txt"
    other.write_text("".join(f"{n} 0 d{n} 2\n" for n in range(1, QUERIES + 1)))
    imported = cli("testset", "import", "topics", "--qrels", str(other), "--queries",
                   str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl"),
                   "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr

    path = write_project(folder, {"prod": "good"})
    dry = cli("nightly", "--project", str(path), "--db", db_url, "--dry-run")
    assert dry.exit_code == 0, dry.stdout + dry.stderr
    [line] = [row for row in dry.stdout.splitlines() if row.startswith("nightly judgments")]
    assert "topics@2 (from other-qrels.txt)" in line and "scores on topics@1" in line
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 0, result.stdout + result.stderr
    [line] = [row for row in result.stdout.splitlines() if row.startswith("nightly judgments")]
    assert "topics@2 (from other-qrels.txt) is neither the project file's version" in line
    assert "the night scores on topics@1" in line
    with Store.open(db_url) as store:
        [latest] = store.list_runs("prod")[:1]
        assert latest.test_set_version == 1
