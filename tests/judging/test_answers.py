"""Strict reading of a model's answer: a grade or a recorded reason, never a guess."""

from __future__ import annotations

import pytest

from evalplat.judging.answers import Parsed, parse_answer

SCALE = (0, 3)


@pytest.mark.parametrize(
    ("text", "grade", "rationale"),
    [
        ('{"grade": 2, "reason": "partly answers"}', 2, "partly answers"),
        ('```json\n{"grade": 3, "reason": "exact"}\n```', 3, "exact"),
        ("1", 1, None),
        (" 0. ", 0, None),
        ("The passage is on topic.\nGrade: 1", 1, "The passage is on topic."),
        ("**Grade:** 3", 3, None),
        ("grade = 2\nbecause it answers part of it", 2, "because it answers part of it"),
    ],
)
def test_an_answer_in_a_known_shape_gives_its_grade(
    text: str, grade: int, rationale: str | None
) -> None:
    assert parse_answer(text, SCALE) == Parsed(grade, rationale=rationale)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("The document is", "no grade in the answer: 'The document is'"),
        ("I would say 2 out of 3", "no grade in the answer: 'I would say 2 out of 3'"),
        ('{"grade": 2.5}', "the grade is not a whole number: 2.5"),
        ('{"grade": "two"}', "the grade is not a whole number: 'two'"),
        ('{"grade": true}', "the grade is not a whole number: True"),
        ('{"reason": "fine"}', 'the JSON answer has no grade: \'{"reason": "fine"}\''),
        ('{"grade": 2', "the answer is not valid JSON: '{\"grade\": 2'"),
        ("Grade: 1\nGrade: 3", "the answer gives several grades: [1, 3]"),
        ("4", "grade 4 is outside the scale 0-3"),
        ('{"grade": -1}', "grade -1 is outside the scale 0-3"),
        ("", "no grade in the answer: ''"),
    ],
)
def test_an_answer_without_a_clear_grade_is_a_failure(text: str, error: str) -> None:
    assert parse_answer(text, SCALE) == Parsed(None, error=error)


def test_the_same_grade_twice_is_one_grade() -> None:
    assert parse_answer("Grade: 2\nsure\nGrade: 2", SCALE).grade == 2
