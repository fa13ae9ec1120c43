"""The model of the season search (``test_season_search``): what a project is on a night, what
its file says, and what each night must end with.

The world is ``season_world``'s: test sets ``topics`` (30 queries tagged head/tail) and
``catalog`` (20 untagged), the ``engine:search`` python searcher whose ``mode`` decides its
quality, and an ``http`` config ``remote`` on ``catalog`` against a search server on 127.0.0.1
(and at times a second one, ``remote2``, on the same server: one engine under two configs).

The python configs live on ``topics``. Their quality by mode, on every judged measure:
``good`` and ``fresh`` find the relevant document first (``fresh`` puts an unjudged ``yN``
second, which the team may grade 0: it never changes a judged figure); ``bad`` finds only
judged non-relevant documents; ``empty`` finds nothing (every query a zero-result one).
Each of these is certain on every query, so a verdict follows from the modes alone.

A config's baseline is its first complete run (the store's rule for an unpinned baseline), so
its verdict tonight is its mode tonight against its mode on its first night.

Online, the logs decide alone (each day's arms attributed to the versions that served them, so a
rollback of ``prod`` changes no online verdict by itself): an A/B arm losing 30 % of its clicks
against ``prod``, or an interleaving candidate that returned nothing where ``prod`` returned
hits, regresses on that day with certainty (1000 sessions an arm, 600 interleaved); alike arms,
or a baseline that returned nothing, do not. The online gates carry a confirmation rule drawn
for the season (``consecutive``, ``within``, ``clear``; each day alone by default), which
opens and resolves their alerts over the judged days; a day without an arm's searches holds
its alert, until the arm has ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .season_world import HEAD, TOPICS

MODES = ("good", "bad", "empty", "fresh")
FOUND = {"good": 1, "fresh": 1, "bad": 0, "empty": 0}  # the relevant document found first?
RELEVANCE = ("nDCG@10", "RR@10", "P@5")
# gates: (metric, segment); every gate has ``max_drop = 0.01``, latency its default thresholds
GATES = (
    ("RR@10", None),
    ("P@5", None),
    ("nDCG@10", "tail"),
    ("nDCG@10", "head"),
    ("ZeroResult", None),
    ("Coverage", None),
    ("Latency(p=95)", None),
)
# targets: (metric, bound); a target names one config
TARGETS = (
    ("P@5", "min = 0.15"),  # 0.2 when the relevant document is found, else 0
    ("nDCG@10", "min = 0.5"),
    ("Coverage", "min = 0.99"),  # reads no judgments (issue 53, item 1)
    ("ZeroResult", "max = 0.01"),
    ("Latency(p=95)", "max = 60000"),  # a minute: met at any load
)
UNPREDICTED = ("Latency(p=95)",)  # timings: the verdict depends on the machine's load
PREFERENCE = "online:Preference"
RETIRE_AFTER_DAYS = 2  # [online] retire_after_days
SMALL = {"head"}  # 10 queries, under min_segment_queries (20): shown, never gated

Subject = tuple[str, str, str, str | None]  # (kind, config, test set, metric)


def engine_subject(engine: str) -> Subject:
    """The subject of an engine's operational alert: the engine, whatever config it is filed
    under (``evalplat.nightly.outages``)."""
    return ("operational", f"engine {engine}", "", None)


def alert_key(metric: str, segment: str | None) -> str:
    return f"{metric} [segment {segment}]" if segment else metric


def regressed(baseline: str, mode: str, metric: str, segment: str | None) -> bool | None:
    """Whether a gate on ``metric`` calls ``mode`` a regression from ``baseline`` (None: the
    model does not say)."""
    if segment in SMALL:
        return False
    if metric in UNPREDICTED:
        return None
    if metric in RELEVANCE:
        return FOUND[baseline] > FOUND[mode]
    # ZeroResult and Coverage: only an engine that answers nothing changes them
    return mode == "empty" and baseline != "empty"


def needs_judgments(
    baseline: str, mode: str, metric: str, segment: str | None, graded: set[int]
) -> bool | None:
    """Whether a gate on ``metric`` says ``needs_judgments`` of ``mode`` against ``baseline``
    (None: the model does not say). Only ``fresh`` after a ``good`` baseline shows more
    unjudged documents (``yN``) than its baseline: its judged figures are unchanged, the
    optimistic bound (``yN`` relevant) a gain, on the measures ``yN`` can move (nDCG@10 and
    P@5; RR@10 already has the relevant document first). Each ``yN`` the team grades closes
    the gap on its query: none left ungraded, the gate is back to unchanged; some left, the
    gain may or may not be significant."""
    if segment in SMALL or metric not in ("nDCG@10", "P@5"):
        return False
    if (baseline, mode) != ("good", "fresh"):
        return False
    queries = set(TOPICS) - HEAD if segment == "tail" else set(TOPICS)
    ungraded = queries - graded
    if not ungraded:
        return False
    return True if ungraded == queries else None


def missed(mode: str, metric: str) -> bool:
    if metric in RELEVANCE:
        return not FOUND[mode]
    if metric in ("Coverage", "ZeroResult"):
        return mode == "empty"
    return False


@dataclass
class Model:
    """The project as its file says tonight, and what the model knows of its past."""

    configs: dict[str, str] = field(default_factory=lambda: {"prod": "good"})
    contents: dict[str, list[str]] = field(default_factory=lambda: {"prod": ["good"]})
    baselines: dict[str, str] = field(default_factory=dict)  # config → its first night's mode
    remote: bool = True
    remote2: bool = False  # a second http config on the search server: the same engine
    engine: str = ""  # the search server's engine (``http://127.0.0.1:PORT``)
    engine_down: bool = False
    hook_down: bool = False
    gates: list[tuple[str, str | None]] = field(default_factory=list)
    targets: list[tuple[str, str, str]] = field(default_factory=list)  # (config, metric, bound)
    dropped: set[str] = field(default_factory=set)
    added: int = 0  # configs added so far (their names: new1, new2, ...)
    changed: bool = True  # something changed since the last night (the first night counts)
    graded: set[int] = field(default_factory=set)  # the queries whose ``yN`` the team graded
    judge: bool = False  # [nightly] judge = "stub"
    judged: set[int] = field(default_factory=set)  # the queries whose ``yN`` the judge graded
    # online (an [online] table, against ``prod``, once the first day of logs came in)
    online: bool = False
    day: int = 0  # the last day of logs imported (2026-03-DAY)
    ab_last: dict[str, int] = field(default_factory=dict)  # A/B arm → its last day of searches
    ab_bad: dict[str, list[bool]] = field(default_factory=dict)  # A/B arm → its judged days
    ab_ended: set[str] = field(default_factory=set)  # A/B arms whose traffic ended
    # A/B day → arm → the version that served it (the arm's current version when the day's
    # logs came in): the night compares the latest day of ``prod``, against that version
    served: dict[int, dict[str, int]] = field(default_factory=dict)
    experiment: str | None = None  # the candidate of [[online.interleaving]]
    il_last: dict[str, int] = field(default_factory=dict)  # candidate → its last day of searches
    il_bad: dict[str, list[bool]] = field(default_factory=dict)  # candidate → its judged days
    # the online gates' confirmation rule: (consecutive, within, clear), drawn for the season
    day_rule: tuple[int, int, int] = (1, 1, 1)
    il_ended: set[str] = field(default_factory=set)  # experiments that ended

    def version_of(self, config: str) -> int:
        """The version number of the config's content tonight: contents are numbered in the
        order they first appeared, and a rollback goes back to an earlier number."""
        return self.contents[config].index(self.configs[config]) + 1

    def set_mode(self, config: str, mode: str) -> None:
        self.configs[config] = mode
        if mode not in self.contents[config]:
            self.contents[config].append(mode)
        self.changed = True

    def all_gates(self) -> list[tuple[str, str | None]]:
        return [("nDCG@10", None), *self.gates]

    def expected_open(self) -> dict[Subject, bool | None]:
        """After tonight: each subject the model can judge → whether its alert is open."""
        expected: dict[Subject, bool | None] = {}
        for config, mode in self.configs.items():
            baseline = self.baselines.setdefault(config, mode)
            for metric, segment in self.all_gates():
                subject = ("regression", config, "topics", alert_key(metric, segment))
                expected[subject] = regressed(baseline, mode, metric, segment)
                unjudged = ("needs_judgments", config, "topics", alert_key(metric, segment))
                expected[unjudged] = needs_judgments(baseline, mode, metric, segment, self.graded)
        for config, metric, _ in self.targets:
            if config in self.configs:
                expected[("target", config, "topics", metric)] = missed(
                    self.configs[config], metric
                )
        expected |= self.online_open()
        if self.remote:  # the http engine is always good; its gates apply but segments' not
            # one outage of the engine is one alert, however many configs search it
            expected[engine_subject(self.engine)] = self.engine_down
            for config in ("remote", "remote2")[: 1 + self.remote2]:
                for metric, segment in self.all_gates():
                    if segment is None:
                        state = None if metric in UNPREDICTED else False
                        expected[("regression", config, "catalog", metric)] = state
        return expected

    def judge_grades(self) -> None:
        """Tonight's judge grades the ``yN`` (graded 0 in their text) of tonight's ``fresh``
        runs that nobody graded: model grades, which the gates (``unjudged = "bound"``, the
        default) leave out, so no verdict moves."""
        if self.judge and "fresh" in self.configs.values():
            self.judged |= set(TOPICS) - self.graded

    def end_online(self) -> None:
        """Tonight's ended arms and experiments (``evalplat.nightly.retire``): no searches for
        ``retire_after_days`` (2) days, counted back from the latest day any config of the
        project has searches (as an A/B arm, or as an interleaving candidate); an experiment
        whose candidate left ``[[online.interleaving]]`` ends too. Nothing ended comes back."""
        days = [
            last
            for of in (self.ab_last, self.il_last)
            for config, last in of.items()
            if config in self.configs
        ]
        latest = max(days, default=0)
        for arm, last in self.ab_last.items():
            if arm != "prod" and latest - last >= RETIRE_AFTER_DAYS:
                self.ab_ended.add(arm)
        for candidate, last in self.il_last.items():
            if candidate != self.experiment or latest - last >= RETIRE_AFTER_DAYS:
                self.il_ended.add(candidate)

    def drop_online(self) -> None:
        """The ``[online]`` table (and its gates) leaves the file: every arm and experiment
        so far has ended (their alerts are retired by the next night, once), and none of them
        comes back should the table return with new days."""
        self.online, self.changed = False, True
        self.ab_ended |= set(self.ab_last) - {"prod"}
        self.il_ended |= set(self.il_last)
        self.experiment = None

    def online_open(self) -> dict[Subject, bool | None]:
        """The online alerts: an A/B arm's ``online:CTR`` and an experiment's
        ``online:Preference`` follow their judged days by the gates' ``day_rule``
        (:func:`confirmed`); a day without their searches holds them."""
        expected: dict[Subject, bool | None] = {}
        for arm, days in self.ab_bad.items():
            if arm in self.configs and arm not in self.ab_ended:
                expected[("regression", arm, "online", "online:CTR")] = confirmed(
                    self.day_rule, days
                )
        for candidate, days in self.il_bad.items():
            if candidate in self.configs and candidate not in self.il_ended:
                expected[("regression", candidate, "online", PREFERENCE)] = confirmed(
                    self.day_rule, days
                )
        return expected

    def online_text(self) -> str:
        if not self.online:
            return ""
        k, n, clear = self.day_rule
        rule = f"consecutive = {k}\nwithin = {n}\nclear = {clear}\n"  # over [online]'s 1, 1, 1
        text = f'\n[[gates]]\nmetric = "online:CTR"\nmax_relative_drop = 0.05\n{rule}'
        if self.experiment is not None:  # a Preference gate without an experiment is refused
            text += f'\n[[gates]]\nmetric = "{PREFERENCE}"\nmax_drop = 0.02\n{rule}'
        text += (
            f'\n[online]\nbaseline = "prod"\nmetrics = ["online:CTR"]\n'
            f"retire_after_days = {RETIRE_AFTER_DAYS}\nopen_days = 1\nopen_window = 1\n"
            "resolve_days = 1\n"
        )
        if self.experiment is not None:
            text += f'\n[[online.interleaving]]\ncandidate = "{self.experiment}"\n'
        return text

    def project_text(self, folder: Path, *, search_url: str, hook: str, judge_url: str) -> str:
        python = "".join(
            f"""
[[configs]]
name = "{name}"
searcher = "python"
testsets = ["topics"]
concurrency = 2
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{mode}"
"""
            for name, mode in self.configs.items()
        )
        remote = "".join(
            f"""
[[configs]]
name = "{name}"
searcher = "http"
testsets = ["catalog"]
concurrency = 2
[configs.params]
url = "{search_url}"
query_params = {{ q = "{{{{ query }}}}", n = "{{{{ depth }}}}" }}
results_path = "results"
retries = 0
timeout = 5
"""
            for name in ("remote", "remote2")[: 1 + self.remote2]
        )
        gates = "".join(
            f'\n[[gates]]\nmetric = "{metric}"\n'
            + ("" if metric in UNPREDICTED else "max_drop = 0.01\n")
            + (f'segment = "{segment}"\n' if segment else "")
            for metric, segment in self.gates
        )
        nightly = '\n[nightly]\njudge = "stub"\n' if self.judge else ""
        targets = "".join(
            f'\n[[targets]]\nmetric = "{metric}"\n{bound}\nconfig = "{config}"\n'
            for config, metric, bound in self.targets
        )
        return f"""
[[testsets]]
name = "topics"
qrels = "topics-qrels.txt"
queries = "topics.tsv"
docs = "topics-docs.jsonl"

[[testsets]]
name = "catalog"
qrels = "catalog-qrels.txt"
queries = "catalog.tsv"
docs = "catalog-docs.jsonl"
{python}{remote if self.remote else ""}
[metrics]
names = ["nDCG@10", "P@5", "RR@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
{gates}{targets}{self.online_text()}
[[judges]]
name = "stub"
url = "{judge_url}"
model = "stub-model"
concurrency = 2
timeout = 5
{nightly}
[[alerts]]
type = "webhook"
url = "{hook}"
backoff = 0.05  # a receiver that is down is retried without waiting seconds

[[alerts]]
type = "json"
path = "alerts.jsonl"

[reports]
dir = "site"
"""


def confirmed(rule: tuple[int, int, int], days: list[bool]) -> bool:
    """Whether an online alert is open after ``days`` (its judged days, oldest first) under
    ``rule`` = (k, n, clear): it opens on a regressed day with k regressed days among the last
    n, and resolves after ``clear`` clear days in a row; between the two it stays."""
    k, n, clear = rule
    is_open = False
    for seen in range(1, len(days) + 1):
        upto = days[:seen]
        if is_open:
            is_open = not (len(upto) >= clear and not any(upto[-clear:]))
        else:
            is_open = upto[-1] and sum(upto[-n:]) >= k
    return is_open
