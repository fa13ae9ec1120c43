"""How target verdicts show on the command line: a table, JSON rows and JUnit testcases.

Shared by ``compare``, ``runs show`` and ``nightly``; the verdicts come from the store
(:meth:`evalplat.Store.check_targets`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from evalplat.comparison.targets import Target, TargetVerdict

TargetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        help='A target to check, e.g. "nDCG@10>=0.85", "Latency(p=95)<=200", or '
        '"nDCG@10[tail]>=0.7" for the queries tagged tail (repeatable).',
        show_default=False,
    ),
]
FailOnTargetOption = Annotated[
    bool, typer.Option("--fail-on-target", help="Exit 1 when a target is missed.")
]


def parse_targets(expressions: Sequence[str] | None) -> list[Target]:
    from evalplat.comparison.targets import parse_target

    return [parse_target(expression) for expression in expressions or ()]


def target_lines(verdicts: Sequence[TargetVerdict]) -> list[str]:
    """``target nDCG@10>=0.85  0.6200  95% CI [0.5900, 0.6500]  missed``, one per target."""
    from evalplat.metrics.numbers import value_text

    return [
        f"target {v.target.label:<22} {value_text(v.value, v.target.metric)}  95% CI "
        f"[{value_text(v.ci_low, v.target.metric)}, {value_text(v.ci_high, v.target.metric)}]  "
        f"{v.verdict}"
        for v in verdicts
    ]


def print_targets(verdicts: Sequence[TargetVerdict]) -> None:
    for line in target_lines(verdicts):
        typer.echo(line)


def add_junit_cases(suite: ET.Element, test_set: str, verdicts: Sequence[TargetVerdict]) -> None:
    """One testcase per target; a ``<failure type="target">`` for a missed one (at risk passes,
    with the figures in ``system-out``)."""
    import xml.etree.ElementTree as ET

    missed = 0
    for v, line in zip(verdicts, target_lines(verdicts), strict=True):
        case = ET.SubElement(
            suite, "testcase", classname=f"evalplat.{test_set}.targets", name=v.target.label
        )
        if v.verdict == "missed":
            missed += 1
            ET.SubElement(case, "failure", message=line, type="target")
        else:
            ET.SubElement(case, "system-out").text = line
    suite.set("tests", str(int(suite.get("tests", "0")) + len(verdicts)))
    suite.set("failures", str(int(suite.get("failures", "0")) + missed))
