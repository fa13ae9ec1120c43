"""``evalplat demo``: a self-contained project that shows the whole loop on real data.

It writes a project folder with the bundled Cranfield test set, an ``evalplat.toml`` and an
SQLite database, then runs the real nightly pipeline on three configurations of the builtin
BM25 engine: production (Porter stemming), a candidate without stemming (a small drop: the
statistics decide whether it is credible), and a candidate with the AND operator (a large drop).
The three configs are also the arms of a simulated A/B test: a seeded UBI log of their users is
imported after the first night (``evalplat.demo.events``), and later nights compare the arms.
Everything is local: no network, no search server.

Each call is one night, and the nights tell a story (``NIGHTS``): the candidates (night 1), a
change to production that hurts (night 2: a new config version, a regression alert), and its
fix (night 3: the alert resolved). The demo rewrites its project file for the night only while
that file is still one it wrote itself; a project file someone edited is run as it is.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalplat.nightly.job import NightlyOutcome, run_nightly
from evalplat.nightly.project import Project, load_project
from evalplat.resources import bundled_testset

PROJECT = """\
# evalplat demo project: three configurations of the builtin BM25 engine on Cranfield.
# Run another night with:  evalplat nightly --project {folder}/evalplat.toml

[database]
url = "sqlite:///evalplat.db"

[[testsets]]
name = "cranfield"
qrels = "testsets/cranfield/qrels.txt"
queries = "testsets/cranfield/queries.tsv"
docs = "testsets/cranfield/docs.jsonl"

[[configs]]
name = "bm25-porter"            # production: the baseline the others are compared with
searcher = "builtin"
testsets = ["cranfield"]
[configs.params]
tokenizer = "porter"
operator = "or"
{production}
[[configs]]
name = "bm25-nostem"            # candidate: no stemming, a small drop
searcher = "builtin"
testsets = ["cranfield"]
compare_to = "bm25-porter"
[configs.params]
tokenizer = "unicode61"
operator = "or"

[[configs]]
name = "bm25-and"               # candidate: every query word required, a large drop
searcher = "builtin"
testsets = ["cranfield"]
compare_to = "bm25-porter"
[configs.params]
tokenizer = "porter"
operator = "and"

[metrics]
names = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01

[[gates]]
metric = "AP"
max_drop = 0.01

[online]                        # the configs as A/B arms, over events/ubi.jsonl (simulated users)
baseline = "bm25-porter@1"      # the control arm: the version production served during the test
metrics = ["online:CTR", "online:MRR", "online:Abandonment", "online:Conversion"]
# gate an online measure like any metric:  [[gates]] metric = "online:CTR"  max_relative_drop = 0.05

[[alerts]]
type = "json"                   # alerts are appended to this file (no network needed)
path = "alerts.jsonl"

[reports]
dir = "reports"

[retention]
keep_results_days = 90
"""


# What each night changes in production's params, and the line that tells it; the last entry
# holds for every later night.
NIGHTS = (
    ("", "production and two candidates: is either one better?"),
    (
        "weights = { title = 1, text = 5 }  # night 2: a change weighs the body text 5x\n",
        "a new version of production weighs the body text 5x: did it hurt?",
    ),
    ("", "the weights change is rolled back: does the alert resolve?"),
    ("", "nothing changed: no new alert"),
)


@dataclass(frozen=True)
class DemoOutcome:
    folder: Path
    nightly: NightlyOutcome
    created: bool
    night: int = 1
    story: str = ""
    # the alerts still open (or acknowledged) after the night, as ``AlertInfo.to_dict``
    open_alerts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def report(self) -> Path | None:
        return self.nightly.report


def create_demo(folder: Path) -> bool:
    """Write the demo project into ``folder``; False when one is already there."""
    project = folder / "evalplat.toml"
    if project.exists():
        return False
    target = folder / "testsets" / "cranfield"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("qrels.txt", "queries.tsv", "docs.jsonl", "README.md"):
        shutil.copyfile(bundled_testset("cranfield") / name, target / name)
    project.write_text(_project_text(folder, 1), encoding="utf-8")
    return True


def _project_text(folder: Path, night: int) -> str:
    production = NIGHTS[min(night, len(NIGHTS)) - 1][0]
    return PROJECT.format(folder=folder, production=production)


def _night(folder: Path) -> int:
    """This night's number: one more than production's nightly runs so far."""
    from evalplat.errors import NotFoundError
    from evalplat.store import Store

    if not (folder / "evalplat.db").is_file():
        return 1
    with Store.open(f"sqlite:///{folder / 'evalplat.db'}") as store:
        try:
            runs = store.list_runs("bm25-porter")
        except NotFoundError:
            return 1
    return 1 + sum(1 for run in runs if run.trigger == "nightly")


def _set_night(folder: Path, night: int) -> None:
    """Write this night's project file, unless someone edited the demo's own."""
    file = folder / "evalplat.toml"
    ours = {_project_text(folder, n) for n in range(1, len(NIGHTS) + 1)}
    if file.read_text(encoding="utf-8") in ours:
        file.write_text(_project_text(folder, night), encoding="utf-8")


def run_demo(folder: Path) -> DemoOutcome:
    """Create the project if needed and run one night of it (another night when it exists).

    On creation, the first night's runs also give the demo its interaction log
    (``evalplat.demo.events``), imported and scored, and the site is written again with the
    online runs; the next night compares the arms."""
    folder = folder.resolve()
    created = create_demo(folder)
    night = _night(folder)
    _set_night(folder, night)
    project = load_project(folder / "evalplat.toml")
    outcome = run_nightly(project)
    if created and outcome.exit_code in (0, 1):
        _add_events(folder, project, outcome)
    story = NIGHTS[min(night, len(NIGHTS)) - 1][1]
    return DemoOutcome(folder=folder, nightly=outcome, created=created, night=night,
                       story=story, open_alerts=_open_alerts(project))  # fmt: skip


def _open_alerts(project: Project) -> list[dict[str, Any]]:
    from evalplat.nightly.prep import database_url
    from evalplat.store import Store

    names = {config.name for config in project.configs}
    with Store.open(database_url(project, None)) as store:
        return [
            alert.to_dict()
            for alert in reversed(store.list_alerts())
            if alert.config in names and alert.state in ("open", "acknowledged")
        ]


def _add_events(folder: Path, project: Project, outcome: NightlyOutcome) -> None:
    from evalplat.demo.events import write_demo_events
    from evalplat.nightly.prep import database_url
    from evalplat.store import Store

    with Store.open(database_url(project, None)) as store:
        write_demo_events(folder, store, outcome.runs)
        if outcome.report is not None:
            from evalplat.nightly.project_online import agreement_pairs
            from evalplat.reports import render_site

            control = None if project.online is None else project.online.baseline
            render_site(
                store,
                project.reports_dir,
                agreement_pairs(project),
                targets=project.targets,
                control=control,
                gates_of=project.stated_gates,
            )
