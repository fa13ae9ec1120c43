"""Alert messages used across the alert tests."""

from __future__ import annotations

from evalplat.alerts import AlertMessage, QueryMove


def regression(
    event: str = "opened", report: str | None = "https://ci.example/r/7.html"
) -> AlertMessage:
    return AlertMessage(
        event=event,
        config="docs-bm25",
        test_set="cranfield",
        metric="nDCG@10",
        baseline=0.4120,
        candidate=0.3870,
        delta=0.3870 - 0.4120,
        relative_delta=(0.3870 - 0.4120) / 0.4120,
        p_value=0.0031,
        test="randomization",
        baseline_run=3,
        candidate_run=9,
        worst_queries=(
            QueryMove("q12", "boundary layer <transition> & drag", 0.8, 0.2),
            QueryMove("q7", "heat transfer", 0.65, 0.31),
        ),
        report=report,
        alert_id=1,
    )
