"""Several raters per (query, document): how a test set version resolves their grades, and how
well they agree.

A judgments file may grade one pair more than once when the grades come from different
``source`` values (a second rater, a click model, a language model). Each grade is stored with
its source; the metrics need one grade per pair, chosen at import by a **grade rule** that is
stored with the version (and hashed into it):

- ``mean`` (default): the arithmetic mean of the grades, rounded half up (1 and 2 give 2);
- ``max``: the highest grade (any rater's relevant is relevant);
- ``majority``: the most frequent grade, a tie going to the higher grade;
- ``source:NAME``: that source's grade; pairs it did not grade fall back to ``mean`` of the
  others.

Whatever the rule, a lead's grade (``source = "lead:<name>"``, a rating task's settled
disagreement) is the pair's grade: the raters' own grades stay beside it, for agreement.

Agreement is **linearly weighted** Cohen's kappa, for every pair of sources over the pairs both
graded, a lead's settling left out (it agrees with one side by construction). ``testset show``
and ``rate status`` both measure it with ``agreement_by_source``. Grades are ordinal
(0 < 1 < 2 < 3), so a 2 against a 3 is a smaller disagreement than a 0 against a 3. Over the
``c`` grade values either rater used (every grade of the rating task's scale, when one is
known), sorted, with ``O`` the observed
proportions of the ``c x c`` table of grade pairs, ``E`` the table expected by chance (outer
product of the two raters' marginals) and disagreement weights ``w_ij = |i - j| / (c - 1)``::

    kappa = 1 - sum(w * O) / sum(w * E)

1 is perfect agreement, 0 what chance alone gives, negative worse than chance. With two grade
values the weights are 0/1 and this is Cohen's original kappa. It is undefined (None) without
shared pairs or when chance alone would agree perfectly (both raters always gave one grade).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.validation import check_source

if TYPE_CHECKING:
    import pandas as pd


GRADE_RULES = ("mean", "max", "majority")
DEFAULT_GRADE_RULE = "mean"
# The source of a language model's grades (``evalplat judge``): ``llm:<judge>``.
MODEL_PREFIX = "llm:"
# The source of a lead's settled grade (``evalplat rate``): ``lead:<name>``.
LEAD_PREFIX = "lead:"


def check_grade_rule(rule: str) -> str:
    """``rule`` if it is ``mean``, ``max``, ``majority`` or ``source:NAME`` (NAME a judgment
    source: at most 40 characters, no control characters); else InputError."""
    if rule in GRADE_RULES:
        return rule
    name = rule[len("source:") :] if rule.startswith("source:") else ""
    if name and name.strip() == name:
        try:
            check_source(name)
        except InputError as error:
            raise InputError(f"grade rule {rule[:60]!r}: {error.problem}") from None
        return rule
    raise InputError(
        f"grade rule must be mean, max, majority or source:NAME (a judgment source), got "
        f"{rule[:60]!r}"
    )


def check_rule_source(rule: str, judgments: pd.DataFrame) -> str:
    """A ``source:NAME`` rule must name a source some judgment has: a misspelt name would
    silently resolve every pair by ``mean``. Other rules pass as they are."""
    if not rule.startswith("source:"):
        return rule
    name = rule[len("source:") :]
    sources = sorted({str(s) for s in judgments["source"].dropna().unique()})
    if name not in sources:
        known = ", ".join(sources) if sources else "none: no judgment names its source"
        raise InputError(f"--grades {rule}: no judgment has the source {name!r} (sources: {known})")
    return rule


def several_grades(judgments: pd.DataFrame) -> bool:
    """Does any (query, document) pair have more than one grade?"""
    return bool(judgments.duplicated(["query_id", "doc_id"]).any())


def resolve_grades(judgments: pd.DataFrame, rule: str = DEFAULT_GRADE_RULE) -> pd.DataFrame:
    """One grade per (query, document) pair by ``rule`` (module doc): ``query_id, doc_id,
    grade, source`` with the source kept where one rater graded the pair, None otherwise."""
    import numpy as np
    import pandas as pd

    check_grade_rule(rule)
    if not several_grades(judgments):
        return judgments
    keys = ["query_id", "doc_id"]
    groups = judgments.groupby(keys, sort=False)

    def mean(grades: pd.Series[Any]) -> int:
        return int(np.floor(float(grades.mean()) + 0.5))

    def majority(grades: pd.Series[Any]) -> int:
        counts = grades.value_counts()
        return int(max(counts[counts == counts.max()].index))

    if rule == "max":
        grade = groups["grade"].max()
    elif rule == "majority":
        grade = groups["grade"].agg(majority)
    else:
        grade = groups["grade"].agg(mean)
    if rule.startswith("source:"):
        named = judgments[judgments["source"] == rule[len("source:") :]]
        grade.update(named.set_index(keys)["grade"])
    settled = judgments[judgments["source"].astype(str).str.startswith(LEAD_PREFIX)]
    if len(settled):  # a lead's settling wins
        grade.update(settled.drop_duplicates(keys, keep="last").set_index(keys)["grade"])

    def only_source(values: pd.Series[Any]) -> Any:
        return values.iloc[0] if len(values) == 1 else None

    sources = groups["source"].agg(only_source)
    resolved = pd.DataFrame({"grade": grade.astype("int64"), "source": sources}).reset_index()
    return resolved[["query_id", "doc_id", "grade", "source"]]


def is_model_source(source: str) -> bool:
    """Whether grades of ``source`` are a language model's rather than people's."""
    return source.startswith(MODEL_PREFIX)


def grades_text(grades: str | None, judge: str | None = None) -> str:
    """How a figure's grades read on every surface: ``people's grades`` (``grades`` is
    ``people``), ``people's grades and judge gpt's`` where a gate let a judge's in, ``every
    source's grades`` for a figure stored before figures were people's alone."""
    if grades != "people":
        return "every source's grades, a judge's included"
    return "people's grades" if judge is None else f"people's grades and judge {judge}'s"


def people_grades(
    judgments: pd.DataFrame, rule: str | None = None, *, several: bool | None = None
) -> pd.DataFrame:
    """One grade per (query, document) pair from people's grades alone: every source but a
    language model's (``llm:<judge>``), resolved by ``rule`` (default ``mean``) as
    ``resolve_grades`` does. This is the one rule of which grades are people's: the figures
    every surface shows are scored on them, and a judge's grades count only where a gate lets
    them in (``evalplat.comparison.model_views``). ``several``: whether some pair has several
    grades, when the caller knows it already (it saves a pass over a million judgments)."""
    rule = check_grade_rule(rule or DEFAULT_GRADE_RULE)
    if "source" not in judgments.columns:  # judgments that name no source are people's
        judgments = judgments.assign(source=None)
    # each distinct source once: a version's million judgments name a handful
    sources = judgments["source"].dropna().astype(str).unique()
    models = [s for s in sources if is_model_source(s)]
    if not models:
        return judgments if several is False else resolve_grades(judgments, rule)
    people = judgments[~judgments["source"].isin(models)]
    return resolve_grades(people.reset_index(drop=True), rule)


@dataclass(frozen=True)
class Agreement:
    """Two sources' agreement over the pairs both graded."""

    source_a: str
    source_b: str
    pairs: int
    exact: float | None  # share of pairs with the same grade
    kappa: float | None  # linearly weighted Cohen's kappa
    alpha: float | None = None  # Krippendorff's alpha, ordinal


def weighted_kappa(
    a: Sequence[int], b: Sequence[int], scale: tuple[int, int] | None = None
) -> float | None:
    """Linearly weighted Cohen's kappa of two raters' grades of the same items (module doc).

    With ``scale`` (lowest, highest) the table spans every grade of the scale, so that the
    distance between two grades is their difference even when a grade between them went
    unused (a judge that never says 2 still disagrees by 3 between 0 and 3)."""
    import numpy as np

    left, right = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise InputError("kappa needs two equally long lists of grades")
    if left.size == 0:
        return None
    values = np.unique(np.concatenate([left, right]))
    if scale is not None:
        values = np.union1d(values, np.arange(scale[0], scale[1] + 1))
    c = values.size
    if c == 1:
        return None
    i, j = np.searchsorted(values, left), np.searchsorted(values, right)
    observed = np.zeros((c, c))
    np.add.at(observed, (i, j), 1.0)
    observed /= left.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    index = np.arange(c)
    weights = np.abs(index[:, None] - index[None, :]) / (c - 1)
    chance = float((weights * expected).sum())
    if chance == 0.0:
        return None
    return 1.0 - float((weights * observed).sum()) / chance


def agreement_by_source(
    ratings: pd.DataFrame, scale: tuple[int, int] | None = None
) -> list[Agreement]:
    """Agreement for every pair of sources in ``ratings`` (``query_id, doc_id, grade,
    source``), as :func:`agreement_of_rows` measures it."""
    columns = (ratings[c] for c in ("query_id", "doc_id", "grade", "source"))
    return agreement_of_rows(zip(*columns, strict=True), scale)


def agreement_of_rows(
    rows: Iterable[tuple[Any, Any, Any, Any]], scale: tuple[int, int] | None = None
) -> list[Agreement]:
    """Agreement for every pair of sources among ``rows`` (query id, doc id, grade, source; a
    missing source is named ``-``), over the pairs both sources graded; a lead's settled grades
    are left out. ``scale`` (lowest, highest grade) as ``weighted_kappa`` takes it: a rating
    task's, so that ``rate status`` and ``testset show`` agree. Plain rows, so that the rating
    server measures agreement without pandas."""
    by_source: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for query_id, doc_id, grade, source in rows:
        name = "-" if source is None or source != source else str(source)
        if not name.startswith(LEAD_PREFIX):
            by_source[name][(str(query_id), str(doc_id))] = int(grade)
    result = []
    for first, second in combinations(sorted(by_source), 2):
        a, b = by_source[first], by_source[second]
        both = sorted(a.keys() & b.keys())
        left, right = [a[key] for key in both], [b[key] for key in both]
        exact = sum(x == y for x, y in zip(left, right, strict=True)) / len(both) if both else None
        kappa = weighted_kappa(left, right, scale)
        alpha = krippendorff_alpha(left, right)
        result.append(Agreement(first, second, len(both), exact, kappa, alpha))
    return result


def krippendorff_alpha(a: Sequence[int], b: Sequence[int], level: str = "ordinal") -> float | None:
    """Krippendorff's alpha of two raters who both graded every item, at the ``ordinal`` or
    ``interval`` level of measurement (Krippendorff, *Content Analysis*, 2004, ch. 11).

    Each item contributes the grade pairs (a, b) and (b, a) to the coincidence matrix ``o``;
    ``n_g`` are its margins and ``n = 2 * items``. With a distance ``d``::

        alpha = 1 - (n - 1) * sum(o_ck * d_ck) / sum(n_c * n_k * d_ck)

    interval: ``d_ck = (c - k)^2``; ordinal: ``d_ck = (sum of n_g for g from c to k
    - (n_c + n_k) / 2)^2``, so a step between two rarely used grades is a small one. 1 is
    perfect agreement, 0 chance. None without items, or when every grade is the same."""
    import numpy as np

    if level not in ("ordinal", "interval"):
        raise InputError(f"alpha level must be ordinal or interval, got {level!r}")
    left, right = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise InputError("alpha needs two equally long lists of grades")
    if left.size == 0:
        return None
    values = np.unique(np.concatenate([left, right]))
    if values.size == 1:
        return None
    i, j = np.searchsorted(values, left), np.searchsorted(values, right)
    c = values.size
    coincidence = np.zeros((c, c))
    np.add.at(coincidence, (i, j), 1.0)
    np.add.at(coincidence, (j, i), 1.0)
    margins = coincidence.sum(axis=1)
    n = margins.sum()
    if level == "interval":
        distance = (values[:, None] - values[None, :]).astype(float) ** 2
    else:
        cumulative = np.concatenate([[0.0], np.cumsum(margins)])
        low, high = (
            np.minimum.outer(np.arange(c), np.arange(c)),
            np.maximum.outer(np.arange(c), np.arange(c)),
        )
        between = cumulative[high + 1] - cumulative[low]
        distance = (between - (margins[:, None] + margins[None, :]) / 2.0) ** 2
    expected = float((np.outer(margins, margins) * distance).sum())
    if expected == 0.0:
        return None
    return 1.0 - float(n - 1) * float((coincidence * distance).sum()) / expected
