"""Operational facts of a run and of a comparison: what is wrong with the searches themselves.

A run can complete and score while most of its queries returned nothing, while its judged
share of the top k collapsed, or while some of its queries had no text to search. None of
these is a relevance result; each is said in one line, wherever the run is read (the run page,
the comparison page, ``compare`` and the alert), from this one computation. No database here:
the store passes the records.

The facts and their thresholds (documented in docs/regression-detection.md, "Operational
facts"):

- ``zero_results``: more than half of the answered queries returned nothing
  (``evalplat.metrics.run_health.MOSTLY_EMPTY_SHARE``, the run page's flag);
- ``failed``: a query could not be searched (any; a compared run is complete unless
  ``--allow-partial``);
- ``empty_text``: a query of the searched version has an empty text (any);
- ``judged_fell`` (a comparison only): the judged share of the candidate's top k fell by
  ``JUDGED_FALL`` or more from the baseline's, on the same judgments. The share counts the
  documents shown (``min(k, results)`` per answered query), so queries that returned nothing do
  not lower it: that is ``zero_results``' fact.

A comparison states the facts of both runs, each with its ``side``: ``candidate`` with ``new``
set for a kind the baseline does not have (what changed between them, listed first),
``both`` for a kind both runs have (the candidate's sentence, the baseline's figures under
``figures["baseline"]``), ``baseline`` for one the candidate no longer has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from evalplat.metrics.run_health import MOSTLY_EMPTY_SHARE

__all__ = [
    "FACT_KINDS",
    "JUDGED_FALL",
    "Fact",
    "RunRecords",
    "comparison_facts",
    "judged_share",
    "run_facts",
]

FACT_KINDS = ("zero_results", "failed", "empty_text", "judged_fell")
# the judged share of the top k must fall by this much (absolute) to be a fact
JUDGED_FALL = 0.2
# query ids kept in a fact's figures (the run page lists them all)
LISTED = 5


@dataclass(frozen=True)
class Fact:
    """One operational fact: its ``kind``, the one-line ``sentence`` and the ``figures`` it
    rests on (JSON-ready). In a comparison, ``side`` is ``candidate``, ``both`` or
    ``baseline`` and ``new`` is true for a candidate fact the baseline does not share."""

    kind: str
    sentence: str
    figures: dict[str, Any] = field(default_factory=dict)
    run: int | None = None
    side: str | None = None
    new: bool = False

    def line(self) -> str:
        """The sentence and, in a comparison, whose fact it is: ``…; new in the candidate``."""
        if self.side == "both":
            return f"{self.sentence}; the baseline too"
        if self.side == "candidate":
            return f"{self.sentence}; {'new in' if self.new else 'of'} the candidate"
        if self.side == "baseline":
            return f"{self.sentence}; the baseline only"
        return self.sentence

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sentence": self.sentence,
            "figures": dict(self.figures),
            "run": self.run,
            "side": self.side,
            "new": self.new,
            "line": self.line(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fact:
        run = data.get("run")
        return cls(
            kind=str(data["kind"]),
            sentence=str(data["sentence"]),
            figures=dict(data.get("figures") or {}),
            run=None if run is None else int(run),
            side=None if data.get("side") is None else str(data["side"]),
            new=bool(data.get("new", False)),
        )


@dataclass(frozen=True)
class RunRecords:
    """What a run's facts are read from, per query: ``status`` (``ok`` or ``failed``) and
    ``results`` (the number of results returned) from the run's records, ``texts`` of the test
    set version it searched (a query missing from it has a text: the store passes the blank
    ones only), and ``judged`` (Judged@``k``) from its evaluation, when scored."""

    run: int | None
    status: Mapping[str, str]
    results: Mapping[str, int]
    texts: Mapping[str, str] = field(default_factory=dict)
    judged: Mapping[str, float] = field(default_factory=dict)
    k: int = 10


def _queries(count: int) -> str:
    return f"{count} {'query' if count == 1 else 'queries'}"


def _of_run(run: int | None) -> str:
    return "" if run is None else f" (run {run})"


def run_facts(records: RunRecords) -> list[Fact]:
    """The facts of one run, in ``FACT_KINDS`` order; empty for a healthy run."""
    facts = []
    where = _of_run(records.run)
    answered = [q for q, status in records.status.items() if status == "ok"]
    empty = sorted(q for q in answered if records.results.get(q, 0) == 0)
    if answered and len(empty) / len(answered) > MOSTLY_EMPTY_SHARE:
        facts.append(
            Fact(
                "zero_results",
                f"{len(empty)} of {_queries(len(answered))} returned nothing{where}",
                {"empty": len(empty), "answered": len(answered),
                 "share": len(empty) / len(answered), "queries": empty[:LISTED]},
                records.run,
            )
        )  # fmt: skip
    failed = sorted(q for q, status in records.status.items() if status != "ok")
    if failed:
        searched = len(records.status)
        facts.append(
            Fact(
                "failed",
                f"{len(failed)} of {_queries(searched)} failed{where}",
                {"failed": len(failed), "searched": searched, "queries": failed[:LISTED]},
                records.run,
            )
        )
    blank = sorted(q for q, text in records.texts.items() if not str(text).strip())
    if blank:
        verb = "has" if len(blank) == 1 else "have"
        facts.append(
            Fact(
                "empty_text",
                f"{_queries(len(blank))} {verb} an empty text{where}",
                {"empty_texts": len(blank), "queries": blank[:LISTED]},
                records.run,
            )
        )
    return facts


def judged_share(records: RunRecords) -> float | None:
    """The judged share of the documents the run showed in its top k: Σ min(k, results) ·
    Judged@k over the answered queries, divided by Σ min(k, results). None when the run showed
    nothing or was not scored with Judged@k."""
    shown_total = 0.0
    judged_total = 0.0
    for query, status in records.status.items():
        value = records.judged.get(query)
        shown = min(records.k, records.results.get(query, 0))
        if status != "ok" or value is None or value != value or shown <= 0:
            continue
        shown_total += shown
        judged_total += shown * float(value)
    return judged_total / shown_total if shown_total else None


def comparison_facts(baseline: RunRecords, candidate: RunRecords) -> list[Fact]:
    """Both runs' facts: the new ones first (a kind only the candidate has, and a fall of the
    judged share), then the kinds both have, then the baseline's alone."""
    before = {fact.kind: fact for fact in run_facts(baseline)}
    after = run_facts(candidate)
    new = [replace(fact, side="candidate", new=True) for fact in after if fact.kind not in before]
    shares = judged_share(baseline), judged_share(candidate)
    if shares[0] is not None and shares[1] is not None and shares[0] - shares[1] >= JUDGED_FALL:
        k = candidate.k
        runs = (
            ""
            if baseline.run is None or candidate.run is None
            else f" (run {baseline.run} → run {candidate.run})"
        )
        new.append(
            Fact(
                "judged_fell",
                f"judged share of the top {k} fell from {shares[0]:.2f} to {shares[1]:.2f}{runs}",
                {"k": k, "baseline": shares[0], "candidate": shares[1],
                 "fall": shares[0] - shares[1]},
                candidate.run,
                side="candidate",
                new=True,
            )
        )  # fmt: skip
    both = [
        replace(
            fact,
            side="both",
            figures={**fact.figures, "baseline": before[fact.kind].figures},
        )
        for fact in after
        if fact.kind in before
    ]
    kinds = {fact.kind for fact in after}
    gone = [replace(f, side="baseline") for f in before.values() if f.kind not in kinds]
    return new + both + gone
