"""A store holding the planted test set and its engine (``planted.py``) as config ``engine``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

from .planted import rows

HERE = Path(__file__).parent


def planted_content() -> TestSetContent:
    queries, qrels = rows()
    frame = pd.DataFrame(queries, columns=["query_id", "text"])
    frame["weight"] = float("nan")
    frame["tags"] = [None] * len(frame)
    judgments = pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"])
    judgments["grade"] = judgments["grade"].astype("int64")
    judgments["source"] = None
    return TestSetContent(queries=frame, judgments=judgments)


ENGINE = {"function": "planted:search", "path": str(HERE), "skill": 0.4}


@pytest.fixture
def planted(store: Store) -> Store:
    store.import_test_set("planted", planted_content())
    store.add_config("engine", "python", dict(ENGINE))
    return store
