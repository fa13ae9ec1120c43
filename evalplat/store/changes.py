"""What changed between two stored runs' setups: read both sides and diff them
(``evalplat.comparison.changes``).

The config versions are always diffed (two runs of one version give no parameter change). The
test set versions are diffed only when the two runs searched different versions; their queries
and judgments are then read (ids, texts and grades only, not documents).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.comparison.changes import Changes, diff_configs, diff_test_sets
from evalplat.db.models import ConfigVersion, Judgment, Query, Run, TestSet, TestSetVersion
from evalplat.store.run_rows import run_row

if TYPE_CHECKING:
    import pandas as pd


def run_changes(session: Session, baseline_run: int, candidate_run: int) -> Changes:
    """The config parameter diff and, when they differ, the test set diff of two runs."""
    runs = [run_row(session, baseline_run), run_row(session, candidate_run)]
    versions = [_config_version(session, run) for run in runs]
    config = diff_configs(
        versions[0].params,
        versions[1].params,
        searchers=(versions[0].searcher, versions[1].searcher),
        labels=(versions[0].label, versions[1].label),
    )
    test_set = None
    if runs[0].test_set_version_id != runs[1].test_set_version_id:
        sides = [_test_set_version(session, run) for run in runs]
        test_set = diff_test_sets(
            str(sides[0][0]),
            (sides[0][1].version, sides[1][1].version),
            _queries(session, sides[0][1].id),
            _queries(session, sides[1][1].id),
            _judgments(session, sides[0][1].id),
            _judgments(session, sides[1][1].id),
        )
    return Changes(config, test_set, same_config_version=versions[0].id == versions[1].id)


def _config_version(session: Session, run: Run) -> ConfigVersion:
    version = session.get(ConfigVersion, run.config_version_id)
    if version is None:  # a foreign key guarantees it; keeps the type checker informed
        raise LookupError(f"run {run.id} has no config version")
    return version


def _test_set_version(session: Session, run: Run) -> tuple[str, TestSetVersion]:
    row = session.execute(
        select(TestSet.name, TestSetVersion)
        .join(TestSetVersion, TestSetVersion.test_set_id == TestSet.id)
        .where(TestSetVersion.id == run.test_set_version_id)
    ).one()
    return str(row[0]), row[1]


def _queries(session: Session, version_id: int) -> pd.DataFrame:
    import pandas as pd

    rows = session.execute(
        select(Query.query_id, Query.text).where(Query.test_set_version_id == version_id)
    ).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=["query_id", "text"])


def _judgments(session: Session, version_id: int) -> pd.DataFrame:
    import pandas as pd

    rows = session.execute(
        select(Judgment.query_id, Judgment.doc_id, Judgment.grade, Judgment.source).where(
            Judgment.test_set_version_id == version_id
        )
    ).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=["query_id", "doc_id", "grade", "source"])
