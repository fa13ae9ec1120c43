"""How far a judge agrees with the team's raters, per human ``source``.

For every source that graded pairs the judge also graded (grades that named no source are
called ``-``):

- the **confusion matrix**: rows are the human grade, columns the judge's, over every grade of
  the judge's scale (and any human grade outside it);
- **linearly weighted Cohen's kappa** over the scale (``evalplat.testsets.raters``): a 2 against
  a 3 is a smaller disagreement than a 0 against a 3;
- **Krippendorff's alpha**, ordinal level (same module);
- the **bias per grade**: for the pairs a human graded ``g``, the judge's mean grade minus ``g``
  (positive: the judge is more generous than the people).

The judge may decide verdicts (gates) only when its weighted kappa reaches the floor
(``min_kappa``, 0.4 by default; "moderate" agreement on the usual reading) against **every**
source with shared pairs; otherwise ``refusal`` says which source fell short and by how much.
Agreement on a sample is an estimate: with 50 pairs the kappa's standard error is around 0.1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evalplat.testsets.raters import krippendorff_alpha, weighted_kappa

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.judging.what_if import ComparisonShift


@dataclass(frozen=True)
class GradeBias:
    grade: int
    pairs: int
    judge_mean: float
    bias: float


@dataclass(frozen=True)
class SourceAgreement:
    source: str
    pairs: int
    exact: float | None
    weighted_kappa: float | None
    alpha: float | None
    grades: list[int]  # the rows and columns of ``confusion``
    confusion: list[list[int]]
    bias: list[GradeBias]


@dataclass(frozen=True)
class Calibration:
    judge: str
    model: str
    prompt_hash: str
    scale: tuple[int, int]
    floor: float
    sampled: int
    failed: int
    sources: list[SourceAgreement]
    gating: bool
    refusal: str | None
    what_if: tuple[ComparisonShift, ...] = ()  # recent comparisons replayed with model grades

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement(both: pd.DataFrame, scale: tuple[int, int]) -> list[SourceAgreement]:
    """Per source, from ``source, human, judge`` rows (one per pair both graded)."""
    result = []
    for source, rows in both.groupby("source", sort=True):
        human = [int(g) for g in rows["human"]]
        model = [int(g) for g in rows["judge"]]
        grades = sorted(set(range(scale[0], scale[1] + 1)) | set(human))
        where = {g: i for i, g in enumerate(grades)}
        confusion = [[0] * len(grades) for _ in grades]
        for h, m in zip(human, model, strict=True):
            confusion[where[h]][where[m]] += 1
        bias = []
        for grade in sorted(set(human)):
            given = [m for h, m in zip(human, model, strict=True) if h == grade]
            mean = sum(given) / len(given)
            bias.append(GradeBias(grade, len(given), round(mean, 4), round(mean - grade, 4)))
        low, high = min(grades), max(grades)
        result.append(
            SourceAgreement(
                source=str(source),
                pairs=len(human),
                exact=sum(h == m for h, m in zip(human, model, strict=True)) / len(human),
                weighted_kappa=weighted_kappa(human, model, scale=(low, high)),
                alpha=krippendorff_alpha(human, model, "ordinal"),
                grades=grades,
                confusion=confusion,
                bias=bias,
            )
        )
    return result


def gating_refusal(sources: list[SourceAgreement], floor: float) -> str | None:
    """Why the judge may not decide verdicts, or None when it may (module doc)."""
    if not sources:
        return "no pair was graded by both the judge and a person, so agreement is unknown"
    for item in sources:
        if item.weighted_kappa is None:
            return (
                f"weighted kappa against '{item.source}' is undefined over {item.pairs} pairs "
                "(one grade only); judge more varied pairs"
            )
        if item.weighted_kappa < floor:
            return (
                f"weighted kappa {item.weighted_kappa:.2f} against '{item.source}' "
                f"({item.pairs} pairs) is below the floor {floor:.2f} (min_kappa)"
            )
    return None
