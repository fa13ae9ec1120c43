"""What measures are computed from, gathered once per evaluation: :class:`MeasureInputs`.

Each field is one of the model's inputs (``evalplat.metrics.model.INPUTS``), coded per topic in
the evaluation's topic order. A field is ``None`` when the evaluation has no such data (a run
imported from a file has no records; a test set without documents has no fields): asking for
it names the metric and what is missing, rather than scoring a made-up 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Judgments, Ranking
    from evalplat.metrics.registry import Metric

_MISSING = {
    "judgments": "judgments",
    "ranking": "a ranking",
    "records": "run records (latency, result counts; a run imported from a file has none)",
    "documents": "document field values (stored hit fields or the test set's documents)",
    "events": "user behaviour events for this config version",
    "subtopics": "judgments per subtopic (a qrels file whose second column is the subtopic, "
    "read by `evalplat evaluate`; stored test sets keep none)",
}


@dataclass(frozen=True)
class RunRecords:
    """What a run recorded for each topic: latency in ms (NaN when unknown) and result count."""

    latency_ms: NDArray[np.float64]
    results: NDArray[np.float64]


@dataclass(frozen=True)
class DocumentFields:
    """Field values of the ranked documents: per field, one value code per ranking row (-1
    where the document has no value), and the distinct values the codes stand for."""

    codes: dict[str, NDArray[np.int64]]
    values: dict[str, list[str]]

    def field(self, name: str, metric: Metric) -> NDArray[np.int64]:
        """The codes of ``name``; ``InputError`` naming the fields there are otherwise."""
        if name not in self.codes:
            known = ", ".join(sorted(self.codes)) or "none"
            raise InputError(f"{metric}: the documents have no field {name!r} (fields: {known})")
        return self.codes[name]


@dataclass(frozen=True)
class SubtopicJudgments:
    """Judgments per subtopic (intent), one row each, joined with the ranking: the topic code,
    a code for each (topic, subtopic) and for each (topic, document), both numbered in sorted
    order, the grade, and the ranking row that retrieved the document (-1 when none did)."""

    topic: NDArray[np.int64]
    intent: NDArray[np.int64]
    doc: NDArray[np.int64]
    grade: NDArray[np.int64]
    row: NDArray[np.int64]
    n_intents: int


@dataclass(frozen=True)
class MeasureInputs:
    """Every input of one evaluation, per topic; ``None`` where the evaluation has none."""

    n_topics: int
    ranking: Ranking | None = None
    judgments: Judgments | None = None
    records: RunRecords | None = None
    documents: DocumentFields | None = None
    events: object | None = None
    subtopics: SubtopicJudgments | None = None

    def get(self, name: str, metric: Metric) -> object:
        """The input ``name`` for ``metric``; ``InputError`` naming both when it is absent."""
        value = getattr(self, name, None)
        if value is None:
            raise InputError(f"{metric} needs {_MISSING.get(name, name)}, which this run lacks")
        return value
