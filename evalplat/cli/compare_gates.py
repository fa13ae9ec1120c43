"""The gates ``compare`` applies: those its options name, else the project's ``[[gates]]``
for the pair's test set (``--project``, else ./evalplat.toml when there is one), else the
default rule set (``evalplat.comparison.thresholds.default_gates``) — the gates a night of
that project judges the same pair by."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evalplat.comparison.verdicts import Gate
    from evalplat.metrics.registry import Metric
    from evalplat.store import Store

CompareProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Project file whose [[gates]] gate the pair when no gate option is given "
        "(default: ./evalplat.toml when there is one).",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class GateOptions:
    """What the command line says about gates (``compare``'s options)."""

    metric: list[str] | None = None
    gate: list[str] | None = None
    test: str = "randomization"
    alpha: float = 0.05
    max_drop: float | None = None
    max_relative_drop: float | None = None
    unjudged: str = "bound"
    judge: str | None = None
    segment: list[str] | None = None

    @property
    def shaped(self) -> bool:
        """Do the options shape the gates (which metrics, thresholds, bound, segments)?"""
        tuned = (
            self.max_drop is not None
            or self.max_relative_drop is not None
            or self.unjudged != "bound"
        )
        return bool(self.gate or tuned or self.segment)


def project_file(project: Path | None) -> Path | None:
    """The project file in force: ``--project``, else ./evalplat.toml when there is one."""
    from evalplat.nightly.project import PROJECT_FILE, find_project

    if project is not None:
        return find_project(project)
    return Path(PROJECT_FILE) if Path(PROJECT_FILE).is_file() else None


def chosen_gates(
    store: Store, baseline: str, candidate: str, given: GateOptions, project: Path | None
) -> list[Gate] | None:
    """The gates of the comparison (module doc); None: the default over the metrics compared.
    ``--metric`` alone keeps the project's gates on the metrics it names."""
    if not given.shaped:
        stated = _project_gates(store, baseline, project)
        if given.metric:
            from evalplat.metrics.names import parse_all

            chosen = {str(m) for m in parse_all(given.metric)}
            stated = [g for g in stated if g.metric in chosen]
        if stated:
            return stated
    if given.shaped or given.metric:
        return _option_gates(store, baseline, candidate, given)
    return None


def _project_gates(store: Store, baseline: str, project: Path | None) -> list[Gate]:
    """The ``[[gates]]`` the project states for the baseline's test set (its segment gates
    on tags of its queries), empty without a project."""
    if project is None:
        return []
    from evalplat.nightly.project import load_project

    loaded = load_project(project)
    run = store.run_info(baseline)
    _, tags = store._query_facts(run.id)
    known = {tag for listed in tags.values() for tag in listed}
    return [g for g in loaded.stated_gates(run.test_set) if g.segment is None or g.segment in known]


def _option_gates(store: Store, baseline: str, candidate: str, given: GateOptions) -> list[Gate]:
    """The gates the options name (``--gate``, else the relevance metrics compared), with
    their thresholds, test and segments."""
    from evalplat.comparison.thresholds import gated_by_default
    from evalplat.comparison.verdicts import Gate
    from evalplat.metrics.names import parse_all

    named = list({str(m): m for m in parse_all(given.gate)}.values()) if given.gate else None
    if named is not None:
        held = named
    else:
        chosen = parse_all(given.metric) if given.metric else None
        compared = chosen if chosen is not None else _scored_metrics(store, baseline, candidate)
        held = [m for m in compared if gated_by_default(m)]
    gates = [
        Gate(
            str(m),
            # thresholds given for every metric leave a measure's own default in force
            # (latency's 20 %): 0.01 means a point of nDCG, not a hundredth of a millisecond
            max_drop=given.max_drop if _own_threshold(m, named) else None,
            max_relative_drop=given.max_relative_drop if _own_threshold(m, named) else None,
            test=given.test,
            alpha=given.alpha,
            unjudged=given.unjudged,
            judge=given.judge,
        )
        for m in held
    ]
    tags = dict.fromkeys(given.segment or ())
    return gates + [replace(g, segment=tag) for tag in tags for g in gates]


def _scored_metrics(store: Store, baseline: str, candidate: str) -> list[Metric]:
    """The metrics both runs were scored with, in the baseline's stored order."""
    from evalplat.metrics.names import parse

    names = [
        dict.fromkeys(str(n) for n in store.evaluation_scores(store.resolve_run(ref))["metric"])
        for ref in (baseline, candidate)
    ]
    return [parse(name) for name in names[0] if name in names[1]]


def _own_threshold(metric: Metric, named: list[Metric] | None) -> bool:
    """Do the command line's thresholds apply to ``metric``? Always when it was named with
    ``--gate``; otherwise only when its measure has no default threshold of its own."""
    return (named is not None and metric in named) or metric.spec.max_relative_change is None
