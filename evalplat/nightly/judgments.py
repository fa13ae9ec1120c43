"""A test set's judgments across nights: which stored version a night scores on.

The project file's files are one version of the test set, the *file version* (imported, or found
by its content). Versions made from another one record it as their ``parent``: judgments added
with ``testset import --add``, a judge's grades, grades carried onto a changed file. A night
scores every config on the *head*: the latest version that descends from the file version.

When the file changes, its new version has no descendants yet. The grades added on the
previous file's versions — the rows of the latest derived version that the file version it
descends from does not have — are carried onto it as a new version (parent: the head), each with
its source. A carried grade is left out when the new file grades the same pair from the same
source (the file wins), when the head already has it, or when its query left the test set.

A stored version newer than the head that is neither descended from the file version nor carried
(e.g. imported by hand from another file) is named in the night's log, one line each, and not
used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.nightly.job import LogFunction
    from evalplat.store import ImportOutcome, Store, TestSetVersionInfo
    from evalplat.testsets.content import TestSetContent

_KEY = ["query_id", "doc_id", "source"]


def settle_test_set(
    store: Store,
    name: str,
    content: TestSetContent,
    source: dict[str, Any],
    emit: LogFunction,
) -> int:
    """Import the project file's ``content`` of test set ``name`` and return the version the
    night scores on (module doc); logs one ``testset`` step, and one ``judgments`` step per
    stored version left unused."""
    imported = store.import_test_set(name, content, source=source)
    file_version = imported.version.version
    infos = {v.version: v for v in store.test_set_versions(name)}
    plan = Plan.of(infos, file_version)
    entry: dict[str, Any] = {"step": "testset", "testset": name, "version": plan.head,
                             "created": imported.created, "file_version": file_version}  # fmt: skip
    if plan.carry_from is not None:
        carried, dropped = _carried_rows(
            store, infos, name, plan.carry_from, file_version, plan.head
        )
        if len(carried):
            made = _carry(store, name, content, plan.head, carried, plan.carry_from, file_version)
            entry.update(version=made.version.version, created=entry["created"] or made.created)
            entry.update(carried=len(carried), carried_from=plan.carry_from)
        if dropped:
            entry.update(dropped=dropped, carried_from=plan.carry_from)
    emit(entry)
    for version in plan.unused:
        emit(unused_step(infos[version], name, f"{name}@{entry['version']}"))
    return int(entry["version"])


@dataclass(frozen=True)
class Plan:
    """What a night does with the stored versions, given the file's version (module doc)."""

    head: int  # the latest version made from the file version, before any carry
    carry_from: int | None  # the version whose added grades are carried onto the head
    unused: list[int]  # versions newer than the head the file does not account for

    @classmethod
    def of(cls, infos: dict[int, TestSetVersionInfo], file_version: int | None) -> Plan:
        """``file_version`` None: the file's content is not stored yet (a dry run)."""
        lineage = set() if file_version is None else descendants(infos, file_version)
        head = max(lineage) if lineage else max(infos, default=0) + 1
        derived = [v for v, info in infos.items() if info.parent is not None]
        latest = max(derived, default=None)
        carried: set[int] = set()
        if latest is not None and latest in lineage:
            latest = None
        if latest is not None:
            carried = {v for v in ancestors(infos, latest) if infos[v].parent is not None}
        unused = [v for v in sorted(infos) if v > head and v not in lineage | carried]
        return cls(head, latest, unused)


def descendants(infos: dict[int, TestSetVersionInfo], root: int) -> set[int]:
    """``root`` and every version made from it, directly or not."""
    found = {root}
    for version in sorted(infos):  # a version's parent is always older than it
        if infos[version].parent in found:
            found.add(version)
    return found


def ancestors(infos: dict[int, TestSetVersionInfo], version: int) -> list[int]:
    """``version`` and the versions it was made from, newest first, to its root."""
    chain = [version]
    parent = infos[version].parent
    while parent is not None and parent in infos and parent not in chain:
        chain.append(parent)
        parent = infos[parent].parent
    return chain


def _carried_rows(
    store: Store,
    infos: dict[int, TestSetVersionInfo],
    name: str,
    latest: int,
    file_version: int,
    head: int,
) -> tuple[pd.DataFrame, int]:
    """The grades added on ``latest``'s line that ``head`` should take (module doc), and how
    many were dropped because their query left the test set."""
    root = ancestors(infos, latest)[-1]
    added = _rows(store, name, latest).merge(
        _rows(store, name, root), how="left", on=[*_KEY, "grade"], indicator=True
    )
    added = added[added["_merge"] == "left_only"].drop(columns="_merge")
    file_rows = _rows(store, name, file_version)
    queries = set(
        store.load_test_set(f"{name}@{file_version}", documents=False).queries["query_id"]
    )
    known = set(map(tuple, file_rows[_KEY].to_numpy().tolist()))
    known |= set(map(tuple, _rows(store, name, head)[_KEY].to_numpy().tolist()))
    keys = list(map(tuple, added[_KEY].to_numpy().tolist()))
    fresh = [key not in known for key in keys]
    kept = [q in queries for q in added["query_id"]]
    dropped = sum(1 for f, k in zip(fresh, kept, strict=True) if f and not k)
    chosen = [f and k for f, k in zip(fresh, kept, strict=True)]
    return added[chosen].reset_index(drop=True), dropped


def _rows(store: Store, name: str, version: int) -> pd.DataFrame:
    """Every source's grades of a version, a missing source as ``""``."""
    judgments = store.load_test_set(f"{name}@{version}", documents=False).judgments
    frame = judgments[["query_id", "doc_id", "grade", "source"]].copy()
    frame["query_id"] = frame["query_id"].astype(str)
    frame["doc_id"] = frame["doc_id"].astype(str)
    frame["source"] = frame["source"].astype(object).where(frame["source"].notna(), "")
    frame["grade"] = frame["grade"].astype("int64")
    return frame


def _carry(
    store: Store,
    name: str,
    content: TestSetContent,
    head: int,
    carried: pd.DataFrame,
    latest: int,
    file_version: int,
) -> ImportOutcome:
    """A new version: the head's judgments and the ``carried`` ones, with the file's queries
    and documents; its parent is the head."""
    import pandas as pd

    from evalplat.testsets.content import TestSetContent

    base = store.load_test_set(f"{name}@{head}", documents=False)
    rows = pd.concat([_rows(store, name, head), carried], ignore_index=True)
    rows["source"] = rows["source"].where(rows["source"] != "", None)
    outcome = store.import_test_set(
        name,
        TestSetContent(
            queries=content.queries,
            judgments=rows,
            documents=content.documents,
            grade_rule=base.grade_rule or content.grade_rule,
        ),
        source={
            "kind": "carried",
            "carried_from": latest,
            "file_version": file_version,
            "pairs": len(carried),
        },
        parent=head,
    )
    return outcome


def unused_step(info: TestSetVersionInfo, name: str, used: str) -> dict[str, Any]:
    """The log line naming a stored version a night leaves unused for ``used``."""
    origin = ""
    if info.source and info.source.get("qrels"):
        origin = f" (from {info.source['qrels']})"
    return {
        "step": "judgments",
        "testset": name,
        "unused_version": info.version,
        "problem": f"{name}@{info.version}{origin} is neither the project file's version nor "
        f"made from it: not used; the night scores on {used}",
    }
