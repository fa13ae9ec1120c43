"""What a rating task is made of and what it gives back: its pairs, who rates what in which
order, progress and agreement while it runs, and the test set version it becomes.

- **Order**: each rater sees the task's pairs in an order of their own, a shuffle seeded by
  the rater's name, so position bias averages out across raters and a reload finds the same
  order.
- **Assignment**: with ``raters_per_pair`` n, a rater's list is the pairs they graded plus the
  pairs fewer than n other raters have graded; a pair leaves the lists of the others once n
  raters graded it.
- **Closing**: the task stops taking grades in the transaction that reads them (it is
  ``closing`` until the version is stored, then ``closed``); every grade (not the "unsure"
  ones) becomes a judgment whose ``source`` is the rater's name, added to the test set's latest
  version as ``testset import --add`` does (``evalplat.judging.review.add_judgments``),
  resolved by the task's grade rule. A pair a lead settled also gets the lead's grade (source
  ``lead:NAME``), which wins over the rule; the raters' own grades stay beside it, so the
  version's agreement (``testset show``) is the task's (``rate status``), the lead left out.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.validation import check_free_text, check_number, check_source, check_url_name
from evalplat.judging.spec import judge_name_problem
from evalplat.testsets.raters import (
    LEAD_PREFIX,
    MODEL_PREFIX,
    agreement_of_rows,
    check_grade_rule,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import ImportOutcome, Store
    from evalplat.store.rating import RatingTaskInfo
    from evalplat.store.rating_views import GradeRow, PairRow

DEFAULT_SCALE = (0, 3)
ROLES = ("rater", "lead")


def parse_scale(text: str) -> tuple[int, int]:
    """``0-3`` → (0, 3): single digits, as grades are given with one key."""
    low, sep, high = text.partition("-")
    digits = low + high
    if not sep or not (digits.isascii() and digits.isdigit()) or len(low) != 1 or len(high) != 1:
        raise InputError(f"--scale must be LOW-HIGH with single digits (e.g. 0-3), got {text!r}")
    if int(low) >= int(high):
        raise InputError(f"--scale {text}: the lowest grade must be below the highest")
    return int(low), int(high)


def scale_of(judgments: pd.DataFrame) -> tuple[int, int]:
    """The test set's scale: its lowest to its highest grade, when both are single digits
    and differ; else 0-3."""
    if judgments.empty:
        return DEFAULT_SCALE
    low, high = int(judgments["grade"].min()), int(judgments["grade"].max())
    return (low, high) if 0 <= low < high <= 9 else DEFAULT_SCALE


def check_rater(name: str) -> str:
    """A rater's name becomes their judgments' source: a short name that is no model's."""
    check_source(name)
    if not name.strip() or name.strip() != name or "/" in name:
        raise InputError(f"rater name {name!r}: no leading or trailing spaces, no '/'")
    if name.startswith((MODEL_PREFIX, "clicks:", LEAD_PREFIX)):
        raise InputError(f"rater name {name!r} looks like a model's or a lead's source")
    return name


def create_task(
    store: Store,
    name: str,
    testset: str,
    *,
    run: str | None = None,
    k: int = 10,
    pair_file: Path | None = None,
    scale: str | None = None,
    raters_per_pair: int = 1,
    show_rank: bool = False,
    grade_rule: str = "mean",
    judge: str | None = None,
    guidelines: Path | None = None,
) -> RatingTaskInfo:
    """A task of the unjudged top ``k`` of ``run``, or of the pairs listed in ``pair_file``."""
    from evalplat.formats.pair_files import read_pair_list

    check_url_name(name, "rating task name")
    check_grade_rule(grade_rule)
    if judge is not None and (problem := judge_name_problem(judge)) is not None:
        raise InputError(f"--judge {judge[:40]!r}: {problem}")
    check_number(raters_per_pair, "--raters-per-pair", minimum=1, maximum=20)
    bounds = None if scale is None else parse_scale(scale)
    if (run is None) == (pair_file is None):
        raise InputError("give the pairs with one of --from-run RUN or --pairs FILE")
    text = None
    if guidelines is not None:
        from evalplat.formats.text_files import decode_text

        try:
            text = decode_text(guidelines.read_bytes(), guidelines)
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", path=guidelines) from None
        check_free_text(text, "--guidelines", path=guidelines)
    run_id = None
    if pair_file is not None:
        pairs = read_pair_list(pair_file)
    else:
        run_id = store.resolve_run(str(run))
        pairs = store.unjudged(run_id, k)[["query_id", "doc_id", "rank"]]
        if pairs.empty:
            raise InputError(f"run {run_id} has no unjudged documents in its top {k}")
    if bounds is None:
        bounds = scale_of(store.load_test_set(testset).judgments)
    return store.create_rating_task(
        name,
        testset,
        pairs,
        run_id=run_id,
        scale=bounds,
        raters_per_pair=raters_per_pair,
        show_rank=show_rank,
        grade_rule=grade_rule,
        judge=judge,
        guidelines=text,
    )


def rater_order(pair_ids: list[int], rater: str) -> list[int]:
    """The task's pairs in ``rater``'s own order (module doc)."""
    seed = int.from_bytes(hashlib.sha256(rater.encode("utf-8")).digest()[:8], "big")
    ordered = sorted(pair_ids)
    random.Random(seed).shuffle(ordered)
    return ordered


def assigned_pairs(
    pair_ids: list[int], grades: Sequence[GradeRow], rater: str, raters_per_pair: int
) -> list[int]:
    """The pairs on ``rater``'s list, in their order (module doc)."""
    mine = {g.pair_id for g in grades if g.rater == rater}
    others = Counter(p for p, _ in {(g.pair_id, g.rater) for g in grades if g.rater != rater})
    full = {p for p, raters in others.items() if raters >= raters_per_pair}
    return [p for p in rater_order(pair_ids, rater) if p in mine or p not in full]


@dataclass(frozen=True)
class RaterProgress:
    rater: str
    graded: int
    unsure: int
    assigned: int


@dataclass(frozen=True)
class RaterAgreement:
    rater_a: str
    rater_b: str
    pairs: int
    kappa: float | None  # linearly weighted Cohen's kappa over the task's scale
    alpha: float | None  # Krippendorff's alpha, ordinal


def progress(
    pair_ids: list[int], grades: Sequence[GradeRow], raters: list[str], raters_per_pair: int
) -> list[RaterProgress]:
    """For every rater: graded, unsure and on their list (invited raters who have not started
    count too)."""
    result = []
    for rater in sorted(set(raters) | {g.rater for g in grades}):
        mine = [g for g in grades if g.rater == rater]
        assigned = len(assigned_pairs(pair_ids, grades, rater, raters_per_pair))
        unsure = sum(1 for g in mine if g.grade is None)
        result.append(RaterProgress(rater, len(mine) - unsure, unsure, assigned))
    return result


def agreement(grades: Sequence[GradeRow], scale: tuple[int, int]) -> list[RaterAgreement]:
    """Every two raters' agreement over the pairs both graded (not unsure), measured as
    ``testset show`` measures it on the version the task closes into
    (``evalplat.testsets.raters.agreement_of_rows``; a pair of the task is its key)."""
    rows = ((str(g.pair_id), "", g.grade, g.rater) for g in grades if g.grade is not None)
    return [
        RaterAgreement(a.source_a, a.source_b, a.pairs, a.kappa, a.alpha)
        for a in agreement_of_rows(rows, scale)
    ]


def disagreements(grades: Sequence[GradeRow]) -> dict[int, dict[str, int]]:
    """Pairs graded differently by two or more raters: pair id → rater → grade."""
    by_pair: dict[int, dict[str, int]] = defaultdict(dict)
    for g in grades:
        if g.grade is not None:
            by_pair[g.pair_id][g.rater] = g.grade
    return {
        pair_id: graded
        for pair_id, graded in sorted(by_pair.items())
        if len(set(graded.values())) > 1
    }


def judgments_of(
    grades: Sequence[GradeRow], pairs: Sequence[PairRow], leads: dict[int, str]
) -> Any:
    """The task's grades as judgments (``query_id, doc_id, grade, source``) (module doc)."""
    import pandas as pd

    # the raters' own grades stay (agreement is measured on them); the lead's settles the pair
    # (``evalplat.testsets.raters.resolve_grades``)
    rows: list[tuple[str, str, int, str]] = [
        (g.query_id, g.doc_id, g.grade, g.rater) for g in grades if g.grade is not None
    ]
    rows += [
        (p.query_id, p.doc_id, p.settled_grade, f"{LEAD_PREFIX}{leads.get(p.pair_id, 'lead')}")
        for p in pairs
        if p.settled_grade is not None
    ]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "source"])
    return frame.astype({"grade": "int64"})


def close_task(store: Store, name: str) -> ImportOutcome:
    """The task's grades as a new version of its test set (module doc); then the task is
    closed. The grades are read in the transaction that stops the task taking more
    (``Store.take_rating_grades``), so every grade a rater was told was saved is in the
    version. Closing again after a failure in between gives the same version (same content)."""
    from evalplat.judging.review import add_judgments

    def judgments(pairs: list[PairRow], grades: list[GradeRow], leads: dict[int, str]) -> Any:
        added = judgments_of(grades, pairs, leads)
        if added.empty:
            raise InputError(f"rating task {name!r} has no grades yet: nothing to close into")
        return added

    added = store.take_rating_grades(name, judgments)
    task = store.rating_task(name)
    latest = store.test_set_version(task.test_set).version
    content = add_judgments(store.load_test_set(task.test_set), added, task.grade_rule)
    outcome = store.import_test_set(
        task.test_set, content, source={"rating_task": name, "added_to": latest}, parent=latest
    )
    store.mark_rating_task_closed(name, outcome.version.version)
    return outcome
