"""Reading a grade out of a model's answer, strictly.

An answer counts when it is exactly one of:

- a JSON object (optionally inside a ```json fence) with an integer ``grade`` and an optional
  string ``reason``, as the structured-output schema asks;
- a bare integer (``2``, ``2.``);
- text holding exactly one line ``grade: N`` (or ``grade = N``, any case); the other lines are
  kept as the rationale.

Anything else is a failure with the reason recorded: no grade ("The document is"), a grade
that is not an integer (``2.5``, ``"two"``), two different grade lines, or a grade outside the
judge's scale. Nothing is guessed: a number somewhere in a sentence is not a grade.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_BARE = re.compile(r"^\s*(-?\d+)\s*\.?\s*$")
_LINE = re.compile(r"^\s*\**\s*grade\s*\**\s*[:=]\s*\**\s*(-?\d+)\s*\**\s*\.?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Parsed:
    """A grade, or the reason there is none."""

    grade: int | None
    rationale: str | None = None
    error: str | None = None


def schema(scale: tuple[int, int]) -> dict[str, object]:
    """The JSON schema sent as ``response_format`` (structured output)."""
    return {
        "type": "object",
        "properties": {
            "grade": {"type": "integer", "minimum": scale[0], "maximum": scale[1]},
            "reason": {"type": "string"},
        },
        "required": ["grade", "reason"],
        "additionalProperties": False,
    }


def parse_answer(text: str, scale: tuple[int, int]) -> Parsed:
    """The grade in ``text`` on ``scale`` (module doc), or a failure saying why."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if body.startswith("{"):
        return _checked(*_from_json(body), scale)
    bare = _BARE.match(body)
    if bare:
        return _checked(int(bare.group(1)), None, None, scale)
    grades = {int(m.group(1)) for line in body.splitlines() if (m := _LINE.match(line))}
    if len(grades) > 1:
        return Parsed(None, error=f"the answer gives several grades: {sorted(grades)}")
    if grades:
        rest = "\n".join(line for line in body.splitlines() if not _LINE.match(line)).strip()
        return _checked(grades.pop(), rest or None, None, scale)
    return Parsed(None, error=f"no grade in the answer: {_clip(text)!r}")


def _from_json(body: str) -> tuple[int | None, str | None, str | None]:
    try:
        data = json.loads(body)
    except ValueError:
        return None, None, f"the answer is not valid JSON: {_clip(body)!r}"
    except RecursionError:
        return None, None, f"the answer is JSON nested too deeply: {_clip(body)!r}"
    if not isinstance(data, dict) or "grade" not in data:
        return None, None, f"the JSON answer has no grade: {_clip(body)!r}"
    grade, reason = data["grade"], data.get("reason")
    if not isinstance(grade, int) or isinstance(grade, bool):
        return None, None, f"the grade is not a whole number: {grade!r}"
    return grade, reason if isinstance(reason, str) else None, None


def _checked(
    grade: int | None, reason: str | None, error: str | None, scale: tuple[int, int]
) -> Parsed:
    if error is not None or grade is None:
        return Parsed(None, error=error or "no grade in the answer")
    if not scale[0] <= grade <= scale[1]:
        return Parsed(None, error=f"grade {grade} is outside the scale {scale[0]}-{scale[1]}")
    return Parsed(grade, rationale=reason)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
