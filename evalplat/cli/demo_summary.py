"""The plain-text summary of one demo night: what changed, the verdicts, what is still open."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from evalplat.demo.build import DemoOutcome

PRODUCTION = "bm25-porter"


def print_summary(outcome: DemoOutcome) -> None:
    from evalplat.cli.common import table_console
    from evalplat.store.testsets import ONLINE_TEST_SET as ONLINE

    console = table_console()
    nightly = outcome.nightly
    console.print(f"night {outcome.night}: {outcome.story}\n")
    offline = [c for c in nightly.comparisons if c["testset"] != ONLINE]
    own = [c for c in offline if c["config"] == PRODUCTION]
    candidates = [c for c in offline if c["config"] != PRODUCTION]
    if own:
        _table(console, own, f"Production ({PRODUCTION}) tonight vs its baseline run",
               ("baseline", "tonight"), gated_only=True)  # fmt: skip
    if candidates:
        _table(console, candidates, f"Candidates vs production ({PRODUCTION})",
               ("prod", "cand."), gated_only=True)  # fmt: skip
    online = [c for c in nightly.comparisons if c["testset"] == ONLINE]
    if online:
        title = f"A/B test, online measures on the log's last day: arms vs {PRODUCTION}@1"
        _table(console, online, title, ("control", "arm"), gated_only=False)
    log = outcome.folder / "alerts.jsonl"
    for alert in nightly.alerts:
        console.print(
            f"alert {alert['event']} ({alert.get('kind', 'regression').replace('_', ' ')}): "
            f"{alert['config']} {alert['metric']} (written to {log})"
        )
    _open(console, outcome.open_alerts)
    if nightly.report is not None:
        console.print(f"\nreport: {nightly.report}")
    project = outcome.folder / "evalplat.toml"
    console.print(f"project: {project}  (next night: evalplat demo --dir {outcome.folder}, "
                  f"or evalplat nightly --project {project})")  # fmt: skip


def _table(
    console: Console,
    comparisons: list[dict[str, Any]],
    title: str,
    columns: tuple[str, str],
    *,
    gated_only: bool,
) -> None:
    from rich.table import Table

    table = Table("config", "metric", *columns, "delta", "p", "verdict",
                  title=f"{title}; p: Holm-corrected")  # fmt: skip
    for comparison in comparisons:
        for metric in comparison["metrics"]:
            if gated_only and not metric["gated"]:
                continue
            p = metric["p_corrected"]
            table.add_row(
                comparison["config"],
                metric["metric"].removeprefix("online:"),
                f"{metric['baseline']:.4f}",
                f"{metric['candidate']:.4f}",
                f"{metric['delta']:+.4f}",
                "-" if p is None else f"{p:.4f}",
                _verdict(metric["verdict"]),
            )
    console.print(table)


def _open(console: Console, alerts: list[dict[str, Any]]) -> None:
    if not alerts:
        console.print("open alerts: none")
        return
    console.print(f"open alerts ({len(alerts)}), oldest first:")
    for alert in alerts:
        state = "" if alert["state"] == "open" else f" [{alert['state']}]"
        console.print(
            f"  #{alert['id']} {alert['kind'].replace('_', ' ')}: {alert['config']} "
            f"{alert['metric']} on {alert['test_set']}, since {alert['opened_at'][:10]}{state}"
        )


def _verdict(verdict: str) -> str:
    marks = {
        "regression": "▼ regression",
        "improvement": "▲ improvement",
        "unchanged": "= unchanged",
        "needs_judgments": "? needs judgments",
    }
    return marks.get(verdict, verdict)
