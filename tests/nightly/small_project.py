"""A small project for nightly tests: a python searcher whose quality a param chooses.

Test set ``topics``: ``QUERIES`` queries ``topic N``, each with one relevant document ``dN``.
The searcher ``engine:search`` answers by ``mode``:

- ``good``: the relevant document first (nDCG@10 = 1 on every query);
- ``bad``: two judged non-relevant documents (nDCG@10 = 0 everywhere: a certain regression);
- ``unjudged``: two documents nobody judged (a drop only missing judgments explain);
- ``empty``: no hits for any query (a complete run where every query scores 0);
- ``down``: raises for every query, as a backend that is down (the run fails);
- ``tail``: ``good`` for topics 1 to 10, ``bad`` for the others.
- ``firstK`` (e.g. ``first15``): ``good`` for topics 1..K, ``bad`` after (nDCG@10 = K / 30).

The mode is a config param, so changing it makes a new config version, as a real change would.
``replace_with_file = PATH`` (in ``extra``) turns the folder PATH into a file while searching.
"""

from __future__ import annotations

from pathlib import Path

QUERIES = 30
BACKOFF = 0.05  # seconds: the webhook's first wait before it retries a failed delivery

ENGINE = """
import pathlib
import shutil


def search(query, depth, mode="good", replace_with_file=None, **params):
    if replace_with_file:  # a folder that stops being one while the night runs
        shutil.rmtree(replace_with_file, ignore_errors=True)
        pathlib.Path(replace_with_file).write_text("not a folder any more")
    topic = query.split()[-1]
    if mode == "down":
        raise ConnectionError("connection refused by the search backend")
    if mode == "empty":
        return []
    if mode.startswith("first"):
        mode = "good" if int(topic) <= int(mode[5:]) else "bad"
    if mode == "good" or (mode == "tail" and int(topic) <= 10):
        return [("d" + topic, 3.0), ("n1", 2.0), ("n2", 1.0)]
    if mode == "unjudged":
        return [("u" + topic, 2.0), ("v" + topic, 1.0)]
    return [("n1", 2.0), ("n2", 1.0)]
"""


def write_project(
    folder: Path,
    modes: dict[str, str],
    *,
    hook: str | None = None,
    extra_alerts: str = "",
    reports: str = 'dir = "site"',
    extra: str = "",
) -> Path:
    """``evalplat.toml`` in ``folder`` with one config per entry of ``modes`` (name → mode)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.py").write_text(ENGINE, encoding="utf-8")
    (folder / "queries.tsv").write_text(
        "".join(f"{n}\ttopic {n}\n" for n in range(1, QUERIES + 1)), encoding="utf-8"
    )
    qrels = "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in range(1, QUERIES + 1))
    (folder / "qrels.txt").write_text(qrels, encoding="utf-8")
    configs = "".join(
        f"""
[[configs]]
name = "{name}"
searcher = "python"
testsets = ["topics"]
concurrency = 2
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{mode}"
{extra}"""
        for name, mode in modes.items()
    )
    # A refusing receiver is retried as in production (3 attempts), without waiting seconds.
    webhook = f'\n[[alerts]]\ntype = "webhook"\nurl = "{hook}"\nbackoff = {BACKOFF}\n'
    alerts = "" if hook is None else webhook
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "topics"
qrels = "qrels.txt"
queries = "queries.tsv"
{configs}
[metrics]
names = ["nDCG@10", "P@5"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
{alerts}{extra_alerts}
[reports]
{reports}
""",
        encoding="utf-8",
    )
    return path
