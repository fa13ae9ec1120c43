"""``evalplat demo``: a self-contained project that shows the whole loop on real data.

It writes a project folder with the bundled Cranfield test set, an ``evalplat.toml`` and an
SQLite database, then runs the real nightly pipeline on three configurations of the builtin
BM25 engine: production (Porter stemming), a candidate without stemming (a small drop: the
statistics decide whether it is credible), and a candidate with the AND operator (a large drop).
The three configs are also the arms of a simulated A/B test: a seeded UBI log of their users is
imported after the first night (``evalplat.demo.events``), and later nights compare the arms.
Everything is local: no network, no search server.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

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
baseline = "bm25-porter"
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


@dataclass(frozen=True)
class DemoOutcome:
    folder: Path
    nightly: NightlyOutcome
    created: bool

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
    project.write_text(PROJECT.format(folder=folder), encoding="utf-8")
    return True


def run_demo(folder: Path) -> DemoOutcome:
    """Create the project if needed and run one night of it (another night when it exists).

    On creation, the first night's runs also give the demo its interaction log
    (``evalplat.demo.events``), imported and scored, and the site is written again with the
    online runs; the next night compares the arms."""
    folder = folder.resolve()
    created = create_demo(folder)
    project = load_project(folder / "evalplat.toml")
    outcome = run_nightly(project)
    if created and outcome.exit_code in (0, 1):
        _add_events(folder, project, outcome)
    return DemoOutcome(folder=folder, nightly=outcome, created=created)


def _add_events(folder: Path, project: Project, outcome: NightlyOutcome) -> None:
    from evalplat.demo.events import write_demo_events
    from evalplat.nightly.prep import database_url
    from evalplat.store import Store

    with Store.open(database_url(project, None)) as store:
        write_demo_events(folder, store, outcome.runs)
        if outcome.report is not None:
            from evalplat.reports import render_site

            render_site(store, project.reports_dir)
