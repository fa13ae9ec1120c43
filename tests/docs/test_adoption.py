"""docs/adoption.md, run as written: every command of its bash blocks, in order, in a fresh
folder, against an Elasticsearch-compatible server and a Slack-compatible receiver on 127.0.0.1.

The test plays what the page leaves to people and time: the Quepid export (``ratings.csv``, the
top 8 of production's answers rated), the raters who grade ``to-rate.csv``, and, before the
page's "When an alert fires", a change of the engine that hurts followed by a night of the
schedule."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..alerts.servers import CaptureServer, capture_server
from .es_fake import QUERIES, FakeElasticsearch, fake_elasticsearch, grade, search
from .readme_tour import page_commands

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = (REPO_ROOT / "docs" / "adoption.md").read_text(encoding="utf-8")
PRODUCTION_FIELDS = ["title^2", "description"]
RATED = 8  # the Quepid case rated the top 8 of each query
# what the page must say: ids, sparse judgments, hosting, and each answer to an alert
TOPICS = ("`_id`", "id_field", "Judged@10", "--depth", "needs_judgments", "S3", "GCS",
          "GitHub Pages", "artifact", "alerts ack", "baseline set", "alerts resolve")  # fmt: skip


def test_the_page_names_the_quepid_import_and_every_judgment_format() -> None:
    commands = page_commands(PAGE)
    assert "evalplat testset import products --qrels ratings.csv" in commands
    for fmt in ("quepid", "rre", "srw", "ltr"):
        assert f"--format {fmt}" in PAGE
    for topic in TOPICS:
        assert topic in PAGE, topic


@pytest.mark.slow
def test_adoption_page_runs_as_written(tmp_path: Path) -> None:
    _write_ratings(tmp_path)
    with fake_elasticsearch() as engine, capture_server() as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVALPLAT_")}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["SLACK_WEBHOOK_URL"] = f"{slack.url}/ok"
        for command in page_commands(PAGE):
            command = command.replace("http://localhost:9200", engine.url)
            if command.startswith("evalplat alerts list"):
                _a_night_goes_wrong(tmp_path, env, engine, slack)
            if command.endswith("--qrels to-rate.csv --add"):
                _raters_grade(tmp_path / "to-rate.csv")
            sent = len(slack.received("/ok"))
            done = _shell(command, tmp_path, env)
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
            if command.startswith("evalplat alerts test slack"):
                assert len(slack.received("/ok")) == sent + 1  # the sample reached the channel
        assert engine.searches > 0
    assert "title-boost" in (tmp_path / "first-compare.html").read_text(encoding="utf-8")
    assert (tmp_path / "reports" / "index.html").is_file()
    alerts = json.loads(_shell("evalplat alerts list --json", tmp_path, env).stdout)
    [first] = [a for a in alerts if a["id"] == 1]
    assert (first["config"], first["state"]) == ("prod", "resolved")
    assert first["note"].startswith("accepted:")


def _a_night_goes_wrong(
    folder: Path, env: dict[str, str], engine: FakeElasticsearch, slack: CaptureServer
) -> None:
    """The engine changes for the worse, and the schedule runs a night: exit 1, a Slack
    message about production's nDCG@10, alert 1 open."""
    engine.broken = True
    night = _shell("evalplat nightly --project evalplat.toml", folder, env)
    assert night.returncode == 1, night.stderr
    messages = [json.dumps(r.body) for r in slack.received("/ok")]
    assert any("prod" in m and "nDCG@10" in m and "Regression" in m for m in messages), messages
    alerts = json.loads(_shell("evalplat alerts list --json", folder, env).stdout)
    assert [(a["id"], a["kind"], a["state"]) for a in alerts if a["config"] == "prod"] == [
        (1, "regression", "open")
    ]


def _write_ratings(folder: Path) -> None:
    """The Quepid export: production's top ``RATED`` of each query, graded 0-3."""
    rows = [
        (query, doc, grade(query, doc))
        for query in QUERIES
        for doc, _ in search(query, PRODUCTION_FIELDS, RATED)
    ]
    with (folder / "ratings.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["query", "docid", "rating"])
        writer.writerows(rows)


def _raters_grade(pool: Path) -> None:
    """The raters add a ``grade`` column to the file ``evalplat unjudged`` wrote."""
    with pool.open(encoding="utf-8") as lines:
        rows = list(csv.DictReader(lines))
    assert rows, "the page's unjudged step left nothing to rate"
    with pool.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, [*rows[0], "grade"])
        writer.writeheader()
        writer.writerows({**row, "grade": grade(row["query"], row["doc_id"])} for row in rows)


def _shell(command: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
