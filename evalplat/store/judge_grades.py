"""The judge's ledger in the store: grades a language model gave, read and written one by one.

Each answer is committed as it arrives (``record_judge_grade``), so a command killed half way
keeps every answer it was paid for; the next command reads them back (``judge_ledger``) and asks
only for the rest. Keys and meaning: ``evalplat.db.judge_grades``.

Calibrations are kept too (``record_calibration``): ``judge_gating`` answers, from the latest
one, whether a judge may decide verdicts, and why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from evalplat.db.judge_grades import JudgeCalibration, JudgeGrade
from evalplat.store.base import StoreBase, utcnow


@dataclass(frozen=True)
class LedgerEntry:
    """One answer of a judge: its grade (None when the answer held none) and provenance."""

    query_hash: str
    doc_hash: str
    grade: int | None
    error: str | None
    rationale: str | None
    answer: str | None
    model: str
    temperature: float
    prompt_tokens: int | None
    completion_tokens: int | None
    created_at: datetime | None = None


class JudgeGradesMixin(StoreBase):
    def judge_ledger(self, judge: str, prompt_hash: str) -> dict[tuple[str, str], LedgerEntry]:
        """Every answer ``judge`` gave with prompt ``prompt_hash``, by (query hash, doc hash)."""
        with self.session() as session:
            rows = session.scalars(
                select(JudgeGrade).where(
                    JudgeGrade.judge == judge, JudgeGrade.prompt_hash == prompt_hash
                )
            ).all()
            return {
                (row.query_hash, row.doc_hash): LedgerEntry(
                    query_hash=row.query_hash,
                    doc_hash=row.doc_hash,
                    grade=row.grade,
                    error=row.error,
                    rationale=row.rationale,
                    answer=row.answer,
                    model=row.model,
                    temperature=row.temperature,
                    prompt_tokens=row.prompt_tokens,
                    completion_tokens=row.completion_tokens,
                    created_at=row.created_at,
                )
                for row in rows
            }

    def judge_rationales(self, judge: str) -> dict[tuple[str, str], str | None]:
        """The rationale of ``judge``'s latest graded answer per (query hash, doc hash), over
        every prompt it was asked with."""
        with self.session() as session:
            rows = session.execute(
                select(JudgeGrade.query_hash, JudgeGrade.doc_hash, JudgeGrade.rationale)
                .where(JudgeGrade.judge == judge, JudgeGrade.grade.is_not(None))
                .order_by(JudgeGrade.created_at, JudgeGrade.id)
            ).all()
        return {(q, d): r for q, d, r in rows}

    def record_judge_grade(self, judge: str, prompt_hash: str, entry: LedgerEntry) -> None:
        """Commit one answer; an answer already recorded for the same key is kept as it was."""
        with self.session(write=True) as session:
            dialect = session.get_bind().dialect.name
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            session.execute(
                insert(JudgeGrade)
                .values(
                    judge=judge,
                    prompt_hash=prompt_hash,
                    query_hash=entry.query_hash,
                    doc_hash=entry.doc_hash,
                    grade=entry.grade,
                    error=entry.error,
                    rationale=entry.rationale,
                    answer=entry.answer,
                    model=entry.model,
                    temperature=entry.temperature,
                    prompt_tokens=entry.prompt_tokens,
                    completion_tokens=entry.completion_tokens,
                    created_at=entry.created_at or utcnow(),
                )
                .on_conflict_do_nothing(
                    index_elements=["judge", "prompt_hash", "query_hash", "doc_hash"]
                )
            )

    def record_calibration(self, calibration: dict[str, Any], test_set: str) -> None:
        """Keep a ``judge calibrate`` result (``Calibration.to_dict``); the latest per judge
        decides gating."""
        with self.session(write=True) as session:
            session.add(
                JudgeCalibration(
                    judge=calibration["judge"],
                    model=calibration["model"],
                    prompt_hash=calibration["prompt_hash"],
                    test_set=test_set,
                    floor=calibration["floor"],
                    gating=calibration["gating"],
                    refusal=calibration["refusal"],
                    # the agreement figures; the replayed comparisons stay in their report
                    result={k: v for k, v in calibration.items() if k != "what_if"},
                    created_at=utcnow(),
                )
            )

    def judge_gating(self, judge: str) -> str | None:
        """Why ``judge`` may not decide verdicts (its latest calibration), or None when it may."""
        with self.session() as session:
            row = session.scalars(
                select(JudgeCalibration)
                .where(JudgeCalibration.judge == judge)
                .order_by(JudgeCalibration.created_at.desc(), JudgeCalibration.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return (
                    f"judge {judge} was never calibrated; run "
                    f"`evalplat judge calibrate {judge} --testset T` first"
                )
            if not row.gating:
                return f"judge {judge} is refused for gating: {row.refusal}"
            return None
