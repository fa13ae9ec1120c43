"""``[[targets]]`` of the project file: absolute objectives per metric (see
:mod:`evalplat.comparison.targets`).

```toml
[[targets]]
metric = "nDCG@10"
min = 0.85                 # or max = 200 for a lower-is-better metric
config = "docs-bm25"       # optional: only this config
testset = "cranfield"      # optional: only this test set
segment = "tail"           # optional: judged on the queries tagged "tail" only
consecutive = 2            # optional: missed nights before an alert, in a row (default 1) ...
within = 3                 # optional: ... or among the last `within` nights
clear = 2                  # optional: met nights in a row that resolve it (default 1)
max_slide = 0.02           # optional: flag a slide of more than this ...
window = "30d"             # ... over this window (default 30d)
```

A ``segment`` target is in force only on the test sets some query of which carries the tag;
a tag none of the test sets it applies to carries is refused once the test sets are read,
before a night writes anything (:mod:`evalplat.nightly.scopes`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from evalplat.comparison.targets import Target, check_direction, window_days
from evalplat.errors import InputError
from evalplat.nightly.project_values import confirmation, real

KEYS = {
    "metric", "min", "max", "config", "testset", "segment", "consecutive", "within", "clear",
    "max_slide", "window",
}  # fmt: skip
Fail = Callable[[str, str | None, int, str | None], InputError]


def read_target(
    table: dict[str, Any], index: int, fail: Fail, configs: set[str], test_sets: set[str]
) -> Target:
    """One ``[[targets]]`` entry, validated; errors name the table entry and the key."""
    from evalplat.metrics import parse

    for key in table:
        if key not in KEYS:
            raise fail(f"unknown key; expected one of: {', '.join(sorted(KEYS))}", "targets",
                       index, key)  # fmt: skip
    name = table.get("metric")
    if not isinstance(name, str) or not name.strip():
        raise fail('needs metric = "..." (a non-empty string)', "targets", index, "metric")
    try:
        metric = parse(name)
    except InputError as error:
        raise fail(str(error), "targets", index, "metric") from None
    bounds = [key for key in ("min", "max") if key in table]
    if len(bounds) != 1:
        problem = "has both min and max" if bounds else "needs min = ... or max = ..."
        raise fail(f"target {metric}: {problem}", "targets", index, bounds[-1] if bounds else None)
    bound = bounds[0]
    value = table[bound]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise fail(f"target {metric}: must be a number", "targets", index, bound)
    try:
        check_direction(metric, bound)
    except InputError as error:
        raise fail(str(error), "targets", index, bound) from None
    scope: dict[str, str | None] = {}
    for key, known, what in (("config", configs, "[[configs]]"), ("testset", test_sets,
                                                                   "[[testsets]]")):  # fmt: skip
        given = table.get(key)
        if given is not None and (not isinstance(given, str) or given not in known):
            raise fail(f"target {metric}: {given!r} is not defined in {what}", "targets", index,
                       key)  # fmt: skip
        scope[key] = given
    segment = table.get("segment")
    if segment is not None and (not isinstance(segment, str) or not segment.strip()):
        raise fail(f"target {metric}: must be a non-empty string (a query tag)", "targets",
                   index, "segment")  # fmt: skip
    if segment is not None and len(f"{metric} [segment {segment}]") > 80:
        raise fail(
            f"target {metric}: the segment name must be at most {69 - len(str(metric))} characters",
            "targets",
            index,
            "segment",
        )
    prefix = f"target {metric}: "
    consecutive, within, clear = confirmation(table, fail, "targets", index, prefix)
    slide = table.get("max_slide")
    if slide is not None:
        slide = real(slide, fail, "targets", index, "max_slide", prefix=prefix)
    window = table.get("window", "30d")
    try:
        window_days(window)
    except InputError as error:
        raise fail(f"target {metric}: {error}", "targets", index, "window") from None
    return Target(
        metric=str(metric),
        bound=bound,
        value=float(value),
        config=scope["config"],
        test_set=scope["testset"],
        consecutive=consecutive,
        within=within,
        clear=clear,
        max_slide=None if slide is None else float(slide),
        window=window,
        segment=segment,
        entry=index,
    )
