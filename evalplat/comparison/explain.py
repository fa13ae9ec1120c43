"""What a comparison decided, in words: which metrics were gated, with which threshold, test
and correction, and why each metric got its verdict (above all: why a drop was *not* called a
regression).

Pure: it reads a :class:`~evalplat.comparison.results.ComparisonResult` and returns plain data.
The CLI prints it, ``--json`` carries it (``gating`` and each metric's ``reason`` and ``why``),
the comparison page shows it.

Reasons (``reason`` codes, stable for scripts):

| code | when |
|---|---|
| ``regression`` / ``improvement`` | beyond the thresholds and credible after the correction |
| ``needs_judgments`` | the verdict turns on unjudged documents |
| ``identical`` | the per-query values are the same on both sides (p = 1) |
| ``no_change`` | the aggregate did not move |
| ``not_gated`` | no gate holds the metric (an operational measure, or a gate set left it out) |
| ``unpaired`` | latency without paired timings of both versions (``not_gated`` says why) |
| ``not_gateable`` | an informational figure (``NumRet``, ``Judged@10``): never a verdict |
| ``insufficient`` | no test could be run (no query or session answered on both sides) |
| ``not_significant`` | the move is there but the corrected p is not below alpha |
| ``below_threshold`` | credible, but not beyond the gate's minimum effect |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalplat.comparison.paired_latency import not_gated_text
from evalplat.comparison.thresholds import beyond, gated_by_default
from evalplat.metrics.numbers import delta_text, p_text

if TYPE_CHECKING:
    from evalplat.comparison.results import ComparisonResult, MetricComparison

__all__ = ["gating", "gating_lines", "reason", "threshold_text", "why"]


def threshold_text(max_drop: float | None, max_relative_drop: float | None, metric: str) -> str:
    """``a drop beyond 0.0100 and 2.0 %``, or ``any credible drop`` without thresholds."""
    parts = []
    if max_drop:
        parts.append(delta_text(max_drop, metric).lstrip("+"))
    if max_relative_drop:
        parts.append(f"{max_relative_drop * 100:.1f} %")
    return "a drop beyond " + " and ".join(parts) if parts else "any credible drop"


def _family(result: ComparisonResult) -> int:
    """How many p-values Holm's correction of the gated family counted."""
    return sum(m.gated and m.p_value is not None for m in result.metrics) + sum(
        s.gated and s.p_value is not None for s in result.segments
    )


def reason(m: MetricComparison) -> str:
    """The code of why ``m`` got its verdict (see the module's table)."""
    from evalplat.metrics.names import parse

    if m.verdict in ("regression", "improvement", "needs_judgments") and m.gated:
        return m.verdict
    if m.not_gated is not None:
        return "unpaired"
    if m.p_value == 1.0 and m.delta == 0.0 and m.ci_low == 0.0 and m.ci_high == 0.0:
        return "identical"
    if not parse(m.metric).gateable:
        return "not_gateable"
    if not m.gated:
        return "not_gated"
    if m.delta == 0.0:
        return "no_change"
    if m.p_corrected is None:
        return "insufficient"
    if not m.p_corrected < m.alpha:
        return "not_significant"
    if m.timing_ratio is not None:
        return m.verdict if m.verdict != "unchanged" else "below_threshold"
    if not beyond(abs(m.delta), m.baseline, m.max_drop, m.max_relative_drop):
        return "below_threshold"
    return m.verdict  # decided by the unjudged-documents rule, which says so itself


def why(m: MetricComparison, family: int | None = None) -> str:
    """One sentence: why ``m`` got its verdict. ``family`` is the size of the Holm family."""
    from evalplat.metrics.names import parse

    code = reason(m)
    size = delta_text(abs(m.delta), m.metric).lstrip("+")
    moved = f"{'fell' if m.delta < 0 else 'rose'} by {size}"
    if float(size.split()[0]) == 0:
        moved = "no change at the shown precision"
    over = "" if family is None else f" over {family} gated {'test' if family == 1 else 'tests'}"
    p = f"p = {p_text(m.p_value)} ({p_text(m.p_corrected)} after Holm{over})"
    if m.timing_ratio is not None:
        p += f", typically x{m.timing_ratio:.2f} over {m.timing_pairs} paired timings"
    if code in ("regression", "improvement"):
        below = "<" if m.p_corrected is not None and m.p_corrected < m.alpha else "vs"
        return f"{moved}: {p} {below} alpha {m.alpha:g}, beyond the threshold ({_limits(m)})"
    if code == "needs_judgments":
        return f"{moved}: the verdict turns on unjudged documents ({m.unjudged_mode} rule)"
    if code == "identical":
        return "identical per-query values: p = 1"
    if code == "unpaired":
        return f"{moved}: not gated ({not_gated_text(m.not_gated or '')})"
    if code == "not_gateable":
        return "an informational figure: never gated"
    if code == "not_gated":
        if gated_by_default(parse(m.metric)):
            return f"{moved}: not gated (the gates given leave it out)"
        return f"{moved}: not gated (an operational measure: shown, gated only when named)"
    if code == "no_change":
        return "no change"
    if code == "insufficient":
        return f"{moved}: no test (too few queries answered on both sides)"
    if code == "not_significant":
        return f"{moved}: {p}, not below alpha {m.alpha:g}"
    if code == "below_threshold":
        return f"{moved}: {p}, but within the minimum effect ({_limits(m)})"
    return f"{moved}: {m.verdict}"


def _limits(m: MetricComparison) -> str:
    if m.timing_ratio is not None:  # evalplat.comparison.paired_latency
        slower = f"a typical slowdown of {(m.max_relative_drop or 0.0) * 100:.1f} %"
        ms = f" and {delta_text(m.max_drop, m.metric).lstrip('+')}" if m.max_drop else ""
        return slower + ms
    return threshold_text(m.max_drop, m.max_relative_drop, m.metric)


def gating(result: ComparisonResult) -> dict[str, Any]:
    """What was gated and how (the ``gating`` object of ``--json``)."""
    gated = [
        {
            "metric": m.metric,
            "test": m.test,
            "alpha": m.alpha,
            "max_drop": m.max_drop,
            "max_relative_drop": m.max_relative_drop,
            "unjudged": m.unjudged_mode,
        }
        for m in result.metrics
        if m.gated
    ]
    gated += [
        {"metric": s.metric, "segment": s.segment, "test": s.test}
        for s in result.segments
        if s.gated
    ]
    return {
        "gated": gated,
        "not_gated": [m.metric for m in result.metrics if not m.gated],
        "correction": "holm",
        "family": _family(result),
    }


def gating_lines(result: ComparisonResult) -> list[str]:
    """``gated     nDCG@10, P@5: randomization test, alpha 0.05, any credible drop`` (one line
    per way of gating), the correction, what is shown but not gated, and why each drop of a
    metric that was not called a regression was not."""
    groups: dict[str, list[str]] = {}
    for m in result.metrics:
        if m.gated:
            how = f"{m.test} test, alpha {m.alpha:g}, {_limits(m)}"
            groups.setdefault(how, []).append(m.metric)
    segments = [f"{s.metric} [{s.segment}]" for s in result.segments if s.gated]
    lines = [f"{', '.join(names)}: {how}" for how, names in groups.items()]
    if segments:
        lines.append(f"segments {', '.join(segments)}: as their metric")
    if not lines:
        lines = ["nothing (the verdict is unchanged whatever moved)"]
    family = _family(result)
    if family > 1:
        lines.append(f"Holm correction over {family} gated tests")
    out = ["gated     " + "\n          ".join(lines)]
    shown = [m.metric for m in result.metrics
             if not m.gated and m.not_gated is None and parse_gateable(m.metric)]  # fmt: skip
    if shown:
        out.append(f"not gated {', '.join(shown)} (shown only)")
    for why_not in dict.fromkeys(m.not_gated for m in result.metrics if m.not_gated):
        names = ", ".join(m.metric for m in result.metrics if m.not_gated == why_not)
        out.append(f"not gated {names} ({not_gated_text(why_not or '')})")
    for m in result.metrics:
        if m.verdict == "regression" and m.gated:
            continue
        if m.verdict == "needs_judgments" and m.gated:
            continue  # its own lines say why and what to run
        dropped = m.delta != 0 and (m.delta < 0) == m.higher_is_better
        if dropped and reason(m) not in ("not_gateable", "identical"):
            out.append(f"why       {m.metric} {why(m, family)}: {m.verdict}")
    return out


def parse_gateable(name: str) -> bool:
    from evalplat.metrics.names import parse

    return parse(name).gateable
