"""Per query: the baseline's and candidate's values side by side, and the queries that moved most.

Both are derived from the per-query scores alone, so a stored comparison recomputes them when it
is loaded back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalplat.comparison.results import CompareOptions, Movers, QueryMove

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray


def per_query_frame(
    name: str, query_ids: pd.Index, a: NDArray[np.float64], b: NDArray[np.float64]
) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            "metric": name,
            "query_id": query_ids.to_numpy(dtype=object),
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
) -> Movers:
    import numpy as np

    signed = direction * (b - a)
    ids = query_ids.to_numpy(dtype=object)
    order = np.lexsort((ids.astype(str), signed))  # most negative first, ties by query id

    def moves(indices: Iterable[int]) -> tuple[QueryMove, ...]:
        return tuple(
            QueryMove(str(ids[i]), float(a[i]), float(b[i]), float(b[i] - a[i])) for i in indices
        )

    worse = [i for i in order[: options.movers] if signed[i] < -options.tie_tolerance]
    better_order = np.lexsort((ids.astype(str), -signed))
    better = [i for i in better_order[: options.movers] if signed[i] > options.tie_tolerance]
    return Movers(name, moves(worse), moves(better))
