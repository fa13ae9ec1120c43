"""How ``evalplat compare`` shows a comparison: the terminal table and JUnit XML."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalplat.comparison.changes import Changes
    from evalplat.comparison.targets import TargetVerdict
    from evalplat.comparison.verdicts import ComparisonResult

__all__ = ["model_grade_lines", "needs_judgments_lines", "print_comparison", "write_junit"]


def print_comparison(result: ComparisonResult) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console
    from evalplat.comparison.explain import gating_lines
    from evalplat.metrics.numbers import delta_text, p_text, value_text

    # Piped output (CI logs, files) has no terminal width: keep the table whole, unwrapped.
    console = table_console()
    console.print(
        f"baseline  {result.baseline_label}\ncandidate {result.candidate_label}"
        + (
            f"\nA/B arms  {result.size_text()}"
            if result.online
            else f"\nscored on {result.scored_on}, {result.size_text()}"
        )
        + (", weighted by query weight" if result.weighted else ""),
        highlight=False,
    )
    if result.changes is not None:
        console.print(_changes_text(result.changes), highlight=False)
    if result.facts:
        lines = [fact.line() for fact in result.facts]
        console.print("facts     " + "\n          ".join(lines), highlight=False)
    # two arms' sessions pair nothing (no wins/ties/losses) and hold no judgments
    paired = ("w/t/l", "judged") if not result.online else ()
    table = Table("metric", "baseline", "candidate", "delta", "95% CI", "p (Holm)", *paired,
                  "verdict")  # fmt: skip
    for m in result.metrics:
        ci = "" if m.ci_low is None else (
            f"[{delta_text(m.ci_low, m.metric)}, {delta_text(m.ci_high, m.metric)}]"
        )  # fmt: skip
        p = "" if m.p_value is None else f"{p_text(m.p_value)} ({p_text(m.p_corrected)})"
        judged = (
            "" if m.baseline_judged is None else f"{m.baseline_judged:.2f}→{m.candidate_judged:.2f}"
        )
        verdict = m.verdict + ("" if m.gated else " (not gated)")
        if m.not_gated is not None:  # latency without paired timings: no verdict at all
            verdict = f"not gated ({m.not_gated})"
        table.add_row(
            m.metric,
            value_text(m.baseline, m.metric),
            value_text(m.candidate, m.metric),
            delta_text(m.delta, m.metric),
            ci,
            p,
            *((f"{m.wins}/{m.ties}/{m.losses}", judged) if paired else ()),
            verdict,
        )
    console.print(table)
    if result.segments:
        console.print(_segment_table(result))
    if result.overlap is not None:
        o = result.overlap
        tau = "n/a" if o.kendall_tau is None else f"{o.kendall_tau:.3f}"
        console.print(
            f"overlap: Jaccard@{o.k} {o.jaccard:.3f}, RBO(p={o.p}) {o.rbo:.3f}, Kendall tau {tau}",
            highlight=False,
        )
    for s in result.segment_regressions:
        console.print(f"{s.metric} regressed in segment {s.segment}")
    for m in result.regressions:
        movers = result.movers.get(m.metric)
        if movers is None:  # an online measure: sessions of two arms pair no queries
            console.print(f"{m.metric} regressed")
            continue
        listed = ", ".join(f"{q.query_id} ({q.delta:+.3f})" for q in movers.worse[:5])
        console.print(f"{m.metric} regressed; worst queries: {listed}")
    for line in needs_judgments_lines(result):
        console.print(line, highlight=False)
    for line in model_grade_lines(result):
        console.print(line, highlight=False)
    for line in gating_lines(result):
        console.print(line, highlight=False)
    console.print(f"verdict: {result.verdict} (comparison {result.id})", highlight=False)


def model_grade_lines(result: ComparisonResult) -> list[str]:
    """Both views of each metric a judge's grades move, then what the verdict rests on."""
    lines = []
    for m in result.metrics:
        if m.judge is None or m.model_delta is None or m.human_delta is None:
            continue
        lines.append(
            f"{m.metric}: people's grades only {m.human_baseline:.4f} -> {m.human_candidate:.4f} "
            f"(delta {m.human_delta:+.4f}, {m.human_verdict}); with judge {m.judge}'s grades "
            f"{m.model_baseline:.4f} -> {m.model_candidate:.4f} (delta {m.model_delta:+.4f}, "
            f"{m.model_verdict})"
        )
    lines += [f"{note} decided the verdict" for note in result.model_notes]
    return lines


def _segment_table(result: ComparisonResult) -> object:
    from rich.table import Table

    from evalplat.metrics.numbers import delta_text, p_text, value_text

    table = Table("segment", "queries", "metric", "baseline", "candidate", "delta", "95% CI",
                  "p (Holm)", "verdict", title="per segment (query tag)")  # fmt: skip
    for s in result.segments:
        ci = "" if s.ci_low is None else (
            f"[{delta_text(s.ci_low, s.metric)}, {delta_text(s.ci_high, s.metric)}]"
        )  # fmt: skip
        p = "" if s.p_value is None else f"{p_text(s.p_value)} ({p_text(s.p_corrected)})"
        why = f" ({s.note})" if s.note else ("" if s.gated else " (not gated)")
        table.add_row(s.segment, str(s.queries), s.metric, value_text(s.baseline, s.metric),
                      value_text(s.candidate, s.metric), delta_text(s.delta, s.metric), ci, p,
                      s.verdict + why)  # fmt: skip
    return table


def _changes_text(changes: Changes) -> str:
    """``changed   operator: "or" → "and"`` and one indented line per further change."""
    lines = changes.lines()
    if not lines:
        what = "same config version" if changes.same_config_version else "same parameters"
        return f"changed   nothing ({what}, same test set version)"
    return "changed   " + "\n          ".join(lines)


def needs_judgments_lines(result: ComparisonResult) -> list[str]:
    """Why each gated metric needs judgments, and the command that exports the documents."""
    from evalplat.metrics.numbers import counted

    lines = []
    for m in result.needing_judgments:
        k = m.bound_depth or 10
        run = result.candidate_run_id if result.candidate_run_id is not None else "RUN"
        if m.unjudged is not None:
            bound = "" if m.bound_candidate is None else (
                f"; if they were relevant: {m.bound_baseline:.4f} -> {m.bound_candidate:.4f} "
                f"({m.bound_verdict})"
            )  # fmt: skip
            why = (
                f"{counted(m.unjudged, 'unjudged document')} in the candidate's top {k} "
                f"of {counted(m.unjudged_queries or 0, 'query')}{bound}"
            )
        else:
            why = "the candidate's judged coverage fell"
        lines.append(
            f"{m.metric} needs judgments: {why}. "
            f"Export them: evalplat unjudged {run} --k {k} > pool.csv"
        )
    return lines


def write_junit(
    result: ComparisonResult,
    path: Path,
    *,
    strict: bool = False,
    targets: Sequence[TargetVerdict] = (),
) -> None:
    """One testcase per gated metric, per gated (metric, segment) and per target; a
    ``<failure type="regression">`` for each regression, ``type="target"`` for a missed target.

    A metric that needs judgments is undecided, not passed: ``<skipped>`` (CI shows it apart from
    passes and failures, and the build stays green, as the exit code does), or with ``strict`` a
    ``<failure type="needs_judgments">``, matching the exit code 1 of ``--strict``."""
    import xml.etree.ElementTree as ET

    from evalplat.alerts.junit import clean_tree
    from evalplat.comparison.explain import gating
    from evalplat.comparison.explain import why as why_text
    from evalplat.metrics.numbers import counted, delta_text, p_text, value_text

    family = gating(result)["family"]

    gated = [m for m in result.metrics if m.gated]
    segments = [s for s in result.segments if s.gated]
    undecided = len(result.needing_judgments)
    undecided += sum(s.verdict == "needs_judgments" for s in segments)
    suite = ET.Element(
        "testsuite",
        name="evalplat compare",
        tests=str(len(gated) + len(segments)),
        failures=str(
            len(result.regressions) + len(result.segment_regressions) + (undecided if strict else 0)
        ),
        errors="0",
        skipped="0" if strict else str(undecided),
    )
    why = dict(zip(result.needing_judgments, needs_judgments_lines(result), strict=True))
    for m in gated:
        case = ET.SubElement(
            suite, "testcase", classname=f"evalplat.{result.test_set}", name=m.metric
        )
        name = m.metric
        summary = (
            f"{name}: {value_text(m.baseline, name)} -> {value_text(m.candidate, name)} (delta "
            f"{delta_text(m.delta, name)}, p={p_text(m.p_value)}, corrected "
            f"{p_text(m.p_corrected)}, {m.test}): {m.verdict} ({why_text(m, family)})"
        )
        note = m.model_note()
        if note is not None:
            summary += f"; decided with {note}"
        if m.verdict == "regression":
            failure = ET.SubElement(case, "failure", message=summary, type="regression")
            worst = result.movers[m.metric].worse[:10]
            failure.text = "\n".join(
                f"{q.query_id}: {value_text(q.baseline, name)} -> {value_text(q.candidate, name)}"
                for q in worst
            )
        elif m.verdict == "needs_judgments" and strict:
            failure = ET.SubElement(case, "failure", message=summary, type="needs_judgments")
            failure.text = why[m]
        elif m.verdict == "needs_judgments":
            ET.SubElement(case, "skipped", message=why[m])
            ET.SubElement(case, "system-out").text = summary
        else:
            ET.SubElement(case, "system-out").text = summary
    for s in segments:
        case = ET.SubElement(suite, "testcase", classname=f"evalplat.{result.test_set}",
                             name=f"{s.metric} [segment {s.segment}]")  # fmt: skip
        summary = (
            f"{s.metric} on segment {s.segment} ({counted(s.queries, 'query')}): "
            f"{value_text(s.baseline, s.metric)} -> {value_text(s.candidate, s.metric)} (delta "
            f"{delta_text(s.delta, s.metric)}, p={p_text(s.p_value)}, corrected "
            f"{p_text(s.p_corrected)}, {s.test}): {s.verdict}"
        )
        if s.verdict == "regression" or (s.verdict == "needs_judgments" and strict):
            ET.SubElement(case, "failure", message=summary, type=s.verdict)
        elif s.verdict == "needs_judgments":
            ET.SubElement(case, "skipped", message=f"{summary}: its unjudged share rose")
        else:
            ET.SubElement(case, "system-out").text = summary
    from evalplat.cli.target_views import add_junit_cases

    add_junit_cases(suite, result.test_set or "", targets)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(clean_tree(root)).write(path, encoding="utf-8", xml_declaration=True)
