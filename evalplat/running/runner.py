"""The runner: send a test set's queries to a config's searcher, store results and scores.

``run`` creates a ``running`` run and hands it to the search driver
(``evalplat.running.search_driver``), which checks the backend, searches with retries and a thread
pool, commits outcomes in batches, scores the stored results and sets the final status
(``complete``, ``partial``, ``failed`` or ``interrupted``). ``resume`` searches only the queries
without an ``ok`` outcome and finishes the run the same way. ``rescore`` scores a stored run again
against another test set version; ``import_run`` stores a TREC run file as a complete run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.db.engine import sqlite_file
from evalplat.errors import InputError
from evalplat.metrics.names import parse, parse_all
from evalplat.metrics.numbers import counted
from evalplat.metrics.registry import Metric
from evalplat.running.search_driver import (
    ProgressCallback,
    RunInterruptedError,
    RunSettings,
    document_fields,
    drive,
    evaluation_record,
)
from evalplat.searchers import SearchContext, Searcher, get_kind, validate_config
from evalplat.store.refs import VersionRef
from evalplat.store.result_fields import field_names
from evalplat.store.runs import IMPORT_KIND, RunInfo

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent

__all__ = [
    "COVERAGE_METRICS",
    "SYSTEM_METRICS",
    "ProgressCallback",
    "RunInterruptedError",
    "RunSettings",
    "create_searcher",
    "default_cache_dir",
    "evaluation_record",
    "import_run",
    "rescore",
    "resume",
    "run",
]


def run(
    store: Store,
    config_ref: str | VersionRef,
    test_set_ref: str | VersionRef,
    *,
    metrics: Sequence[str | Metric] | None = None,
    settings: RunSettings | None = None,
    trigger: str = "manual",
    progress: ProgressCallback | None = None,
) -> RunInfo:
    """Run every query of a test set version through a config version; return the stored run."""
    settings = settings or RunSettings()
    chosen = _with_coverage(metrics)
    config = store.config_version(config_ref)
    test_set = store.test_set_version(test_set_ref)
    config_key = VersionRef(config.name, config.version)
    test_set_key = VersionRef(test_set.name, test_set.version)
    config_version_id = store.config_version_id(config_key)
    test_set_version_id = store.test_set_version_id(test_set_key)
    content = store.load_test_set(test_set_key)
    check_query_texts(config.searcher, config.params, content, str(test_set_key))
    check_fields(chosen, config.params, field_names(store, config.params, test_set_version_id))
    # Creating the searcher validates params and env placeholders: bad input writes nothing.
    searcher = create_searcher(store, config.searcher, config.params, content, settings)
    with searcher:
        run_id = store.create_run(
            config_version_id,
            test_set_version_id,
            depth=settings.depth,
            trigger=trigger,
            queries_total=len(content.queries),
            options=_options(chosen, settings),
        )
        queries = list(zip(content.queries["query_id"], content.queries["text"], strict=True))
        return drive(
            store, run_id, searcher, queries, content, chosen, settings, progress, new_run=True
        )


def resume(
    store: Store,
    run_ref: str | int,
    *,
    settings: RunSettings | None = None,
    progress: ProgressCallback | None = None,
) -> RunInfo:
    """Finish a partial, interrupted or failed run: search only its queries without an ``ok``
    outcome, with the run's depth and metrics, then score the whole run."""
    info = store.run_info(run_ref)
    if info.searcher == IMPORT_KIND:
        raise InputError(f"run {info.id} was imported from a file; there is nothing to search")
    base = settings or RunSettings()
    saved = info.options
    settings = RunSettings(
        depth=info.depth,
        concurrency=base.concurrency if settings else int(saved.get("concurrency", 4)),
        rate_limit=base.rate_limit if settings else saved.get("rate_limit"),
        retry=base.retry,
        batch_size=base.batch_size,
        flush_seconds=base.flush_seconds,
        heartbeat_seconds=base.heartbeat_seconds,
        cache_dir=base.cache_dir,
    )
    metrics = [str(m) for m in parse_all(saved.get("metrics"))]
    config = store.config_version(VersionRef(info.config, info.config_version))
    test_set_key = VersionRef(info.test_set, info.test_set_version)
    content = store.load_test_set(test_set_key)
    check_query_texts(config.searcher, config.params, content, str(test_set_key))
    searcher = create_searcher(store, config.searcher, config.params, content, settings)
    with searcher:
        info = store.reopen_run(info.id)
        outcomes = store.run_outcomes(info.id)
        finished = set(outcomes.loc[outcomes["status"] == "ok", "query_id"])
        queries = [
            (query_id, text)
            for query_id, text in zip(
                content.queries["query_id"], content.queries["text"], strict=True
            )
            if query_id not in finished
        ]
        return drive(store, info.id, searcher, queries, content, metrics, settings, progress)


# Always scored with a run: a comparison's judged-coverage guard needs how many documents each
# query returned, to tell "more unjudged documents" from "fewer documents".
COVERAGE_METRICS = ("NumRet",)
# Also scored with every run, so that a candidate that is slower or answers fewer queries fails
# its gates like one that ranks worse. Latency needs the run's records: an imported run has none
# and gets no latency scores.
SYSTEM_METRICS = ("Latency", "Latency(p=95)", "ZeroResult")


def _with_coverage(metrics: Sequence[str | Metric] | None) -> list[str]:
    chosen = [str(m) for m in parse_all([str(m) for m in metrics] if metrics else None)]
    extra = [str(m) for m in parse_all([*COVERAGE_METRICS, *SYSTEM_METRICS])]
    return chosen + [m for m in extra if m not in chosen]


def check_fields(metrics: Sequence[str], params: dict[str, Any], known: list[str]) -> None:
    """Refuse a metric of a document field the run cannot have, or of judgments per subtopic
    (which stored test sets do not keep), before anything is written."""
    for name in metrics:
        metric = parse(name)
        if "subtopics" in metric.spec.inputs:
            raise InputError(
                f"{metric} reads judgments per subtopic, which stored test sets do not keep; "
                f"score a diversity qrels file with `evalplat evaluate --qrels FILE --run RUN "
                f"-m {metric}`"
            )
        if "documents" not in metric.spec.inputs:
            continue
        field = str(metric.param("field"))
        if field not in known:
            shown = ", ".join(known) or "none: give the http searcher hit_fields, or documents"
            raise InputError(f"{metric}: no field {field!r} in the config's hit_fields or the "
                             f"test set's documents (fields: {shown})")  # fmt: skip


def check_query_texts(
    searcher: str, params: dict[str, Any], content: TestSetContent, test_set: str
) -> None:
    """Refuse, before anything is written, a test set without query texts (imported without
    ``--queries``) for a searcher that sends the text (:func:`lacks_query_texts`)."""
    if lacks_query_texts(searcher, params, content):
        name = test_set.split("@")[0]
        raise InputError(
            f"test set {test_set} has no query texts, and the {searcher} searcher sends the "
            f"text of each query; add them with `evalplat testset import {name} --qrels FILE "
            "--queries FILE`"
        )


def lacks_query_texts(searcher: str, params: dict[str, Any], content: TestSetContent) -> bool:
    """Would every query of ``content`` search for ""? True when no query has a text and the
    searcher sends the text: every query would score 0. Searchers that work by query id (an
    ``http`` template reading only ``query_id``) and imported run files need no texts."""
    if searcher == IMPORT_KIND or not len(content.queries):
        return False
    texts = content.queries["text"].fillna("").astype(str).str.strip()
    if (texts != "").any():
        return False
    return get_kind(searcher).uses_text(validate_config(searcher, params))


def default_cache_dir(store: Store) -> Path:
    """Where searchers cache indexes: next to a SQLite database file, else the user cache."""
    database = sqlite_file(store.url)
    if database is not None:
        return database.resolve().parent / f"{database.stem}-cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalplat"


def rescore(
    store: Store,
    run_ref: str | int,
    test_set_ref: str | VersionRef | None = None,
    *,
    metrics: Sequence[str | Metric] | None = None,
) -> RunInfo:
    """Score a stored run again, against another version of its test set (default: the
    latest), without searching; the new evaluation becomes the run's shown scores, and the
    earlier ones are kept (each names its test set version)."""
    info = store.run_info(run_ref)
    if info.status == "running":
        raise InputError(f"run {info.id} is still running; rescore it when it has finished")
    if info.results_pruned_at is not None:
        raise InputError(f"run {info.id}: its results were pruned by the retention policy, so "
                         "it cannot be scored again")  # fmt: skip
    target = store.test_set_version(test_set_ref or info.test_set)
    if target.name != info.test_set:
        raise InputError(
            f"run {info.id} ran on test set '{info.test_set}', not '{target.name}': "
            "rescoring needs a version of the same test set"
        )
    key = VersionRef(target.name, target.version)
    chosen = _with_coverage(metrics)
    if not metrics:
        chosen = _with_coverage(info.options.get("metrics"))
    content = store.load_test_set(key)
    record = evaluation_record(
        content,
        store.load_results(info.id),
        chosen,
        store.test_set_version_id(key),
        store.run_outcomes(info.id),
        document_fields(store, info.id, chosen),
    )
    return store.add_evaluation(info.id, record)


def import_run(
    store: Store,
    path: str | Path,
    config: str,
    test_set_ref: str | VersionRef,
    *,
    label: str | None = None,
    metrics: Sequence[str | Metric] | None = None,
) -> RunInfo:
    """Store a TREC run file as a complete run of a config version, and score it.

    Ranks are decided here, once, as trec_eval does: score descending, ties by doc id
    descending (the file's rank column is ignored). Queries of the test set missing from the
    file have no results (they score 0); queries not in the test set are dropped and counted in
    the run's options as ``run_only_queries``.
    """
    from evalplat.running.ranked_file import rank_run_file

    chosen = _with_coverage(metrics)
    test_set = store.test_set_version(test_set_ref)
    key = VersionRef(test_set.name, test_set.version)
    content = store.load_test_set(key, documents=False)
    # parsed and ranked once: the same columns are stored, scored and kept as the run's copy
    ranked = rank_run_file(path, content.queries["query_id"])
    run_only = ranked.run_only
    if ranked.results.num_rows == 0:  # checked before anything is written: nothing is left
        shown = ", ".join(run_only[:3]) + (" ..." if len(run_only) > 3 else "")
        raise InputError(
            f"none of the run's {counted(len(run_only), 'query')} ({shown}) is a query of test set "
            f"{key.name}@{key.version}; nothing imported",
            path=path,
        )
    config_version_id = store.import_config_version(config, label)
    test_set_version_id = store.test_set_version_id(key)
    options = {"metrics": chosen, "source": Path(path).name, "run_only_queries": len(run_only)}
    run_id = store.create_run(
        config_version_id,
        test_set_version_id,
        depth=ranked.depth,
        trigger="import",
        queries_total=len(content.queries),
        options=options,
    )
    # a process killed from here on leaves a ``running`` run, never one that looks complete
    store.record_ranked(run_id, ranked.query_ids, ranked.counts, ranked.results)
    record = evaluation_record(
        content,
        ranked.results,
        chosen,
        test_set_version_id,
        None,  # an imported run records no latency
        document_fields(store, run_id, chosen),
    )
    return store.finish_run(run_id, "complete", evaluation=record, result_table=ranked.results)


def create_searcher(
    store: Store,
    kind: str,
    params: dict[str, Any],
    content: TestSetContent,
    settings: RunSettings,
) -> Searcher:
    if kind == IMPORT_KIND:
        raise InputError(
            "this config version holds imported run files and has no searcher; "
            "add a version with `evalplat config add NAME --searcher KIND`"
        )
    documents = content.documents
    context = SearchContext(
        documents=documents,
        corpus_key=None if documents is None else content.corpus_hash(),
        cache_dir=settings.cache_dir or default_cache_dir(store),
        concurrency=settings.concurrency,
    )
    # the same validator as `config add`: a stored config that it refuses never starts a run
    return get_kind(kind).create(validate_config(kind, params), context)


def _options(metrics: list[str], settings: RunSettings) -> dict[str, Any]:
    return {
        "metrics": metrics,
        "concurrency": settings.concurrency,
        "rate_limit": settings.rate_limit,
    }
