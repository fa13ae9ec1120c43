"""``evalplat.evaluate``: score a run against qrels; the engine behind the CLI, runs and rescore.

Semantics are trec_eval's ``-c`` by default:

- **Topics** are the test set's query ids (``topics=``; default: the queries of the qrels). Every
  topic counts; a topic missing from the run scores 0. A run-only query is ignored with a
  warning. A topic without relevant judgments scores 0 and counts.
- ``missing="skip"`` averages over the topics that are also in the run (trec_eval 9 without
  ``-c``); ``exclude_no_relevant=True`` drops topics with no judgment of grade >= 1. Both are
  recorded in ``Evaluation.options``.
- **Means** are arithmetic over topics, or ``sum(w v) / sum(w)`` with ``weights`` (query id ->
  weight; topics without a weight get 1). ``Num*`` measures are sums.
- **Ordering** ``"score"``: score descending, ties by doc id descending (trec_eval; rank ignored).
  ``"given"``: the run's ``rank`` column, else its row order (a searcher's own ranking).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError
from evalplat.metrics.names import parse_all
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from numpy.typing import NDArray

    from evalplat.metrics.build import CodedQrels
    from evalplat.metrics.pair_keys import DuplicateError
    from evalplat.metrics.ranking import Ranking
    from evalplat.metrics.sources import DocumentFields, MeasureInputs, RunRecords
    from evalplat.metrics.zscores import ZScores

Ordering = Literal["score", "given"]
Missing = Literal["zero", "skip"]


@dataclass(frozen=True)
class Evaluation:
    """Per-topic values and means of each metric, with the options that produced them."""

    metrics: list[Metric]
    query_ids: list[str]
    values: dict[str, NDArray[np.float64]]  # canonical metric name -> value per query_ids entry
    means: dict[str, float]
    options: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def per_query(self) -> pd.DataFrame:
        """Tidy frame: one row per (query_id, metric) with its ``value``, metrics in given order."""
        import numpy as np
        import pandas as pd

        names = [str(m) for m in self.metrics]
        n = len(self.query_ids)
        return pd.DataFrame(
            {
                "query_id": np.tile(np.asarray(self.query_ids, dtype=object), len(names)),
                "metric": np.repeat(np.asarray(names, dtype=object), n),
                "value": np.concatenate([self.values[name] for name in names])
                if names
                else np.zeros(0),
            }
        )

    def to_frame(self) -> pd.DataFrame:
        """:attr:`per_query` followed by the means, as rows with ``query_id == "all"``."""
        import pandas as pd

        means = pd.DataFrame(
            {
                "query_id": ["all"] * len(self.means),
                "metric": list(self.means),
                "value": list(self.means.values()),
            }
        )
        return pd.concat([self.per_query, means], ignore_index=True)


def evaluate(
    qrels: pd.DataFrame | pa.Table | str | Path | CodedQrels,
    run: pd.DataFrame | pa.Table | str | Path,
    metrics: Sequence[str | Metric] | str | Metric | None = None,
    *,
    ordering: Ordering = "score",
    topics: Sequence[str] | None = None,
    missing: Missing = "zero",
    exclude_no_relevant: bool = False,
    strict_topics: bool = False,
    max_results: int | None = None,
    weights: Mapping[str, float] | pd.Series | None = None,
    records: pd.DataFrame | pa.Table | None = None,
    documents: pd.DataFrame | None = None,
    zscores: ZScores | None = None,
) -> Evaluation:
    """Score ``run`` against ``qrels`` for ``metrics`` (default: ``DEFAULT_METRICS``).

    ``qrels``: a TREC qrels path or a frame with ``query_id``, ``doc_id``, ``grade``, or
    ``coded_qrels`` of them (the topics they were coded for are the topics).
    ``run``: a TREC run path or a frame with ``query_id``, ``doc_id``, ``score`` (and ``rank``
    for ``ordering="given"``). Raises ``InputError`` for malformed input, unknown metrics and
    duplicate pairs (with file and line when read from a path).

    With ``topics`` given, an empty run is a result, as in ``trec_eval -c``: every topic scores
    0 (a backend that found nothing for any query). Without topics it is refused: there is
    nothing to say which queries were asked.

    ``strict_topics=True`` refuses (``InputError``) a run whose query ids are not exactly the
    topics, ranx's rule, where by default a missing topic scores 0 and a run-only query is
    ignored with a warning (trec_eval's ``-c``). ``max_results=M`` scores only the first M
    documents of each query, after ordering (trec_eval's ``-M``).

    ``records``: what the run recorded per query (``query_id``, ``latency_ms``, optional
    ``results``), for measures whose declared input is ``records``; without it such a measure
    is refused, naming what is missing. ``documents``: field values of the ranked documents
    (``query_id, doc_id, field, value``, e.g. ``Store.result_fields``), for measures of
    documents (``Diversity``). The intent-aware measures (``alpha_nDCG@20``) read the qrels'
    subtopic column (a path, or a frame with ``subtopic``; see
    :mod:`evalplat.metrics.subtopic_join`). ``zscores``: a Z file read by
    :func:`evalplat.metrics.zscores.read_zscores`; each topic's value is then standardised by
    its reference mean and standard deviation (trec_eval's ``-Z``), and so is each figure.
    """
    import numpy as np

    from evalplat.metrics.build import CodedQrels, build
    from evalplat.metrics.pair_keys import DuplicateError
    from evalplat.metrics.sources import MeasureInputs
    from evalplat.metrics.subtopic_join import join, subtopic_qrels

    if missing not in ("zero", "skip"):
        raise InputError(f"missing must be 'zero' or 'skip', got {missing!r}")
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    chosen = parse_all([str(m) for m in metrics] if metrics else None)
    by_subtopic = None
    if any("subtopics" in m.spec.inputs for m in chosen):
        by_subtopic = subtopic_qrels(qrels)
        if by_subtopic is not None:
            qrels = by_subtopic[1]
    if not isinstance(qrels, CodedQrels):
        coded = coded_qrels(qrels, topics)
    elif topics is None or set(map(str, topics)) == set(qrels.topics.to_pylist()):
        coded = qrels
    else:
        raise InputError("topics differ from the topics the qrels were coded for")
    run_table = _as_table(
        run, "run", ("query_id", "doc_id", "score"), ordering=ordering, empty=coded.given_topics
    )
    try:
        judgments, ranking, run_only = build(
            coded, run_table, ordering=ordering,
            with_docs=by_subtopic is not None
            or any("documents" in m.spec.inputs for m in chosen),
        )  # fmt: skip
    except DuplicateError as error:
        raise _duplicate(error, run, "run") from None
    if max_results is not None:
        if max_results < 1:
            raise InputError(f"max results must be a positive integer, got {max_results}")
        ranking = ranking.top(max_results)
    query_ids: list[str] = coded.topics.to_pylist()
    if strict_topics:
        _check_strict(query_ids, ranking.num_ret, run_only)
    warnings = []
    if run_only:
        shown = ", ".join(run_only[:5]) + (" ..." if len(run_only) > 5 else "")
        count = f"{len(run_only)} run queries are" if len(run_only) > 1 else "1 run query is"
        warnings.append(f"{count} not among the topics and ignored: {shown}")
    keep = np.ones(len(query_ids), dtype=bool)
    if missing == "skip":
        keep &= ranking.num_ret > 0
    if exclude_no_relevant:
        keep &= judgments.relevant_count(1) > 0
    weight = _weights(weights, query_ids)[keep]
    inputs = MeasureInputs(
        len(query_ids), ranking, judgments,
        _records(records, query_ids) if records is not None else None,
        _documents(documents, ranking, query_ids) if documents is not None else None,
        subtopics=None if by_subtopic is None else join(by_subtopic[0], query_ids, ranking),
    )  # fmt: skip
    values, means = measure(chosen, inputs, keep, weight)
    kept_ids = [q for q, k in zip(query_ids, keep, strict=True) if k]
    if zscores is not None:
        answered = (ranking.num_ret > 0)[keep]
        values, means = zscores.standardise(chosen, kept_ids, values, answered, weight)
    options: dict[str, Any] = {
        "ordering": ordering,
        "missing": missing,
        "exclude_no_relevant": exclude_no_relevant,
        "weighted": weights is not None,
        "topics": "given" if coded.given_topics else "qrels",
    }
    if max_results is not None:
        options["max_results"] = max_results
    if zscores is not None:
        options["zscores"] = zscores.path
    return Evaluation(chosen, kept_ids, values, means, options, warnings)


def _check_strict(query_ids: list[str], num_ret: NDArray[np.float64], run_only: list[str]
                  ) -> None:  # fmt: skip
    """``InputError`` naming the first ids when the run's queries are not the topics."""
    missing = [q for q, n in zip(query_ids, num_ret, strict=True) if n == 0]
    if not missing and not run_only:
        return
    parts = []
    for ids, where in ((missing, "not in the run"), (run_only, "not in the qrels")):
        if ids:
            shown = ", ".join(ids[:3]) + (" ..." if len(ids) > 3 else "")
            parts.append(f"{len(ids)} {where} ({shown})")
    raise InputError(
        f"strict topics: the run's query ids differ from the qrels': {'; '.join(parts)}"
    )


def coded_qrels(
    qrels: pd.DataFrame | pa.Table | str | Path, topics: Sequence[str] | None = None
) -> CodedQrels:
    """``qrels`` coded over ``topics`` (default: the queries of the qrels), for scoring several
    runs against the same judgments: ``evaluate(coded_qrels(qrels, topics), run, ...)`` is
    ``evaluate(qrels, run, topics=topics, ...)`` without coding the judgments each time.
    Raises ``InputError`` as ``evaluate`` does for the qrels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.metrics.build import code_qrels
    from evalplat.metrics.pair_keys import DuplicateError

    table = _as_table(qrels, "qrels", ("query_id", "doc_id", "grade"))
    if topics is None:
        topic_ids = pc.unique(table.column("query_id"))
    else:
        topic_ids = pa.array(sorted({str(t) for t in topics}), pa.string())
    topic_ids = topic_ids.take(pc.array_sort_indices(topic_ids))
    try:
        return code_qrels(table, topic_ids, given_topics=topics is not None)
    except DuplicateError as error:
        raise _duplicate(error, qrels, "qrels") from None


def measure(
    chosen: Sequence[Metric],
    inputs: MeasureInputs,
    keep: NDArray[np.bool_],
    weight: NDArray[np.float64],
) -> tuple[dict[str, NDArray[np.float64]], dict[str, float]]:
    """Each metric's value per kept topic and its mean (weighted by ``weight``)."""
    from evalplat.metrics import compute
    from evalplat.metrics.aggregate import aggregate

    values: dict[str, NDArray[np.float64]] = {}
    means: dict[str, float] = {}
    for metric in chosen:
        name = str(metric)
        per_topic = compute(metric, inputs)[keep]
        values[name] = per_topic
        means[name] = aggregate(metric, per_topic, weight)
    return values, means


def _as_table(
    source: pd.DataFrame | pa.Table | str | Path,
    kind: str,
    columns: tuple[str, ...],
    *,
    ordering: str = "score",
    empty: bool = False,
) -> pa.Table:
    """A pyarrow table with string ids, from a path or a frame; validates columns and nulls.

    A table without rows is refused unless ``empty`` allows it."""
    import pyarrow as pa

    from evalplat.formats.trec import read_qrels_table, read_run_table

    if isinstance(source, (str, Path)):
        reader = read_qrels_table if kind == "qrels" else read_run_table
        return reader(source, check_duplicates=False)
    wanted = list(columns)
    if kind == "run" and ordering == "given" and "rank" in _column_names(source):
        wanted.append("rank")
    missing = [c for c in columns if c not in _column_names(source)]
    if missing:
        raise InputError(f"{kind} has no column {', '.join(missing)}")
    if isinstance(source, pa.Table):
        table = source.select(wanted)
    else:
        table = pa.Table.from_pandas(source[wanted], preserve_index=False)
    types = {"query_id": pa.string(), "doc_id": pa.string(), "grade": pa.int64(),
             "score": pa.float64(), "rank": pa.float64()}  # fmt: skip
    try:
        table = pa.table({name: table.column(name).cast(types[name]) for name in wanted})
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise InputError(f"{kind}: {error}") from None
    for name in wanted:
        if table.column(name).null_count:
            raise InputError(f"{kind} column {name} has missing values")
    if table.num_rows == 0 and not empty:
        raise InputError(f"{kind} is empty")
    return table


def _column_names(source: pd.DataFrame | pa.Table) -> list[str]:
    return [str(c) for c in (source.column_names if hasattr(source, "column_names")
                             else source.columns)]  # fmt: skip


def _duplicate(error: DuplicateError, source: object, kind: str) -> InputError:
    """The error of a repeated pair: the reference reader's, naming the line, for a file."""
    _name_line(source, kind)
    return InputError(f"duplicate {error.kind}: query {error.query_id!r}, doc {error.doc_id!r}")


def _name_line(source: object, kind: str) -> None:
    """For a file, raise the reference reader's error, which names the line."""
    from evalplat.formats.trec import name_first_error

    if isinstance(source, (str, Path)):
        name_first_error(source, kind)


def _weights(
    weights: Mapping[str, float] | pd.Series | None, query_ids: list[str]
) -> NDArray[np.float64]:
    import numpy as np

    if weights is None:
        return np.ones(len(query_ids))
    lookup = {str(k): float(v) for k, v in dict(weights).items()}
    result = np.array([lookup.get(q, 1.0) for q in query_ids], dtype=float)
    if (result < 0).any() or not np.isfinite(result).all():
        raise InputError("query weights must be finite and not negative")
    return result


def _records(records: pd.DataFrame | pa.Table, query_ids: list[str]) -> RunRecords:
    """Per-topic latency (NaN when not recorded) and result counts, in topic order."""
    import numpy as np
    import pyarrow as pa

    from evalplat.metrics.sources import RunRecords

    table = records if isinstance(records, pa.Table) else pa.Table.from_pandas(records)
    if "query_id" not in table.column_names or "latency_ms" not in table.column_names:
        raise InputError("records need columns query_id and latency_ms")
    position = {q: i for i, q in enumerate(query_ids)}
    latency = np.full(len(query_ids), np.nan)
    results = np.zeros(len(query_ids))
    ids = [str(q) for q in table.column("query_id").to_pylist()]
    times = table.column("latency_ms").to_pylist()
    counts = (table.column("results").to_pylist() if "results" in table.column_names
              else [0] * len(ids))  # fmt: skip
    for query_id, ms, count in zip(ids, times, counts, strict=True):
        i = position.get(query_id)
        if i is not None:
            latency[i] = np.nan if ms is None else float(ms)
            results[i] = float(count or 0)
    return RunRecords(latency, results)


def _documents(documents: pd.DataFrame, ranking: Ranking, query_ids: list[str]) -> DocumentFields:
    """Each field's value code per ranking row (-1 without a value), joined on (query, doc)."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.sources import DocumentFields

    missing = {"query_id", "doc_id", "field", "value"} - set(documents.columns)
    if missing:
        raise InputError(f"documents need columns query_id, doc_id, field, value ({missing})")
    rows = pd.DataFrame(
        {
            "query_id": np.asarray(query_ids, dtype=object)[ranking.topic],
            "doc_id": [] if ranking.doc_ids is None else ranking.doc_ids.to_pylist(),
        }
    )
    codes: dict[str, NDArray[np.int64]] = {}
    values: dict[str, list[str]] = {}
    for name, group in documents.groupby("field", sort=True):
        table = group.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id", "value"]]
        table = table.astype({"query_id": str, "doc_id": str, "value": str})
        joined = rows.merge(table, on=["query_id", "doc_id"], how="left")
        code, uniques = pd.factorize(joined["value"], sort=True)
        codes[str(name)] = code.astype(np.int64)
        values[str(name)] = [str(v) for v in uniques]
    return DocumentFields(codes, values)
