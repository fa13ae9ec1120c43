"""The judge's ledger: every grade a language model gave, keyed so no pair is paid for twice.

A row is keyed by (judge, prompt hash, query text hash, document text hash): the same question
asked of the same judge with the same prompt is answered from here, whichever test set or run
it came from. A row is written as soon as its answer arrives, so a killed ``judge`` command
resumes from the rows already written. ``grade`` is NULL when the answer held no grade on the
judge's scale: a recorded failure, never a guessed grade.

``judge_calibration`` keeps each ``judge calibrate`` result: the floor, whether the judge may
decide verdicts and, when not, why. A gate that lets model grades in reads the latest one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from evalplat.db.schema import Base, Hash
from evalplat.db.schema import created_column as _created
from evalplat.db.schema import id_column as _id


class JudgeGrade(Base):
    __tablename__ = "judge_grade"
    __table_args__ = (UniqueConstraint("judge", "prompt_hash", "query_hash", "doc_hash"),)

    id: Mapped[int] = _id()
    judge: Mapped[str] = mapped_column(String(40))
    prompt_hash: Mapped[str] = mapped_column(Hash)
    query_hash: Mapped[str] = mapped_column(Hash)
    doc_hash: Mapped[str] = mapped_column(Hash)
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    rationale: Mapped[str | None] = mapped_column(Text, nullable=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    model: Mapped[str] = mapped_column(String(200))
    temperature: Mapped[float] = mapped_column(Float)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = _created()


class JudgeCalibration(Base):
    __tablename__ = "judge_calibration"

    id: Mapped[int] = _id()
    judge: Mapped[str] = mapped_column(String(40), index=True)
    model: Mapped[str] = mapped_column(String(200))
    prompt_hash: Mapped[str] = mapped_column(Hash)
    test_set: Mapped[str] = mapped_column(String(200))
    floor: Mapped[float] = mapped_column(Float)
    gating: Mapped[bool] = mapped_column(Boolean)
    refusal: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the whole calibration (sources, kappas, confusion matrices), as ``Calibration.to_dict``
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = _created()
