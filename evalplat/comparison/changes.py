"""What changed between a comparison's baseline and candidate: config parameters, test set.

Pure functions over plain data; the store feeds them the two config versions and, when the two
runs searched different test set versions, both versions' queries and judgments.

Config diff: parameters are flattened to dotted keys (``headers.Authorization``), so a nested
change reads as one line; a key is ``added`` (only the candidate has it), ``removed`` (only the
baseline) or ``changed``. Values are shown as JSON (``"or"``, ``2``, ``true``, ``["a", "b"]``),
which keeps strings and numbers apart; ``${ENV}`` placeholders appear as stored (never
expanded). The searcher kind and the label are compared too, as ``searcher`` and ``label``.

Test set diff (only when the two runs searched different versions of the test set): queries
added and removed (by query id) and queries whose text changed; judgments added, removed (by
``(query id, doc id, source)``) and whose grade changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_ABSENT = object()


@dataclass(frozen=True)
class ParamChange:
    """One parameter that differs; ``before``/``after`` are JSON text, None when absent."""

    key: str
    before: str | None
    after: str | None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed"

    def __str__(self) -> str:
        if self.before is None:
            return f"{self.key}: added {self.after}"
        if self.after is None:
            return f"{self.key}: removed (was {self.before})"
        return f"{self.key}: {self.before} → {self.after}"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class TestSetChange:
    """How the candidate run's test set version differs from the baseline run's."""

    __test__ = False

    name: str
    baseline_version: int
    candidate_version: int
    queries_added: int = 0
    queries_removed: int = 0
    queries_text_changed: int = 0
    judgments_added: int = 0
    judgments_removed: int = 0
    grades_changed: int = 0

    def lines(self) -> list[str]:
        """One summary line: ``test set NAME vA → vB: queries 2 added; judgments 5 added``."""
        parts = []
        queries = _counts(
            ("added", self.queries_added),
            ("removed", self.queries_removed),
            ("with new text", self.queries_text_changed),
        )
        if queries:
            parts.append(f"queries {queries}")
        judgments = _counts(
            ("added", self.judgments_added),
            ("removed", self.judgments_removed),
            ("with a new grade", self.grades_changed),
        )
        if judgments:
            parts.append(f"judgments {judgments}")
        head = f"test set {self.name} v{self.baseline_version} → v{self.candidate_version}"
        return [head + (": " + "; ".join(parts) if parts else ": documents only")]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Changes:
    """Everything that differs between the baseline's and the candidate's setup."""

    config: tuple[ParamChange, ...] = ()
    test_set: TestSetChange | None = None
    same_config_version: bool = False

    @property
    def empty(self) -> bool:
        return not self.config and self.test_set is None

    def lines(self) -> list[str]:
        """Human-readable lines, config first (``operator: "or" → "and"``)."""
        lines = [str(change) for change in self.config]
        if self.test_set is not None:
            lines += self.test_set.lines()
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": [c.to_dict() for c in self.config],
            "test_set": None if self.test_set is None else self.test_set.to_dict(),
            "same_config_version": self.same_config_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Changes:
        test_set = data.get("test_set")
        return cls(
            config=tuple(
                ParamChange(c["key"], c.get("before"), c.get("after"))
                for c in data.get("config") or ()
            ),
            test_set=None if not test_set else TestSetChange(**test_set),
            same_config_version=bool(data.get("same_config_version", False)),
        )


def diff_configs(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    *,
    searchers: tuple[str, str] | None = None,
    labels: tuple[str | None, str | None] = (None, None),
) -> tuple[ParamChange, ...]:
    """Differences between two parameter mappings, by dotted key (searcher and label first)."""
    changes = []
    if searchers is not None and searchers[0] != searchers[1]:
        changes.append(ParamChange("searcher", _show(searchers[0]), _show(searchers[1])))
    if labels[0] != labels[1]:
        changes.append(
            ParamChange(
                "label",
                None if labels[0] is None else _show(labels[0]),
                None if labels[1] is None else _show(labels[1]),
            )
        )
    flat_a, flat_b = _flatten(baseline), _flatten(candidate)
    for key in sorted(set(flat_a) | set(flat_b)):
        before, after = flat_a.get(key, _ABSENT), flat_b.get(key, _ABSENT)
        if before is _ABSENT:
            changes.append(ParamChange(key, None, _show(after)))
        elif after is _ABSENT:
            changes.append(ParamChange(key, _show(before), None))
        elif _show(before) != _show(after):
            changes.append(ParamChange(key, _show(before), _show(after)))
    return tuple(changes)


def diff_test_sets(
    name: str,
    versions: tuple[int, int],
    baseline_queries: pd.DataFrame,
    candidate_queries: pd.DataFrame,
    baseline_judgments: pd.DataFrame,
    candidate_judgments: pd.DataFrame,
) -> TestSetChange:
    """Counts of added, removed and changed queries and judgments between two versions.

    Queries are frames with ``query_id, text``; judgments ``query_id, doc_id, grade`` and
    optionally ``source`` (a second rater's grade of the same pair is its own judgment).
    """
    texts_a = _texts(baseline_queries)
    texts_b = _texts(candidate_queries)
    grades_a = _grades(baseline_judgments)
    grades_b = _grades(candidate_judgments)
    shared_queries = texts_a.keys() & texts_b.keys()
    shared_judgments = grades_a.keys() & grades_b.keys()
    return TestSetChange(
        name=name,
        baseline_version=versions[0],
        candidate_version=versions[1],
        queries_added=len(texts_b.keys() - texts_a.keys()),
        queries_removed=len(texts_a.keys() - texts_b.keys()),
        queries_text_changed=sum(texts_a[q] != texts_b[q] for q in shared_queries),
        judgments_added=len(grades_b.keys() - grades_a.keys()),
        judgments_removed=len(grades_a.keys() - grades_b.keys()),
        grades_changed=sum(grades_a[j] != grades_b[j] for j in shared_judgments),
    )


def _flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in params.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _counts(*pairs: tuple[str, int]) -> str:
    return ", ".join(f"{count} {what}" for what, count in pairs if count)


def _texts(queries: pd.DataFrame) -> dict[str, str]:
    return {
        str(q): "" if t is None or t != t else str(t)
        for q, t in queries[["query_id", "text"]].itertuples(index=False)
    }


def _grades(judgments: pd.DataFrame) -> dict[tuple[str, str, str], int]:
    sources = judgments["source"] if "source" in judgments.columns else [None] * len(judgments)
    return {
        (str(q), str(d), "" if s is None or s != s else str(s)): int(g)
        for q, d, g, s in zip(
            judgments["query_id"], judgments["doc_id"], judgments["grade"], sources, strict=True
        )
    }
