"""``[[gates]]`` of the project file: when a metric's drop is a regression (see
:mod:`evalplat.comparison.verdicts`).

```toml
[[gates]]
metric = "nDCG@10"
max_drop = 0.01              # absolute; max_relative_drop = 0.02 also allowed
test = "randomization"       # or t-test, wilcoxon
alpha = 0.05
consecutive = 1              # regressed nights before an alert (in a row, unless ...)
within = 3                   # optional: ... among the last `within` nights (default: consecutive)
clear = 1                    # optional: clear nights in a row that resolve it (default 1)
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalplat.comparison.results import MODEL_MODES
from evalplat.comparison.verdicts import TESTS, UNJUDGED_MODES, Gate
from evalplat.errors import InputError
from evalplat.nightly.project import _GATE_KEYS
from evalplat.nightly.project_values import confirmation, real

Fail = Callable[[str, str | None, int, str | None], InputError]


def read_gate(
    table: dict[str, Any],
    index: int,
    fail: Fail,
    judges: list[str] | None = None,
    default_judge: str | None = None,
) -> Gate:
    """One ``[[gates]]`` entry, validated; errors name the table entry and the key."""
    for key in table:
        if key not in _GATE_KEYS:
            raise fail(f"unknown key; expected one of: {', '.join(sorted(_GATE_KEYS))}", "gates",
                       index, key)  # fmt: skip
    metric = table.get("metric")
    if not isinstance(metric, str) or not metric.strip():
        raise fail('needs metric = "..." (a non-empty string)', "gates", index, "metric")
    from evalplat.metrics import parse

    try:
        metric = str(parse(metric))
    except InputError as error:
        raise fail(str(error), "gates", index, "metric") from None
    numbers: dict[str, float | None] = {}
    for key in ("max_drop", "max_relative_drop"):
        value = table.get(key)
        numbers[key] = None if value is None else real(value, fail, "gates", index, key,
                                                       prefix=f"gate {metric}: ")  # fmt: skip
    test = table.get("test", "randomization")
    if test not in TESTS:
        raise fail(f"gate {metric}: must be one of {', '.join(TESTS)}", "gates", index, "test")
    alpha = table.get("alpha", 0.05)
    if not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise fail(f"gate {metric}: must be between 0 and 1", "gates", index, "alpha")
    consecutive, within, clear = confirmation(table, fail, "gates", index, f"gate {metric}: ")
    unjudged = table.get("unjudged", "bound")
    if unjudged not in UNJUDGED_MODES:
        raise fail(
            f"gate {metric}: must be one of {', '.join(UNJUDGED_MODES)}",
            "gates",
            index,
            "unjudged",
        )
    judge = table.get("judge")
    if judge is not None and (not isinstance(judge, str) or judge not in (judges or [])):
        known = ", ".join(judges or []) or "none"
        raise fail(f"gate {metric}: no judge named {judge!r} in [[judges]] "
                        f"(known: {known})", "gates", index, "judge")  # fmt: skip
    if judge is not None and unjudged not in MODEL_MODES:
        raise fail(f'gate {metric}: a judge counts only with unjudged = "judge" or '
                        '"grade"', "gates", index, "judge")  # fmt: skip
    if unjudged in MODEL_MODES:
        judge = judge or default_judge
        if judge is None:
            raise fail(f'gate {metric}: unjudged = "{unjudged}" needs judge = "NAME" '
                            "of a [[judges]] table", "gates", index, "judge")  # fmt: skip
    segment = table.get("segment")
    if segment is not None and (not isinstance(segment, str) or not segment.strip()):
        raise fail('needs segment = "..." (a non-empty string)', "gates", index, "segment")
    if segment is not None and len(f"{metric} [segment {segment}]") > 80:
        raise fail(
            f"gate {metric}: the segment name must be at most {69 - len(metric)} characters",
            "gates",
            index,
            "segment",
        )
    return Gate(
        metric=metric,
        segment=segment,
        max_drop=numbers["max_drop"],
        max_relative_drop=numbers["max_relative_drop"],
        test=test,
        alpha=float(alpha),
        consecutive=consecutive,
        within=within,
        clear=clear,
        unjudged=unjudged,
        judge=judge,
    )
