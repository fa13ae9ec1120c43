"""evalplat: regression tracking for search relevance.

The Python API mirrors the command line: ``evalplat.evaluate`` scores a run against qrels,
``evalplat.Store`` holds test sets, configs, runs and their scores in a SQL database, and
``evalplat.interleave`` merges two rankers' results for an interleaved test.
Heavy modules are imported lazily so that ``import evalplat`` and the CLI start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Store", "__version__", "evaluate", "interleave"]

if TYPE_CHECKING:
    from evalplat.events.interleaving import interleave
    from evalplat.metrics.evaluation import evaluate
    from evalplat.store import Store


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from evalplat.metrics.evaluation import evaluate

        return evaluate
    if name == "interleave":
        from evalplat.events.interleaving import interleave

        return interleave
    if name == "Store":
        from evalplat.store import Store

        return Store
    raise AttributeError(f"module 'evalplat' has no attribute {name!r}")
