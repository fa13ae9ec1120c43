"""Diversity of the results: how evenly the top k spreads over the values of a document field.

``Diversity(field=source)@10`` is the Shannon entropy, in bits, of the ``source`` values of the
top 10 documents; ``norm=true`` divides it by log2 of the number of distinct values there
(Pielou's evenness: 1 when every value is equally frequent). Field values come from each hit
(the ``http`` searcher's ``hit_fields``) or from the test set's documents.

The module holds the declaration and the kernel; NumPy is imported inside the kernel only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.metrics.model import Measure

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Ranking
    from evalplat.metrics.registry import Metric
    from evalplat.metrics.sources import DocumentFields


def diversity(ranking: Ranking, documents: DocumentFields, metric: Metric) -> NDArray[np.float64]:
    """Entropy (bits) of the field's values over each topic's top k; documents without a value
    are left out; 0 when fewer than two distinct values remain."""
    import numpy as np

    codes = documents.field(str(metric.param("field")), metric)
    keep = codes >= 0
    if metric.cutoff is not None:
        keep &= ranking.rank < metric.cutoff
    topic = ranking.topic[keep].astype(np.int64)
    code = codes[keep]
    n_values = int(code.max()) + 1 if code.size else 1
    pair, count = np.unique(topic * n_values + code, return_counts=True)
    pair_topic = pair // n_values
    total = np.bincount(pair_topic, weights=count, minlength=ranking.n_topics)
    share = count / total[pair_topic]
    terms = -share * np.log2(share)
    # -0.0 and rounding below 0 for a single value
    entropy: NDArray[np.float64] = np.maximum(
        np.bincount(pair_topic, weights=terms, minlength=ranking.n_topics), 0.0
    ).astype(np.float64)
    if metric.param("norm"):
        distinct = np.bincount(pair_topic, minlength=ranking.n_topics).astype(np.float64)
        scale = np.log2(np.maximum(distinct, 1.0))
        result: NDArray[np.float64] = np.divide(
            entropy, scale, out=np.zeros_like(entropy), where=scale > 0
        )
        return result
    return entropy


DIVERSITY: tuple[Measure, ...] = (
    Measure(
        name="Diversity",
        description="Shannon entropy (bits) of a document field's values over the top k.",
        formula="Diversity(field=f)@k = - sum_v p_v log2 p_v, p_v = share of the top k "
        "documents with a value of f whose value is v; with norm=true divided by log2 of the "
        "number of distinct values (0 when there is one)",
        compute="diversity:diversity",
        cutoff="optional",
        params=("field", "norm"),
        inputs=("ranking", "documents"),
        bounded=False,
        notes=(
            "Field values come from each hit (`hit_fields` of the `http` searcher) and, where a "
            "hit has none, from the test set's documents; an unknown field is refused when the "
            "run is started, naming the fields there are.",
            "Documents without a value are left out; a topic with fewer than two distinct "
            "values (or no results) scores 0.",
            "`norm=true` gives values in [0, 1]: 1 when the values present are equally "
            "frequent. Higher is better: a regression is results that collapsed onto fewer "
            "sources.",
        ),
    ),
)
