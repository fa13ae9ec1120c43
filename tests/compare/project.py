"""A small project for comparison tests: one config (a python searcher) that answers its first
``good`` topics of ``QUERIES`` well, its relevance metrics gated with no threshold."""

from __future__ import annotations

from pathlib import Path

QUERIES = 30

ENGINE = """
def search(query, depth, good=30, **params):
    topic = int(query.split()[-1])
    if topic <= int(good):
        return [("d%d" % topic, 3.0), ("n1", 2.0), ("n2", 1.0)]
    return [("n1", 2.0), ("n2", 1.0)]
"""


def write_project(folder: Path, good: int, metrics: str = '"nDCG@10", "P@5"') -> Path:
    """One config answering its first ``good`` topics well; its two relevance metrics gated
    with no threshold, as an ad-hoc compare gates them by default."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.py").write_text(ENGINE, encoding="utf-8")
    (folder / "queries.tsv").write_text(
        "".join(f"{n}\ttopic {n}\n" for n in range(1, QUERIES + 1)), encoding="utf-8"
    )
    qrels = "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in range(1, QUERIES + 1))
    (folder / "qrels.txt").write_text(qrels, encoding="utf-8")
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "topics"
qrels = "qrels.txt"
queries = "queries.tsv"

[[configs]]
name = "engine"
searcher = "python"
testsets = ["topics"]
[configs.params]
function = "engine:search"
path = "{folder}"
good = {good}

[metrics]
names = [{metrics}]

[[gates]]
metric = "nDCG@10"

[[gates]]
metric = "P@5"
""",
        encoding="utf-8",
    )
    return path
