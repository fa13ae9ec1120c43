"""The demo's interaction log: simulated users of the demo's configs, as a UBI log.

After the demo's first night, each config's run gives the top 10 it shows for every Cranfield
query (nothing at all for a query it does not answer); seeded users of a position-biased
cascade click model (``evalplat.events.synthetic``), whose clicks follow Cranfield's grades,
search through each config as an arm of an A/B test.
The log is written to ``events/ubi.jsonl``, imported and scored, so the online pages have data
without any real traffic; the next night compares the arms (``[online]`` in the project).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.events.synthetic import Arm, CascadeModel, write_ubi_log

if TYPE_CHECKING:
    from evalplat.store import Store

LOG = Path("events") / "ubi.jsonl"
SESSIONS = 600  # per arm and day
DAYS = 2
TOP = 10
# Cranfield grades run from 0 (not relevant) to 4 (most relevant).
DEMO_MODEL = CascadeModel(
    attraction={0: 0.04, 1: 0.2, 2: 0.45, 3: 0.65, 4: 0.8},
    purchase={3: 0.1, 4: 0.25},
)


def write_demo_events(folder: Path, store: Store, runs: list[dict[str, Any]]) -> Path | None:
    """Write, import and score the log of the night's ``runs``; None without a complete run."""
    content = store.load_test_set("cranfield", documents=False)
    texts = dict(zip(content.queries["query_id"], content.queries["text"], strict=True))
    qrels = content.qrels
    grades: dict[str, dict[str, int]] = {}
    for query, doc, grade in qrels[["query_id", "doc_id", "grade"]].itertuples(index=False):
        grades.setdefault(texts[query], {})[str(doc)] = int(grade)
    arms = []
    for run in runs:
        if run.get("status") != "complete" or run.get("test_set") != "cranfield":
            continue
        results = store.load_results(run["id"], ["query_id", "doc_id", "rank"])
        top = results[results["rank"] <= TOP]
        # every query is searched online, as offline: one the config answers with nothing
        # (the AND operator's many) is a zero-result search for its users too
        rankings: dict[str, list[str]] = {text: [] for text in texts.values()}
        for query, part in top.groupby("query_id", sort=True):
            if str(query) in texts:
                rankings[texts[str(query)]] = [str(d) for d in part.sort_values("rank")["doc_id"]]
        arms.append(Arm(f"{run['config']}@{run['config_version']}", rankings))
    if not arms:
        return None
    start = datetime.now(UTC).replace(hour=8, minute=0, second=0, microsecond=0)
    path = folder / LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    write_ubi_log(path, arms, grades, sessions=SESSIONS, seed=14, days=DAYS,
                  start=start - timedelta(days=DAYS), model=DEMO_MODEL)  # fmt: skip
    store.import_events([path])
    store.score_online([arm.config for arm in arms])
    return path
