"""The project file, ``evalplat.toml``: what ``nightly`` runs, compares, alerts and reports.

Relative paths are relative to the file, so a project works from any directory. ``${ENV}``
placeholders are kept as written here and expanded only where they are used (a searcher's
request, an alert channel), so secrets never reach the database or a report.

Errors name the file and, where it can be found, the line of the table at fault.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalplat.comparison import TESTS, UNJUDGED_MODES, Gate
from evalplat.errors import InputError

PROJECT_FILE = "evalplat.toml"
DEFAULT_METRICS_FALLBACK = ("nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10")


@dataclass(frozen=True)
class TestSetSpec:
    __test__ = False

    name: str
    qrels: Path
    queries: Path | None = None
    docs: Path | None = None
    format: str | None = None


@dataclass(frozen=True)
class ConfigSpec:
    name: str
    searcher: str
    testsets: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    depth: int = 100
    concurrency: int = 4
    # Compare with this config's baseline instead of its own (a "production" config).
    compare_to: str | None = None


@dataclass(frozen=True)
class Project:
    path: Path
    database_url: str | None
    testsets: tuple[TestSetSpec, ...]
    configs: tuple[ConfigSpec, ...]
    metrics: tuple[str, ...]
    gates: tuple[Gate, ...]
    alerts: tuple[dict[str, Any], ...]
    reports_dir: Path
    keep_results_days: int | None
    # Where the report site is served from: links in alerts are URLs under it.
    reports_base_url: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent


def find_project(path: str | Path | None = None) -> Path:
    """The project file given, or ``evalplat.toml`` in the working directory."""
    candidate = Path(path) if path is not None else Path(PROJECT_FILE)
    if candidate.is_dir():
        candidate = candidate / PROJECT_FILE
    if not candidate.is_file():
        raise InputError(
            "project file not found (create one, or run `evalplat demo`)", path=candidate
        )
    return candidate


def table_line(path: Path, table: str, index: int) -> int | None:
    """Line of the ``index``-th ``[[table]]`` (or ``[table]``) of the project file, if any."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _Reader(path, text).line_of(table, index)


def load_project(path: str | Path | None = None) -> Project:
    """Read and validate a project file."""
    file = find_project(path)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=file) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        from evalplat.configs import toml_error

        problem, line = toml_error(error)
        raise InputError(f"invalid TOML: {problem}", path=file, line=line) from None
    return _Reader(file, text).project(data)


class _Reader:
    def __init__(self, file: Path, text: str):
        self.file = file
        self.folder = file.resolve().parent
        self.lines = text.splitlines()

    def fail(self, problem: str, table: str | None = None, index: int = 0) -> InputError:
        return InputError(problem, path=self.file, line=self.line_of(table, index))

    def line_of(self, table: str | None, index: int) -> int | None:
        """Line of the ``index``-th ``[[table]]`` (or ``[table]``) header, for messages."""
        if table is None:
            return None
        pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
        seen = 0
        for number, line in enumerate(self.lines, start=1):
            if pattern.match(line):
                if seen == index:
                    return number
                seen += 1
        return None

    def path(self, value: Any, what: str, table: str, index: int) -> Path:
        if not isinstance(value, str) or not value:
            raise self.fail(f"{what} must be a file path", table, index)
        path = Path(value)
        return path if path.is_absolute() else self.folder / path

    def project(self, data: dict[str, Any]) -> Project:
        known = {
            "database",
            "testsets",
            "configs",
            "metrics",
            "gates",
            "alerts",
            "reports",
            "retention",
        }
        for key in data:
            if key not in known:
                raise self.fail(
                    f"unknown table [{key}]; expected one of: {', '.join(sorted(known))}", key
                )
        testsets = tuple(self.testset(t, i) for i, t in enumerate(self.tables(data, "testsets")))
        names = [t.name for t in testsets]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise self.fail(f"test set '{name}' is defined twice", "testsets", i)
        configs = tuple(
            self.config(c, i, set(names)) for i, c in enumerate(self.tables(data, "configs"))
        )
        config_names = [c.name for c in configs]
        for i, name in enumerate(config_names):
            if config_names.index(name) != i:
                raise self.fail(f"config '{name}' is defined twice", "configs", i)
        for i, spec in enumerate(configs):
            if spec.compare_to is not None and spec.compare_to not in config_names:
                raise self.fail(
                    f"config '{spec.name}': compare_to names '{spec.compare_to}', "
                    "which is not a config of this project",
                    "configs",
                    i,
                )
        metrics = self.metrics(data.get("metrics", {}))
        gates = tuple(self.gate(g, i) for i, g in enumerate(self.tables(data, "gates")))
        alerts = tuple(self.alert(a, i) for i, a in enumerate(self.tables(data, "alerts")))
        for key, allowed in (
            ("database", {"url"}),
            ("reports", {"dir", "base_url"}),
            ("retention", {"keep_results_days"}),
        ):
            table = data.get(key, {})
            if not isinstance(table, dict):
                raise self.fail(f"[{key}] must be a table", key)
            for name in table:
                if name not in allowed:
                    raise self.fail(
                        f"[{key}] has unknown key '{name}'; expected one of: "
                        f"{', '.join(sorted(allowed))}",
                        key,
                    )
        reports = data.get("reports", {})
        retention = data.get("retention", {})
        keep = retention.get("keep_results_days")
        if keep is not None and (not isinstance(keep, int) or keep < 1):
            raise self.fail("keep_results_days must be a whole number of days ≥ 1", "retention")
        base_url = reports.get("base_url")
        if base_url is not None and (
            not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))
        ):
            raise self.fail(
                '[reports] base_url must be an http(s) URL, e.g. "https://search.example.com/evalplat/"',
                "reports",
            )
        database = data.get("database", {})
        url = database.get("url")
        if url is not None and not isinstance(url, str):
            raise self.fail("[database] url must be a string", "database")
        return Project(
            path=self.file,
            database_url=url,
            testsets=testsets,
            configs=configs,
            metrics=metrics,
            gates=gates,
            alerts=alerts,
            reports_dir=self.path(reports.get("dir", "reports"), "[reports] dir", "reports", 0),
            keep_results_days=keep,
            reports_base_url=base_url,
        )

    def tables(self, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(f"[[{key}]] must be an array of tables", key)
        return value

    def string(
        self, table: dict[str, Any], key: str, where: str, index: int, required: bool = True
    ) -> str | None:
        value = table.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f'[[{where}]] needs {key} = "..."', where, index)
        return value

    def testset(self, table: dict[str, Any], index: int) -> TestSetSpec:
        self.only(table, {"name", "qrels", "queries", "docs", "format"}, "testsets", index)
        name = self.string(table, "name", "testsets", index)
        assert_str = name or ""
        return TestSetSpec(
            name=assert_str,
            qrels=self.path(table.get("qrels"), f"test set '{name}' qrels", "testsets", index),
            queries=None
            if table.get("queries") is None
            else self.path(table["queries"], "queries", "testsets", index),
            docs=None
            if table.get("docs") is None
            else self.path(table["docs"], "docs", "testsets", index),
            format=self.string(table, "format", "testsets", index, required=False),
        )

    def config(self, table: dict[str, Any], index: int, testsets: set[str]) -> ConfigSpec:
        self.only(
            table,
            {
                "name",
                "searcher",
                "testsets",
                "params",
                "label",
                "depth",
                "concurrency",
                "compare_to",
            },
            "configs",
            index,
        )
        name = self.string(table, "name", "configs", index) or ""
        searcher = self.string(table, "searcher", "configs", index) or ""
        wanted = table.get("testsets", sorted(testsets))
        if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
            raise self.fail(f"config '{name}': testsets must be a list of names", "configs", index)
        for t in wanted:
            if t not in testsets:
                raise self.fail(
                    f"config '{name}' names test set '{t}', which is not defined in [[testsets]]",
                    "configs",
                    index,
                )
        params = table.get("params", {})
        if not isinstance(params, dict):
            raise self.fail(f"config '{name}': params must be a table", "configs", index)
        depth, concurrency = table.get("depth", 100), table.get("concurrency", 4)
        for key, value in (("depth", depth), ("concurrency", concurrency)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise self.fail(
                    f"config '{name}': {key} must be a whole number ≥ 1", "configs", index
                )
        return ConfigSpec(
            name=name,
            searcher=searcher,
            testsets=tuple(wanted),
            params=params,
            label=self.string(table, "label", "configs", index, required=False),
            depth=depth,
            concurrency=concurrency,
            compare_to=self.string(table, "compare_to", "configs", index, required=False),
        )

    def metrics(self, table: Any) -> tuple[str, ...]:
        if not isinstance(table, dict):
            raise self.fail("[metrics] must be a table with names = [...]", "metrics")
        names = table.get("names")
        if names is None:
            return DEFAULT_METRICS_FALLBACK
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail("[metrics] names must be a non-empty list of metric names", "metrics")
        from evalplat.metrics import parse

        try:
            return tuple(str(parse(n)) for n in names)
        except InputError as error:
            raise self.fail(f"[metrics] {error}", "metrics") from None

    def gate(self, table: dict[str, Any], index: int) -> Gate:
        self.only(
            table,
            {"metric", "max_drop", "max_relative_drop", "test", "alpha", "consecutive", "unjudged"},
            "gates",
            index,
        )
        metric = self.string(table, "metric", "gates", index) or ""
        from evalplat.metrics import parse

        try:
            metric = str(parse(metric))
        except InputError as error:
            raise self.fail(f"gate: {error}", "gates", index) from None
        numbers: dict[str, float | None] = {}
        for key in ("max_drop", "max_relative_drop"):
            value = table.get(key)
            if value is not None and (not isinstance(value, int | float) or value < 0):
                raise self.fail(f"gate {metric}: {key} must be a number ≥ 0", "gates", index)
            numbers[key] = None if value is None else float(value)
        test = table.get("test", "randomization")
        if test not in TESTS:
            raise self.fail(
                f"gate {metric}: test must be one of {', '.join(TESTS)}", "gates", index
            )
        alpha = table.get("alpha", 0.05)
        if not isinstance(alpha, int | float) or not 0 < alpha < 1:
            raise self.fail(f"gate {metric}: alpha must be between 0 and 1", "gates", index)
        consecutive = table.get("consecutive", 1)
        if not isinstance(consecutive, int) or consecutive < 1:
            raise self.fail(
                f"gate {metric}: consecutive must be a whole number ≥ 1", "gates", index
            )
        unjudged = table.get("unjudged", "bound")
        if unjudged not in UNJUDGED_MODES:
            raise self.fail(
                f"gate {metric}: unjudged must be one of {', '.join(UNJUDGED_MODES)}",
                "gates",
                index,
            )
        return Gate(
            metric=metric,
            max_drop=numbers["max_drop"],
            max_relative_drop=numbers["max_relative_drop"],
            test=test,
            alpha=float(alpha),
            consecutive=consecutive,
            unjudged=unjudged,
        )

    def alert(self, table: dict[str, Any], index: int) -> dict[str, Any]:
        if not isinstance(table.get("type"), str):
            raise self.fail(
                '[[alerts]] needs type = "webhook" (or slack, teams, email, junit, json)',
                "alerts",
                index,
            )
        resolved = dict(table)
        for key in ("path", "file"):
            if isinstance(resolved.get(key), str) and "${" not in resolved[key]:
                resolved[key] = str(self.path(resolved[key], key, "alerts", index))
        return resolved

    def only(self, table: dict[str, Any], allowed: set[str], where: str, index: int) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(
                    f"[[{where}]] has unknown key '{key}'; expected one of: "
                    f"{', '.join(sorted(allowed))}",
                    where,
                    index,
                )
