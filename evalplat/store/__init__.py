"""The store: the Python API over the database, one mixin module per noun.

``Store.open(url)`` checks that the schema is current; ``Store.init(url)`` creates or upgrades
it. Each CLI command calls one method here.
"""

from __future__ import annotations

from evalplat.store.alerts import AlertsMixin
from evalplat.store.baselines import BaselinesMixin
from evalplat.store.change_points import ChangePointsMixin
from evalplat.store.click_judgments import ClickJudgmentsMixin
from evalplat.store.comparisons import ComparisonsMixin
from evalplat.store.configs import AddConfigOutcome, ConfigsMixin, ConfigVersionInfo
from evalplat.store.event_sources import Attachment
from evalplat.store.events import EventImport, EventsMixin
from evalplat.store.history import HistoryMixin
from evalplat.store.interleaving import InterleavingMixin, PreferenceDay
from evalplat.store.judge_grades import JudgeGradesMixin
from evalplat.store.leaderboard import LeaderboardMixin
from evalplat.store.locks import LockBusyError, LockLostError, LocksMixin
from evalplat.store.nights import NightsMixin
from evalplat.store.online_agreement import OnlineAgreement, OnlineAgreementMixin
from evalplat.store.online_days import OnlineDaysMixin
from evalplat.store.online_queries import OnlineQueriesMixin
from evalplat.store.outbox import OutboxMixin
from evalplat.store.query_health import QueryHealthMixin
from evalplat.store.rating import RatingMixin
from evalplat.store.rating_views import RatingViewsMixin
from evalplat.store.result_fields import ResultFieldsMixin
from evalplat.store.runs import EvaluationRecord, QueryOutcome, RunInfo, RunsMixin
from evalplat.store.site_stamps import SiteStampsMixin
from evalplat.store.sweep_records import SweepRecordsMixin
from evalplat.store.targets import TargetsMixin
from evalplat.store.testsets import ImportOutcome, TestSetsMixin, TestSetVersionInfo

__all__ = [
    "AddConfigOutcome",
    "Attachment",
    "ConfigVersionInfo",
    "EvaluationRecord",
    "EventImport",
    "ImportOutcome",
    "LockBusyError",
    "LockLostError",
    "OnlineAgreement",
    "PreferenceDay",
    "QueryOutcome",
    "RunInfo",
    "Store",
    "TestSetVersionInfo",
]


class Store(
    ClickJudgmentsMixin,
    TestSetsMixin,
    ConfigsMixin,
    ComparisonsMixin,
    BaselinesMixin,
    HistoryMixin,
    ChangePointsMixin,
    RunsMixin,
    ResultFieldsMixin,
    JudgeGradesMixin,
    LocksMixin,
    AlertsMixin,
    NightsMixin,
    OutboxMixin,
    EventsMixin,
    InterleavingMixin,
    OnlineAgreementMixin,
    OnlineDaysMixin,
    OnlineQueriesMixin,
    QueryHealthMixin,
    SiteStampsMixin,
    TargetsMixin,
    LeaderboardMixin,
    RatingMixin,
    RatingViewsMixin,
    SweepRecordsMixin,
):
    """Everything the CLI can do, as methods (see the mixins for each noun)."""
