"""People's grades and a judge's grades, kept apart in a comparison.

A test set version may hold grades from a language model (``source = "llm:<judge>"``, written by
``evalplat judge``). Each gate chooses what they may do (``Gate.unjudged``):

- every mode but the two below: nothing. Both runs are scored on the people's grades alone
  (the **human view**), whatever else the version holds;
- ``grade``: the judge's grades count as ordinary grades (the **model view**: the people's
  grades, plus the judge's grade of every pair no person graded); the optimistic bound covers
  the documents neither graded;
- ``judge``: the human view decides, as ``bound`` does; when it says ``needs_judgments``, the
  model view decides instead, its own bound covering what the judge left unjudged. The figures
  shown stay the people's.

So on a planted case where the candidate drops judged relevant documents for documents nobody
judged, the human view can only say ``needs_judgments``; once a judge has graded those
documents non-relevant, the model view's bound no longer hides the drop and the verdict is
``regression``, marked as decided by model grades.

A verdict **rests on model grades** (``MetricComparison.model_decided``) when its gate is in
``grade`` mode and the judge graded any of the top-k documents, or in ``judge`` mode and the
model view settled what the human view left open (a model view that still needs judgments
settles nothing). Either way it says how much: ``model_share``, the judge's share of the
grades of both runs' top ``k`` documents (each run's ranking counted on its own, so a document
both show counts twice). Every metric, gated or not, also carries both views' means and delta
side by side (``human_*``, ``model_*``).

Which people's grade a pair has follows the version's grade rule over the sources that are not
a model's (``evalplat.testsets.raters``); a pair a person graded keeps the person's grade in the
model view, even when a judge graded it too (a reviewed grade).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evalplat.comparison.guard import BoundScores, optimistic_bound, score_results
from evalplat.comparison.results import MODEL_MODES, ComparisonResult, Gate
from evalplat.metrics.names import parse
from evalplat.testsets.raters import MODEL_PREFIX, is_model_source

if TYPE_CHECKING:
    import pandas as pd

_SEVERITY = {"regression": 3, "needs_judgments": 2, "improvement": 1, "unchanged": 0}


@dataclass(frozen=True)
class GradeViews:
    """Both runs' per-query scores (tidy ``query_id, metric, value``) and optimistic bounds in
    the human view and, when a judge is named, the model view; ``share`` is the judge's share
    of the top-k grades per metric."""

    judge: str | None
    human: tuple[pd.DataFrame, pd.DataFrame]
    human_bound: BoundScores | None
    model: tuple[pd.DataFrame, pd.DataFrame] | None = None
    model_bound: BoundScores | None = None
    share: dict[str, float] | None = None


def model_sources(judgments: pd.DataFrame) -> set[str]:
    """The judges whose grades ``judgments`` (with ``source``) holds."""
    # each distinct source once: a version's million judgments name a handful
    sources = judgments["source"].dropna().astype(str).unique()
    return {s[len(MODEL_PREFIX) :] for s in sources if is_model_source(s)}


def gate_judge(gates: Sequence[Gate] | None) -> str | None:
    """The one judge the gates let in, or None; two different judges are refused."""
    from evalplat.errors import InputError

    named = {g.judge for g in gates or () if g.unjudged in MODEL_MODES and g.judge}
    if len(named) > 1:
        raise InputError(
            f"gates name different judges ({', '.join(sorted(named))}): one comparison takes "
            "the grades of one judge"
        )
    return named.pop() if named else None


def human_grades(judgments: pd.DataFrame, rule: str | None) -> pd.DataFrame:
    """One people's grade per pair (``evalplat.testsets.raters.people_grades``)."""
    from evalplat.testsets.raters import people_grades

    resolved = people_grades(judgments, rule)
    return resolved[["query_id", "doc_id", "grade"]].reset_index(drop=True)


def model_grades(judgments: pd.DataFrame, judge: str, human: pd.DataFrame) -> pd.DataFrame:
    """The people's grades plus the judge's grade of every pair no person graded, with a
    ``model`` column saying which rows are the judge's."""
    import pandas as pd

    ours = judgments[judgments["source"].astype(object) == f"{MODEL_PREFIX}{judge}"]
    ours = ours[["query_id", "doc_id", "grade"]].drop_duplicates(["query_id", "doc_id"])
    known = human[["query_id", "doc_id"]].assign(_people=True)
    ours = ours.merge(known, how="left", on=["query_id", "doc_id"])
    ours = ours[ours["_people"].isna()].drop(columns="_people")
    return pd.concat(
        [human.assign(model=False), ours.assign(model=True)], ignore_index=True
    ).astype({"query_id": str, "doc_id": str, "grade": "int64"})


def build_views(
    judgments: pd.DataFrame,
    rule: str | None,
    results: tuple[pd.DataFrame, pd.DataFrame],
    stored: tuple[pd.DataFrame, pd.DataFrame],
    topics: Sequence[str],
    metrics: Sequence[str],
    judge: str | None,
    *,
    depth: int = 10,
    people_scored: bool = False,
) -> GradeViews:
    """Score both runs (``query_id, doc_id, rank`` results) in the human view and, with a
    ``judge``, the model view. Measures that read no judgments keep their stored scores.
    ``people_scored``: the ``stored`` scores are on people's grades already (every evaluation
    stored since they are), so they are the human view as they are: one figure, computed
    once."""
    import pandas as pd

    names = list(dict.fromkeys(str(parse(m)) for m in metrics))
    graded = [n for n in names if parse(n).reads_judgments]
    gateable = [n for n in graded if parse(n).gateable]
    human = human_grades(judgments, rule)

    def view(grades: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        frames = []
        for side, run in zip(stored, results, strict=True):
            kept = side[~side["metric"].isin(graded)]
            scored = score_results(grades, run, graded, topics) if graded else kept.iloc[:0]
            frames.append(pd.concat([kept, scored], ignore_index=True))
        return frames[0], frames[1]

    human_view = stored if people_scored else view(human)
    human_bound = optimistic_bound(human, *results, gateable, topics, depth=depth)
    if judge is None:
        return GradeViews(None, human_view, human_bound)
    filled = model_grades(judgments, judge, human)
    share = {name: _share(filled, results, parse(name).cutoff or depth) for name in graded}
    grades = filled.drop(columns="model")
    return GradeViews(
        judge,
        human_view,
        human_bound,
        view(grades),
        optimistic_bound(grades, *results, gateable, topics, depth=depth),
        share,
    )


def _share(filled: pd.DataFrame, results: tuple[pd.DataFrame, pd.DataFrame], k: int) -> float:
    """The judge's share of the grades of both runs' top ``k`` (0 when nothing is graded)."""
    import pandas as pd

    top = pd.concat([r[r["rank"] <= k][["query_id", "doc_id"]] for r in results])
    graded = top.astype(str).merge(filled, on=["query_id", "doc_id"])
    return float(graded["model"].mean()) if len(graded) else 0.0


def merge_views(
    human: ComparisonResult, model: ComparisonResult | None, views: GradeViews
) -> ComparisonResult:
    """One result from both views, each metric decided by its gate's mode (module doc)."""
    modes = {g.metric: g.unjudged for g in human.gates if g.segment is None}
    by_name = {m.metric: m for m in model.metrics} if model is not None else {}
    rows = []
    for row in human.metrics:
        mode = modes.get(row.metric, "bound")
        other = by_name.get(row.metric)
        share = (views.share or {}).get(row.metric)
        sides: dict[str, Any] = {
            "human_baseline": row.baseline,
            "human_candidate": row.candidate,
            "human_delta": row.delta,
            "human_verdict": row.verdict,
        }
        if other is not None:
            sides.update(
                judge=views.judge,
                model_share=share,
                model_baseline=other.baseline,
                model_candidate=other.candidate,
                model_delta=other.delta,
                model_verdict=other.verdict,
            )
        if other is not None and row.gated and mode == "grade":
            decided = bool(share)
            rows.append(replace(other, unjudged_mode=mode, model_decided=decided, **sides))
        elif (
            other is not None
            and row.gated
            and mode == "judge"
            and row.verdict == "needs_judgments"
            and other.verdict != "needs_judgments"
        ):
            rows.append(
                replace(row, verdict=other.verdict, unjudged_mode=mode, model_decided=True, **sides)
            )
        else:
            rows.append(replace(row, **sides))
    segments = human.segments
    if model is not None:
        segment_modes = {(g.metric, g.segment): g.unjudged for g in human.gates if g.segment}
        model_segments = {(s.metric, s.segment): s for s in model.segments}
        segments = tuple(
            model_segments.get((s.metric, s.segment), s)
            if segment_modes.get((s.metric, s.segment)) == "grade"
            else s
            for s in human.segments
        )
    gated = [m.verdict for m in rows if m.gated] + [s.verdict for s in segments if s.gated]
    verdict = max(gated, key=_SEVERITY.__getitem__) if gated else "unchanged"
    return replace(human, metrics=tuple(rows), segments=segments, verdict=verdict)
