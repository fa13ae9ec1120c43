"""Before a night writes anything: the database URL, test set files, searcher params, alert
channels, opening (or creating) the database, and the dry run that only says what would happen.

Every input error is found here, so a bad project file leaves the database unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError, InputError, SchemaOutdatedError
from evalplat.nightly.project import ConfigSpec, Project

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.nightly.job import LogFunction
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent


def database_url(project: Project, db_url: str | None) -> str:
    from evalplat.db.engine import resolve_url

    return resolve_url(db_url, project.path)


def load_test_sets(project: Project, emit: LogFunction) -> dict[str, TestSetContent]:
    """Read and validate every test set file before anything is written."""
    from evalplat.testsets.content import load_testset

    contents = {}
    for spec in project.testsets:
        contents[spec.name] = load_testset(
            spec.qrels, queries=spec.queries, docs=spec.docs, format=spec.format
        )
        emit({"step": "read", "testset": spec.name, "queries": len(contents[spec.name].queries)})
    return contents


def check_inputs(project: Project, contents: dict[str, TestSetContent]) -> list[Channel]:
    """Everything a night needs, checked before its first write (and by ``--dry-run``).

    Each config's params go through the validator ``config add`` and ``run`` use; every
    ``${VAR}`` of the configs and the alert channels must be set; a
    ``builtin`` searcher needs its test sets' documents, and a searcher that sends query texts
    test sets that have them; a gate's or target's ``segment`` must
    be a tag of some query of a test set it applies to (:mod:`evalplat.nightly.scopes`); the
    night's judge must be ready to ask (:func:`evalplat.nightly.judging.check_night_judge`); the
    reports dir must be writable.
    Errors name the project file, the line of the table and the config or key at fault.
    """
    from evalplat.alerts.registry import channels_from_tables
    from evalplat.inputs.env import expand_env
    from evalplat.nightly.judging import check_night_judge
    from evalplat.nightly.project import table_line
    from evalplat.nightly.scopes import check_segments
    from evalplat.searchers import validate_config

    for index, spec in enumerate(project.configs):
        try:
            validate_config(spec.searcher, spec.params)
            expand_env(spec.params)
        except InputError as error:
            raise InputError(
                f"config '{spec.name}': {error.problem}",
                path=project.path,
                line=table_line(project.path, "configs", index),
            ) from None
        for test_set in spec.testsets if spec.searcher == "builtin" else ():
            if contents[test_set].documents is None:
                raise InputError(
                    f"config '{spec.name}': the builtin searcher needs documents, and test set "
                    f"'{test_set}' has none (add docs = \"...\" to its [[testsets]] table)",
                    path=project.path,
                    line=table_line(project.path, "configs", index),
                )
        _check_query_texts(project, index, spec, contents)
    check_segments(project, contents)
    check_night_judge(project)
    channels = channels_from_tables(project.alerts)
    for index, table in enumerate(project.alerts):
        _check_expanded(project, index, table)
    _check_writable(project)
    return channels


def _check_expanded(project: Project, index: int, table: dict[str, Any]) -> None:
    """Every ``${VAR}`` of an ``[[alerts]]`` table is set, and the channel takes the values
    (a header value with a line break is refused); the error names the key's line, never the
    value."""
    from evalplat.alerts.base import SettingError
    from evalplat.alerts.registry import build_channel
    from evalplat.inputs.env import expand_env
    from evalplat.nightly.project import table_line

    key: str | None = None
    try:
        expanded = dict(table)
        for key, value in table.items():
            if key not in ("type", "name"):
                expanded[key] = expand_env(value)
        key = None
        build_channel(expanded)
    except SettingError as error:
        key = error.key
        problem = error.problem
    except InputError as error:
        problem = error.problem
    else:
        return
    where = f"[[alerts]] #{index + 1}" + ("" if key is None else f" key '{key}'")
    raise InputError(
        f"{where}: {problem}",
        path=project.path,
        line=table_line(project.path, "alerts", index, key),
    )


def _check_query_texts(
    project: Project, index: int, spec: ConfigSpec, contents: dict[str, TestSetContent]
) -> None:
    """A searcher that sends the query text needs test sets that have texts."""
    from evalplat.nightly.project import table_line
    from evalplat.running.runner import lacks_query_texts

    for test_set in spec.testsets:
        if lacks_query_texts(spec.searcher, spec.params, contents[test_set]):
            raise InputError(
                f"config '{spec.name}': test set '{test_set}' has no query texts, and the "
                f"{spec.searcher} searcher sends the text of each query (add queries = "
                '"..." to its [[testsets]] table)',
                path=project.path,
                line=table_line(project.path, "configs", index),
            )


def _check_writable(project: Project) -> None:
    """The reports dir, or the first folder above it that exists, must be a writable folder."""
    import os

    from evalplat.nightly.project import table_line

    folder = project.reports_dir
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(
            f"[reports] dir {project.reports_dir} cannot be written ({folder} is not a "
            "writable folder)",
            path=project.path,
            line=table_line(project.path, "reports", 0),
        )


def open_store(url: str, emit: LogFunction) -> Store:
    """Open the database; a missing or empty one is created, an outdated one is refused."""
    from evalplat.store import Store

    try:
        return Store.open(url)
    except SchemaOutdatedError as error:
        if "run `evalplat init`" not in str(error):
            raise
    store = Store.init(url)
    emit({"step": "database", "created": True, "database": store.description})
    return store


def dry_run_night(
    project: Project, url: str, contents: dict[str, TestSetContent], emit: LogFunction
) -> None:
    """Say what a real night would do, writing nothing; refuse what a real night would refuse
    before it starts (a judge the gates let in that is not fit for gating)."""
    from evalplat.nightly.judging import check_judges
    from evalplat.searchers.configs import content_hash
    from evalplat.store import Store

    store = None
    try:
        store = Store.open(url)
    except SchemaOutdatedError as error:
        emit({"step": "database", "would_create": True, "detail": str(error)})
    try:
        check_judges(store, project)
        for name, content in contents.items():
            _dry_run_test_set(store, name, content, emit)
        for spec in project.configs:
            known = _known_hashes(None if store is None else store.config_versions, spec.name)
            digest = content_hash(spec.searcher, _stored_params(spec), spec.label)
            emit(
                {
                    "step": "config",
                    "config": spec.name,
                    "dry_run": True,
                    "new_version": digest not in known,
                }
            )
            for test_set in spec.testsets:
                emit({"step": "run", "config": spec.name, "testset": test_set, "dry_run": True})
        if project.sweeps:
            from evalplat.nightly.sweeps import due_sweeps
            from evalplat.store.base import utcnow

            for entry in due_sweeps(store, project, utcnow()):
                emit({**entry, "dry_run": True})
        if project.online is not None:
            gated = [*project.ab_gates(), *project.online_gates()]
            emit({"step": "online", "dry_run": True, "baseline": project.online.baseline,
                  "metrics": project.online_metrics(),
                  "gates": list(dict.fromkeys(g.metric for g in gated))})  # fmt: skip
    finally:
        if store is not None:
            store.close()


def _dry_run_test_set(
    store: Store | None, name: str, content: TestSetContent, emit: LogFunction
) -> None:
    """The version the night would score on, whose grades it would carry, which stored
    versions it would leave unused (``evalplat.nightly.judgments``)."""
    from evalplat.nightly.judgments import Plan, unused_step

    versions = _known_versions(None if store is None else store.test_set_versions, name)
    infos = {v.version: v for v in versions}
    file_version = next(
        (v.version for v in versions if v.content_hash == content.content_hash()), None
    )
    plan = Plan.of(infos, file_version)
    entry = {"step": "testset", "testset": name, "dry_run": True,
             "new_version": file_version is None, "version": plan.head}  # fmt: skip
    if plan.carry_from is not None:
        entry["carry_from"] = plan.carry_from
    emit(entry)
    for version in plan.unused:
        emit({**unused_step(infos[version], name, f"{name}@{plan.head}"), "dry_run": True})


def _known_hashes(versions: Callable[[str], Sequence[Any]] | None, name: str) -> set[str]:
    """Content hashes of the stored versions of ``name`` (none without a database or name)."""
    return {v.content_hash for v in _known_versions(versions, name)}


def _known_versions(versions: Callable[[str], Sequence[Any]] | None, name: str) -> list[Any]:
    """The stored versions of ``name`` (none without a database or name)."""
    if versions is None:
        return []
    try:
        return list(versions(name))
    except EvalplatError:
        return []


def _stored_params(spec: ConfigSpec) -> dict[str, Any]:
    from evalplat.searchers import validate_config

    validated = validate_config(spec.searcher, spec.params)
    return {key: validated[key] for key in spec.params}
