"""``config add``: every searcher kind, valid params plus one made bad (``--param K=V``), is
refused naming the param, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.searchers import SEARCHERS
from evalplat.searchers.kinds import Param

from .fuzzkit import FUZZ, HUGE_INT, refused

BASE = {
    "builtin": [],
    "http": ["url=http://127.0.0.1:9/s", "results_path=hits"],
    "sql": ["url=sqlite:///search.db", "query=select id, 1.0 from t"],
    "python": ["function=engine:search"],
    "command": ["command=my-engine --json"],
}
# Text no stored param may hold: the JSON column refuses NUL on PostgreSQL, and a lone
# surrogate is not text at all.
BAD_TEXT = ["a\x00b", "\ud800"]
NUMBER = ["x", "\u0661", "inf", "-inf", "nan", "1e400", HUGE_INT, "", "0x10", "1,5"]


def bad_values(param: Param) -> list[str]:
    """Values ``param`` must refuse, by its declared type and bounds."""
    if param.type in ("int", "float"):
        values = list(NUMBER)
        if param.type == "int":
            values += ["1.5", "true"]
        if param.minimum is not None:
            values.append(str(param.minimum - 1))
        if param.above is not None:
            values += [str(param.above), str(param.above - 1)]
        return values
    if param.type == "bool":
        return ["maybe", "2", "", "\x00"]
    if param.choices:
        return ["nope", param.choices[0].upper() + "x", *BAD_TEXT]
    if param.type == "mapping":
        return ["a", "=1", "a=\x00", "\ud800=1"]
    return list(BAD_TEXT)


# Once accepted (a number read from non-ASCII digits or hexadecimal, as Python's float() and
# TOML read them): each is tried on its own by test_known_gaps, so that it stays refused.
KNOWN = {
    (kind, name, value)
    for kind, name in [("http", "timeout"), ("http", "retries"), ("sql", "timeout"),
                       ("command", "timeout"), ("command", "processes")]
    for value in ("\u0661", "0x10")
} - {("http", "retries", "\u0661"), ("command", "processes", "\u0661")}  # fmt: skip
CASES = [
    (kind, param.name, value)
    for kind, spec in SEARCHERS.items()
    for param in spec.params
    for value in bad_values(param)
    if (kind, param.name, value) not in KNOWN
]


@pytest.mark.parametrize("kind", sorted(BASE))
@FUZZ
@given(data=st.data())
def test_a_bad_param_is_refused_naming_it(
    cli: Callable[..., Any], db_url: str, kind: str, data: st.DataObject
) -> None:
    mine = [case for case in CASES if case[0] == kind]
    check_param(cli, db_url, *data.draw(st.sampled_from(mine)))


@pytest.mark.parametrize(("kind", "name", "value"), sorted(KNOWN))
def test_known_gaps(cli: Callable[..., Any], db_url: str, kind: str, name: str, value: str) -> None:
    check_param(cli, db_url, kind, name, value)


def check_param(cli: Callable[..., Any], db_url: str, kind: str, name: str, value: str) -> None:
    params = [p for p in BASE[kind] if not p.startswith(f"{name}=")] + [f"{name}={value}"]
    args = [arg for p in params for arg in ("--param", p)]
    line = refused(f"config add --param ({kind})", cli, db_url, "config", "add", "c",
                   "--searcher", kind, *args)  # fmt: skip
    assert any(w in line for w in (f"'{name}'", "config parameters", "--param")), line


@FUZZ
@given(
    kind=st.sampled_from(sorted(BASE)),
    param=st.sampled_from(["nosuch=1", "=1", "novalue", "a b=1", "x\x00=1"]),
)
def test_an_unknown_or_malformed_param_is_refused(
    cli: Callable[..., Any], db_url: str, kind: str, param: str
) -> None:
    if kind == "python" and param in ("nosuch=1", "a b=1"):
        param = "novalue"  # python passes unknown names to the function: only syntax can fail
    args = [arg for p in [*BASE[kind], param] for arg in ("--param", p)]
    refused(f"config add --param ({kind})", cli, db_url, "config", "add", "c", "--searcher",
            kind, *args)  # fmt: skip
