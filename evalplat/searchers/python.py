"""The ``python`` searcher: a function you write, ``module:function``.

The function is called as ``fn(query, depth, **params)`` where ``params`` are every param of
the config other than ``function`` and ``path`` (``${ENV}`` expanded), and returns, in ranked
order, either ``(doc_id, score)`` pairs or mappings with ``id`` (or ``doc_id``) and ``score``
(a missing score is derived from the rank). It is called from several threads at once, so it
must be thread-safe (or take a lock itself).

``path`` is a folder put on ``sys.path`` first, for a module that lives in the project rather
than in an installed package (cron runs do not start in the project folder).

Errors: a module or function that cannot be imported is an ``InputError`` at creation; an
exception raised by the function is a ``SearchError`` for that query (``TransientSearchError``
subclasses pass through, so a function can ask for a retry); a malformed return value is a
``SearchError`` naming what was wrong.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.env import expand_env
from evalplat.searchers.base import Hit, Searcher, SearchError, hits_from_results, shorten
from evalplat.searchers.kinds import Param, SearchContext, SearcherKind


class PythonSearcher(Searcher):
    """Calls a user function per query."""

    kind = "python"

    def __init__(self, params: dict[str, Any], context: SearchContext) -> None:
        self.function_name: str = params["function"]
        self.function = load_function(self.function_name, params["path"])
        self.kwargs: dict[str, Any] = expand_env(
            {name: value for name, value in params.items() if name not in {"function", "path"}}
        )

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        try:
            results = self.function(text, depth, **self.kwargs)
        except SearchError:
            raise
        except Exception as error:
            raise SearchError(
                f"python searcher {self.function_name}: query {query_id!r} raised "
                f"{type(error).__name__}: {shorten(str(error))}"
            ) from error
        return hits_from_results(results, f"python searcher {self.function_name}")


_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def check_function(params: dict[str, Any]) -> None:
    """``function`` is written ``module:function`` (dotted names on each side); importing it
    waits for the run, whose environment is the one that counts."""
    module_name, sep, attribute = params["function"].partition(":")
    if not sep or not _DOTTED.fullmatch(module_name) or not _DOTTED.fullmatch(attribute):
        raise InputError(
            f"python searcher function must look like 'module:function', got {params['function']!r}"
        )


def load_function(spec: str, path: str = "") -> Callable[..., Any]:
    """Import ``module:function`` (``module:Class.method`` works too)."""
    check_function({"function": spec})
    module_name, _, attribute = spec.partition(":")
    if path:
        _from_folder(module_name, str(Path(path).resolve()))
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise InputError(f"python searcher cannot import module {module_name!r}: {error}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise InputError(f"python searcher: module {module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise InputError(f"python searcher: {spec!r} is not callable")
    return target  # type: ignore[no-any-return]


def _from_folder(module_name: str, folder: str) -> None:
    """Make ``import module_name`` find it in ``folder``: the folder goes first on ``sys.path``,
    and a module of the same name imported earlier from elsewhere (another project's
    ``engine.py`` in the same process) is forgotten, so each config gets the module its own
    ``path`` names."""
    import importlib.machinery

    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
    top = module_name.split(".")[0]
    found = importlib.machinery.PathFinder.find_spec(top, [folder])
    loaded = sys.modules.get(top)
    origin = None if found is None else found.origin
    file = getattr(loaded, "__file__", None)
    if origin is None or file is None or Path(file).resolve() == Path(origin).resolve():
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def _create(params: dict[str, Any], context: SearchContext) -> Searcher:
    return PythonSearcher(params, context)


KIND = SearcherKind(
    name="python",
    description="a Python function module:function(query, depth, **params) -> [(doc_id, score)]",
    params=(
        Param("function", "str", None, "module:function to call", required=True),
        Param("path", "str", "", "folder to import the module from (added to sys.path)"),
    ),
    factory=_create,
    extra_params=True,
    check=check_function,
)
