"""Where a project's gates and targets apply, and what a night does with one that cannot.

A gate applies to every test set of the project, or only to the one its ``testset`` key names;
a target to the configs and test sets its ``config`` and ``testset`` keys allow. With a
``segment`` (a query tag), a gate or target applies only to the test sets some query of which
carries the tag: on the others it is not evaluated at all (no verdict, no alert), so a ``tail``
gate never stops the comparison of a test set without tail queries.

A segment no test set it could apply to carries (a misspelt tag, a named test set without that
tag) would never be checked: it is refused before a night writes anything, and by ``--dry-run``
(:func:`check_segments`, called from :func:`evalplat.nightly.prep.check_inputs`).

A gate on a metric the baseline was never scored with (a gate, target or gain map added since
it ran) is handled in :mod:`evalplat.nightly.pairing`: the baseline is scored again from its
stored results; when those were pruned, the gate is skipped for that pair with one log line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError

if TYPE_CHECKING:
    from evalplat.comparison.results import Gate
    from evalplat.nightly.project import Project
    from evalplat.testsets.content import TestSetContent

Fail = Callable[[str, str | None, int, str | None], InputError]


def read_gate_testsets(
    data: dict[str, Any], gates: Sequence[Gate], test_sets: set[str], fail: Fail
) -> tuple[str | None, ...]:
    """The ``testset`` key of each ``[[gates]]`` entry of the project file's ``data`` (None when
    it has none), validated; ``gates`` are the entries already read."""
    from evalplat.nightly.project import is_online

    scopes: list[str | None] = []
    for index, (table, gate) in enumerate(zip(data.get("gates", []), gates, strict=True)):
        given = table.get("testset")
        if given is not None and (not isinstance(given, str) or given not in test_sets):
            raise fail(f"gate {gate.metric}: {given!r} is not defined in [[testsets]]", "gates",
                       index, "testset")  # fmt: skip
        if given is not None and is_online(gate.metric):
            raise fail(f"gate {gate.metric}: an online gate gates the A/B comparison, not a "
                       "test set", "gates", index, "testset")  # fmt: skip
        scopes.append(given)
    return tuple(scopes)


def test_set_tags(content: TestSetContent) -> frozenset[str]:
    """Every tag some query of the test set carries."""
    from evalplat.comparison.segments import tag_map

    queries = content.queries
    tags = tag_map(dict(zip(queries["query_id"], queries["tags"], strict=True)))
    return frozenset(tag for listed in tags.values() for tag in listed)


def check_segments(project: Project, contents: dict[str, TestSetContent]) -> None:
    """Refuse a gate or target whose segment no test set it applies to carries, naming the
    ``[[gates]]`` or ``[[targets]]`` entry's ``segment`` key (or ``--target``)."""
    from evalplat.nightly.project import is_online

    tags = {name: test_set_tags(content) for name, content in contents.items()}
    scopes = project.gate_testsets or (None,) * len(project.gates)
    for index, (gate, scope) in enumerate(zip(project.gates, scopes, strict=True)):
        if gate.segment is None or is_online(gate.metric):
            continue
        names = [scope] if scope is not None else [t.name for t in project.testsets]
        if not any(gate.segment in tags[name] for name in names):
            problem = f"gate on {gate.metric}: segment {gate.segment!r} is {_none_of(names)}"
            _refuse(project, "gates", index, problem)
    for target in project.targets:
        if target.segment is None:
            continue
        names = list(dict.fromkeys(
            test_set for spec in project.configs for test_set in spec.testsets
            if target.applies(spec.name, test_set)
        ))  # fmt: skip
        if names and not any(target.segment in tags[name] for name in names):
            problem = f"target {target.label}: segment {target.segment!r} is {_none_of(names)}"
            if target.entry is None:
                raise InputError(f"--target {target.label!r}: {problem}")
            _refuse(project, "targets", target.entry, problem)


def _none_of(names: Sequence[str]) -> str:
    if len(names) == 1:
        return f"a tag of no query of test set '{names[0]}'"
    return "a tag of no query of any test set (" + ", ".join(names) + ")"


def _refuse(project: Project, table: str, index: int, problem: str) -> None:
    from evalplat.inputs.toml_lines import key_line

    lines = project.path.read_text(encoding="utf-8").splitlines()
    raise InputError(
        f"[[{table}]] #{index + 1} key 'segment': {problem}",
        path=project.path,
        line=key_line(lines, table, index, "segment"),
    )
