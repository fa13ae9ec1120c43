"""trec_eval's ``-Z``: each topic's value standardised by a reference set of runs.

A Z file holds one line per topic and measure, ``qid measure mean stddev``, separated by
whitespace, as trec_eval reads it; the measure is named as trec_eval prints it (``map``,
``P_10``, ``iprec_at_recall_0.10``) or, for a metric trec_eval has no name for, by evalplat's
canonical name (``nDCG(gain=exp)@10``). A topic's value v becomes (v - mean) / stddev, and then:

- a topic or a measure the file does not list gets -1000000 (trec_eval's
  ``MISSING_ZSCORE_VALUE``), as does a value other than the mean where the stddev is 0 (the
  mean itself gets 0); a stddev written ``nan`` gives ``nan``;
- a topic the run does not answer counts 0 (trec_eval's ``-c``: only answered topics are
  standardised);
- ``gm_map`` and ``gm_bpref`` standardise trec_eval's per-topic value for them, the logarithm
  ln max(v, 1e-5), and their figure is exp of the mean (an unanswered topic counts ln 1e-5);
- ``num_q`` is the number of topics, never standardised; the other counts are summed and the
  rest averaged, as without ``-Z``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evalplat.errors import InputError
from evalplat.metrics.aggregate import GEOMEAN_FLOOR, aggregate

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

# trec_eval's MISSING_ZSCORE_VALUE: the value of a topic and measure the file does not cover
MISSING_Z = -1000000.0


@dataclass(frozen=True)
class ZScores:
    """The means and standard deviations of a Z file, by (query id, measure name)."""

    path: str
    reference: dict[tuple[str, str], tuple[float, float]]

    def standardise(
        self,
        metrics: Sequence[Metric],
        query_ids: Sequence[str],
        values: dict[str, NDArray[np.float64]],
        answered: NDArray[np.bool_],
        weight: NDArray[np.float64],
    ) -> tuple[dict[str, NDArray[np.float64]], dict[str, float]]:
        """Each metric's z value per topic and the run's figure over them (see the module)."""
        standard: dict[str, NDArray[np.float64]] = {}
        figures: dict[str, float] = {}
        for metric in metrics:
            name = str(metric)
            raw = values[name]
            if metric.trec_name == "num_q":
                standard[name], figures[name] = raw, float(raw.sum())
                continue
            geometric = metric.aggregate == "geomean"
            base = np.log(np.maximum(raw, GEOMEAN_FLOOR)) if geometric else raw
            z = self._standard(metric.trec_name or name, query_ids, base)
            unanswered = math.log(GEOMEAN_FLOOR) if geometric else 0.0
            z = np.where(answered, z, unanswered)
            standard[name] = z
            if not geometric:
                figures[name] = aggregate(metric, z, weight)
            elif z.size and weight.sum() > 0:
                figures[name] = float(np.exp(np.dot(z, weight) / weight.sum()))
            else:
                figures[name] = 0.0
        return standard, figures

    def _standard(self, measure: str, query_ids: Sequence[str], values: NDArray[np.float64]
                  ) -> NDArray[np.float64]:  # fmt: skip
        found = [self.reference.get((query_id, measure)) for query_id in query_ids]
        known = np.array([entry is not None for entry in found], dtype=bool)
        mean = np.array([entry[0] if entry else 0.0 for entry in found])
        stddev = np.array([entry[1] if entry else 1.0 for entry in found])
        flat = stddev == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (values - mean) / np.where(flat, 1.0, stddev)
        z = np.where(flat, np.where(values == mean, 0.0, MISSING_Z), z)
        result: NDArray[np.float64] = np.where(known, z, MISSING_Z)
        return result


def read_zscores(path: str | Path) -> ZScores:
    """The Z file at ``path``; ``InputError`` naming the file and line of a malformed line.

    Blank lines are skipped; every other line has four fields, the last two numbers (``nan``
    is one, as trec_eval's files have for ``set_F``), and names a (topic, measure) once.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8 text", path=path) from None
    except OSError as error:
        raise InputError(f"cannot be read: {error.strerror}", path=path) from None
    reference: dict[tuple[str, str], tuple[float, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                f"expected 4 fields (qid measure mean stddev), found {len(fields)}",
                path=path,
                line=number,
            )
        query_id, measure, mean, stddev = fields
        numbers = []
        for label, field in (("mean", mean), ("stddev", stddev)):
            try:
                numbers.append(float(field))
            except ValueError:
                raise InputError(
                    f"the {label} must be a number, got {field!r}", path=path, line=number
                ) from None
        key = (query_id, measure)
        if key in reference:
            raise InputError(
                f"topic {query_id!r}, measure {measure!r} again (first on line {first_line[key]})",
                path=path,
                line=number,
            )
        reference[key] = (numbers[0], numbers[1])
        first_line[key] = number
    if not reference:
        raise InputError("no means and standard deviations", path=path)
    return ZScores(str(path), reference)
