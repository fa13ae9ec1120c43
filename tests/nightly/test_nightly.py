"""The whole nightly loop on the bundled Cranfield set, with a real webhook on 127.0.0.1.

Unchanged nights are silent; a worse config exits 1 and alerts exactly once; the next night
does not repeat it; a fixed config resolves it, announced once.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from evalplat.resources import bundled_testset
from evalplat.store import Store

from .db_counts import table_counts

CRANFIELD = bundled_testset("cranfield")


class Hook:
    """A webhook receiver on 127.0.0.1 that keeps every JSON body it is sent."""

    def __init__(self) -> None:
        received: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    receiver = Hook()
    yield receiver
    receiver.close()


def project_file(folder: Path, operator: str, webhook: str) -> Path:
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "cranfield"
qrels = "{CRANFIELD / "qrels.txt"}"
queries = "{CRANFIELD / "queries.tsv"}"
docs = "{CRANFIELD / "docs.jsonl"}"

[[configs]]
name = "docs-bm25"
searcher = "builtin"
testsets = ["cranfield"]
[configs.params]
tokenizer = "porter"
operator = "{operator}"

[metrics]
names = ["nDCG@10", "P@10", "AP", "Judged@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01

[[alerts]]
type = "webhook"
url = "${{NIGHTLY_TEST_HOOK}}"

[reports]
dir = "site"

[retention]
keep_results_days = 30
""",
        encoding="utf-8",
    )
    return path


def test_nightly_loop_alerts_once_and_resolves_once(
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NIGHTLY_TEST_HOOK", hook.url)

    def night(operator: str) -> tuple[int, list[dict[str, Any]]]:
        path = project_file(tmp_path, operator, hook.url)
        result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
        steps = [json.loads(line) for line in result.stdout.splitlines()]
        return result.exit_code, [*steps, {"step": "stderr", "text": result.stderr}]

    code, steps = night("or")  # first night: the run becomes the baseline
    assert code == 0, steps
    assert any(s["step"] == "baseline" for s in steps)
    assert hook.received == []

    code, steps = night("or")  # unchanged configuration: identical results, silent
    assert code == 0
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"] == {"nDCG@10": "unchanged"}
    assert hook.received == []

    code, steps = night("and")  # a much worse configuration: alert once
    assert code == 1
    assert next(s for s in steps if s["step"] == "compare")["verdict"] == "regression"
    assert len(hook.received) == 1
    opened = hook.received[0]
    assert json.dumps(opened).count("nDCG@10") >= 1
    assert "opened" in json.dumps(opened)

    code, _ = night("and")  # still worse: no second alert, still exit 1
    assert code == 1
    assert len(hook.received) == 1

    code, steps = night("or")  # fixed: resolved, announced once
    assert code == 0
    index = tmp_path / "site" / "index.html"
    assert [s["path"] for s in steps if s["step"] == "report"] == [str(index)]
    assert len(hook.received) == 2
    assert "resolved" in json.dumps(hook.received[1])
    with Store.open(db_url) as store:
        alerts = store.list_alerts()
    assert [a.state for a in alerts] == ["resolved"]
    site = index.read_text(encoding="utf-8")  # the report site is written every night
    assert "docs-bm25" in site and "cranfield" in site
    linked = re.findall(r'href="([^"#:]+\.html)"', site)  # run and history pages it links to
    assert linked and all((index.parent / page).is_file() for page in linked)


def test_dry_run_and_bad_input_write_nothing(
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NIGHTLY_TEST_HOOK", hook.url)
    path = project_file(tmp_path, "or", hook.url)
    before = table_counts(db_url)
    dry = cli("nightly", "--project", str(path), "--db", db_url, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    steps = [json.loads(line) for line in dry.stdout.splitlines()]
    assert {"step": "run", "config": "docs-bm25", "testset": "cranfield", "dry_run": True} in steps
    assert table_counts(db_url) == before
    broken = tmp_path / "qrels.txt"
    broken.write_text("1 0 12 3\n1 0 13\n", encoding="utf-8")
    path.write_text(path.read_text().replace(str(CRANFIELD / "qrels.txt"), str(broken)))
    bad = cli("nightly", "--project", str(path), "--db", db_url)
    assert bad.exit_code == 2
    assert "qrels.txt line 2" in bad.stderr
    assert table_counts(db_url) == before


def test_second_nightly_gives_up_while_one_is_running(
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    hook: Hook,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NIGHTLY_TEST_HOOK", hook.url)
    path = project_file(tmp_path, "or", hook.url)
    with Store.open(db_url) as store, store.lock("nightly"):
        from evalplat.nightly.job import run_nightly
        from evalplat.nightly.project import load_project
        from evalplat.store import LockBusyError

        with pytest.raises(LockBusyError, match="another `nightly` is running"):
            run_nightly(load_project(path), db_url=db_url, lock_wait=0.2)
