"""A searcher kind: its name, one-line description, declared params and factory.

Params arrive from a stored config: from a TOML file (typed values) or from
``config add --param K=V`` (strings). ``SearcherKind.validate`` accepts both: a string is
converted when the param's type is int, float, bool, mapping or list; anything else of the
wrong type, and any unknown name, is an ``InputError`` that lists the valid params. Validation
never expands ``${ENV}`` placeholders: the validated params are what gets stored.

Param types:
- ``str``, ``int``, ``float``, ``bool`` (``true/false/yes/no/1/0`` from a string);
- ``mapping``: a table, or ``"k=v,k2=v2"`` from the command line (values stay strings);
- ``list``: a list of strings, or a string split like a shell command line;
- ``json``: any JSON value as given (a string stays a string);
- ``str or false``: a string, or ``false`` to turn the feature off (the ``http`` probe).

Numbers may declare bounds (``minimum``: at least; ``above``: strictly more than; ``maximum``:
at most), checked by :func:`evalplat.inputs.validation.check_number`. A kind may
add a ``check`` of its validated params that needs neither the network nor the environment
(templates compile, paths parse); :func:`evalplat.searchers.validate_config` runs both, and is
what ``config add``, ``run`` and ``nightly`` call, so they accept and refuse the same configs.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL, check_number

if TYPE_CHECKING:
    from evalplat.searchers.base import Searcher

ParamType = Literal["str", "int", "float", "bool", "mapping", "list", "json", "str or false"]

TIMEOUT_MAX = 86_400.0  # seconds: a day; longer overflows the clocks of threads and sockets
RETRIES_MAX = 100
PROCESSES_MAX = 1_000  # as many as --concurrency can use

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class Param:
    """One declared param. ``default=None`` with ``required=True`` means it must be given."""

    name: str
    type: ParamType
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    required: bool = False
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class SearchContext:
    """What a searcher may need besides its params.

    ``documents``: the test set's corpus (a DataFrame or an iterable of mappings with
    ``doc_id`` or ``id`` plus text fields), only the ``builtin`` searcher reads it.
    ``corpus_key``: a content hash of those documents, naming cached indexes.
    ``cache_dir``: where indexes are cached (``None``: a temporary folder per searcher).
    ``concurrency``: how many threads will call ``search`` at once (sizes connection pools).
    """

    documents: Iterable[Mapping[str, Any]] | Any | None = None
    corpus_key: str | None = None
    cache_dir: Path | None = None
    concurrency: int = 1


@dataclass(frozen=True)
class SearcherKind:
    """A registered searcher kind. ``extra_params`` lets unknown names through (``python``).

    ``reads_text`` says whether its searches use the query text (``True``, or a function of
    the validated params: an ``http`` searcher whose templates read only ``query_id`` does
    not), so that a test set without query texts is refused before such a run.

    ``engine`` names the endpoint a config of this kind searches, from its params (None: a
    local searcher, no endpoint shared with other configs); see ``evalplat.searchers.engines``.
    """

    name: str
    description: str
    params: tuple[Param, ...]
    factory: Callable[[dict[str, Any], SearchContext], Searcher]
    extra_params: bool = False
    check: Callable[[dict[str, Any]], None] | None = None
    reads_text: bool | Callable[[dict[str, Any]], bool] = True
    engine: Callable[[Mapping[str, Any]], str | None] | None = None
    _by_name: dict[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {param.name: param for param in self.params})

    def validate(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return ``params`` converted to their declared types with defaults filled in."""
        result: dict[str, Any] = {}
        for name, value in params.items():
            spec = self._by_name.get(name)
            if spec is None:
                if self.extra_params:
                    result[name] = value
                    continue
                raise InputError(
                    f"{self.name} searcher has no param {name!r}; valid params: "
                    + ", ".join(param.name for param in self.params)
                )
            result[name] = _convert(self.name, spec, value)
        for spec in self.params:
            if spec.name not in result:
                if spec.required:
                    raise InputError(
                        f"{self.name} searcher needs the param {spec.name!r} ({spec.help})"
                    )
                result[spec.name] = spec.default
        return result

    def uses_text(self, params: dict[str, Any]) -> bool:
        """Whether searches with these (validated) params send the query text."""
        return self.reads_text(params) if callable(self.reads_text) else self.reads_text

    def create(self, params: Mapping[str, Any], context: SearchContext | None = None) -> Searcher:
        """Validate ``params`` and build a searcher (expanding ``${ENV}`` in memory only)."""
        return self.factory(self.validate(params), context or SearchContext())


def _convert(kind: str, spec: Param, value: Any) -> Any:
    if value is None and spec.default is None and not spec.required:
        return None  # "not set": validating already validated params must give the same params
    converted = _CONVERTERS[spec.type](value)
    if converted is _INVALID:
        raise InputError(
            f"{kind} searcher param {spec.name!r} must be {_TYPE_WORDS[spec.type]}, got {value!r}"
        )
    if spec.choices and converted not in spec.choices:
        raise InputError(
            f"{kind} searcher param {spec.name!r} must be one of "
            f"{', '.join(spec.choices)}; got {converted!r}"
        )
    if spec.type in ("int", "float"):
        check_number(
            converted,
            f"{kind} searcher param {spec.name!r}",
            minimum=spec.minimum,
            above=spec.above,
            maximum=spec.maximum,
        )
    return converted


_INVALID = object()


def _to_str(value: Any) -> Any:
    return value if isinstance(value, str) else _INVALID


def _to_int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?[0-9]{1,18}", text):
            return _INVALID
        return int(text)
    return _INVALID


def _to_float(value: Any) -> Any:
    number: float
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            return _INVALID
    elif isinstance(value, str):
        if not DECIMAL.fullmatch(value.strip()):
            return _INVALID  # ASCII digits only: float() also reads "1_0" and other scripts
        number = float(value.strip())
    else:
        return _INVALID
    return number if math.isfinite(number) else _INVALID


def _to_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return _INVALID


def _to_mapping(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str) or value.lstrip().startswith("{"):
        return _INVALID  # "{..." is a table that did not parse, not key=value text
    result: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        key, sep, item_value = item.partition("=")
        if not sep or not key.strip():
            return _INVALID
        result[key.strip()] = item_value.strip()
    return result


def _to_str_or_false(value: Any) -> Any:
    return value if isinstance(value, str) or value is False else _INVALID


def _to_list(value: Any) -> Any:
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    if isinstance(value, str) and not value.lstrip().startswith("["):
        # "[1," is a list that did not parse, not a command line
        try:
            return shlex.split(value)
        except ValueError:
            return _INVALID
    return _INVALID


_CONVERTERS: dict[ParamType, Callable[[Any], Any]] = {
    "str": _to_str,
    "int": _to_int,
    "float": _to_float,
    "bool": _to_bool,
    "mapping": _to_mapping,
    "list": _to_list,
    "json": lambda value: value,
    "str or false": _to_str_or_false,
}

_TYPE_WORDS: dict[ParamType, str] = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "mapping": "a table or 'key=value,key=value'",
    "list": "a list of strings or a command line",
    "json": "a JSON value",
    "str or false": "a string, or false",
}
