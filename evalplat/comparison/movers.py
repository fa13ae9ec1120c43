"""Per query: the baseline's and candidate's values side by side, and the queries that moved most.

Both are derived from the per-query scores alone, so a stored comparison recomputes them when it
is loaded back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.results import CompareOptions, Movers, QueryMove

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray


def per_query_frame(
    names: Sequence[str],
    query_ids: pd.Index,
    baseline: Sequence[NDArray[np.float64]],
    candidate: Sequence[NDArray[np.float64]],
) -> pd.DataFrame:
    """``metric, query_id, baseline, candidate, delta``: the metrics one after the other, each
    over ``query_ids`` in order; built in one piece rather than a frame per metric."""
    import numpy as np
    import pandas as pd

    a = np.concatenate(baseline) if baseline else np.empty(0)
    b = np.concatenate(candidate) if candidate else np.empty(0)
    ids = query_ids.to_numpy(dtype=object)
    return pd.DataFrame(
        {
            "metric": np.repeat(np.asarray(names, dtype=object), ids.size),
            "query_id": np.tile(ids, len(names)),
            "baseline": a,
            "candidate": b,
            "delta": b - a,
        }
    )


def movers_of(
    name: str,
    query_ids: pd.Index,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    direction: int,
    options: CompareOptions,
    id_rank: NDArray[np.intp] | None = None,
) -> Movers:
    """The ``options.movers`` queries that got most worse and most better (ties by query id).
    ``id_rank`` (``query_id_rank(query_ids)``), when given, saves sorting the ids again."""
    import numpy as np

    signed = direction * (b - a)
    ids = query_ids.to_numpy(dtype=object)
    tiebreak = query_id_rank(query_ids) if id_rank is None else id_rank
    order = np.lexsort((tiebreak, signed))  # most negative first, ties by query id

    def moves(indices: Iterable[int]) -> tuple[QueryMove, ...]:
        return tuple(
            QueryMove(str(ids[i]), float(a[i]), float(b[i]), float(b[i] - a[i])) for i in indices
        )

    worse = [i for i in order[: options.movers] if signed[i] < -options.tie_tolerance]
    better_order = np.lexsort((tiebreak, -signed))
    better = [i for i in better_order[: options.movers] if signed[i] > options.tie_tolerance]
    return Movers(name, moves(worse), moves(better))


def query_id_rank(query_ids: pd.Index) -> NDArray[np.intp]:
    """Each query id's position in the ids sorted as text: the movers' tie-break."""
    import numpy as np

    text = query_ids.to_numpy(dtype=object).astype(str)
    rank = np.empty(text.size, dtype=np.intp)
    rank[np.argsort(text, kind="stable")] = np.arange(text.size)
    return rank
