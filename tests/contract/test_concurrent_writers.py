"""Concurrent writers of one new name: each gets a version of its own, none gets an error.

Real concurrency: each thread opens its own store (its own connection) on one database file
or server and starts its write at the same moment (a barrier), and separate processes run
the CLI against one SQLite file.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

WRITERS = 8


def content(seed: int) -> TestSetContent:
    queries = pd.DataFrame(
        {"query_id": ["q1"], "text": ["t"], "weight": [float("nan")], "tags": [None]}
    )
    judgments = pd.DataFrame(
        {"query_id": ["q1"], "doc_id": [f"d{seed}"], "grade": [1], "source": [None]}
    )
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=judgments)


def at_once(db_url: str, write: Callable[[Store, int], Any]) -> list[Any]:
    barrier = threading.Barrier(WRITERS)
    results: list[Any] = [None] * WRITERS

    def worker(index: int) -> None:
        with Store.open(db_url) as store:
            barrier.wait()
            try:
                results[index] = write(store, index)
            except Exception as error:  # collected: the test shows which writer failed how
                results[index] = error

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_imports_of_one_new_name_get_one_version_each(db_url: str) -> None:
    outcomes = at_once(db_url, lambda store, i: store.import_test_set("new", content(i)))
    errors = [o for o in outcomes if isinstance(o, Exception)]
    assert errors == []
    assert sorted(o.version.version for o in outcomes) == list(range(1, WRITERS + 1))
    with Store.open(db_url) as store:
        assert len(store.test_set_versions("new")) == WRITERS


def test_concurrent_imports_of_identical_content_share_one_version(db_url: str) -> None:
    outcomes = at_once(db_url, lambda store, i: store.import_test_set("same", content(0)))
    assert [o for o in outcomes if isinstance(o, Exception)] == []
    assert {o.version.version for o in outcomes} == {1}
    assert sum(o.created for o in outcomes) == 1


def test_concurrent_config_adds_get_one_version_each(db_url: str) -> None:
    outcomes = at_once(
        db_url,
        lambda store, i: store.add_config("cfg", "builtin", {"weights": {"title": i + 1}}),
    )
    assert [o for o in outcomes if isinstance(o, Exception)] == []
    assert sorted(o.version.version for o in outcomes) == list(range(1, WRITERS + 1))


def test_concurrent_cli_imports_in_separate_processes(db_url: str, tmp_path: Path) -> None:
    evalplat = str(Path(sys.executable).with_name("evalplat"))
    processes = []
    for n in range(4):
        qrels = tmp_path / f"qrels{n}.txt"
        qrels.write_text(f"q1 0 d{n} 1\n", encoding="utf-8")
        command = [evalplat, "testset", "import", "shared", "--qrels", str(qrels), "--db", db_url]
        processes.append(subprocess.Popen(command, stderr=subprocess.PIPE, text=True))
    for process in processes:
        _, stderr = process.communicate()
        assert process.returncode == 0, stderr
    with Store.open(db_url) as store:
        assert [v.version for v in store.test_set_versions("shared")] == [1, 2, 3, 4]
