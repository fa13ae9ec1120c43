"""Reading ``evalplat.toml`` into a :class:`~evalplat.nightly.project.Project`: one method per
table, each error naming the file, the table (``[[configs]] #2``), the key and its line."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.formats.text_files import FORMATS
from evalplat.inputs.toml_lines import header_line, key_line
from evalplat.inputs.validation import CONCURRENCY_MAX, DEPTH_MAX
from evalplat.judging.spec import read_judge
from evalplat.nightly import project_values as values
from evalplat.nightly.day_rule import CONFIRMATION_KEYS, with_rule
from evalplat.nightly.project import (
    _ARRAYS,
    DEFAULT_FAIL_ON,
    DEFAULT_METRICS_FALLBACK,
    FAIL_ON,
    ConfigSpec,
    Project,
    TestSetSpec,
    is_online,
)
from evalplat.nightly.scopes import read_gate_testsets
from evalplat.store.testsets import ONLINE_TEST_SET


class Reader:
    def __init__(self, file: Path, text: str):
        self.file = file
        self.folder = file.resolve().parent
        self.lines = text.splitlines()

    def fail(
        self, problem: str, table: str | None = None, index: int = 0, key: str | None = None
    ) -> InputError:
        """An error naming the file, the table (and entry) and the key, at the key's line."""
        if table is None:
            return InputError(problem, path=self.file)
        array = table in _ARRAYS
        where = f"[[{table}]] #{index + 1}" if array else f"[{table}]"
        if key is not None:
            where += f" key '{key}'"
            line = key_line(self.lines, table, index, key)
        else:
            line = header_line(self.lines, table, index)
        return InputError(f"{where}: {problem}", path=self.file, line=line)

    def path(self, value: Any, what: str, table: str, index: int, key: str) -> Path:
        if not isinstance(value, str) or not value:
            raise self.fail(f"{what} must be a file path", table, index, key)
        if "\x00" in value:
            raise self.fail(f"{what} must be a file path (it holds a NUL character)", table,
                            index, key)  # fmt: skip
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
            "segments",
            "judges",
            "targets",
            "nightly",
            "online",
            "events",
            "sweeps",
        }
        for key in data:
            if key not in known:
                raise self.fail(f"unknown table; expected one of: {', '.join(sorted(known))}", key)
        testsets = tuple(self.testset(t, i) for i, t in enumerate(self.tables(data, "testsets")))
        names = [t.name for t in testsets]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise self.fail(f"test set '{name}' is defined twice", "testsets", i, "name")
        configs = tuple(
            self.config(c, i, set(names)) for i, c in enumerate(self.tables(data, "configs"))
        )
        config_names = [c.name for c in configs]
        for i, name in enumerate(config_names):
            if config_names.index(name) != i:
                raise self.fail(f"config '{name}' is defined twice", "configs", i, "name")
        for i, spec in enumerate(configs):
            if spec.compare_to is not None and spec.compare_to not in config_names:
                raise self.fail(
                    f"config '{spec.name}': compare_to names '{spec.compare_to}', "
                    "which is not a config of this project",
                    "configs",
                    i,
                    "compare_to",
                )
        metrics = self.metrics(data.get("metrics", {}))
        judges = tuple(
            read_judge(j, self.folder, partial(self.judge_fail, i))
            for i, j in enumerate(self.tables(data, "judges"))
        )
        judge_names = [j.name for j in judges]
        for i, name in enumerate(judge_names):
            if judge_names.index(name) != i:
                raise self.fail(f"judge '{name}' is defined twice", "judges", i, "name")
        nightly_judge, judge_budget = self.nightly(data.get("nightly", {}), judge_names)
        default_judge = nightly_judge or (judge_names[0] if len(judge_names) == 1 else None)
        from evalplat.nightly.project_gates import read_gate

        gates = tuple(
            read_gate(g, i, self.fail, judge_names, default_judge)
            for i, g in enumerate(self.tables(data, "gates"))
        )
        from evalplat.nightly.project_alerts import read_alerts

        alerts = read_alerts(self.tables(data, "alerts"), self.fail, self.path)
        from evalplat.nightly.project_targets import read_target

        targets = tuple(
            read_target(t, i, self.fail, set(config_names), set(names))
            for i, t in enumerate(self.tables(data, "targets"))
        )
        for key, allowed in (
            ("database", {"url"}),
            ("reports", {"dir", "base_url"}),
            ("retention", {"keep_results_days"}),
            ("segments", {"min_queries"}),
        ):
            table = data.get(key, {})
            if not isinstance(table, dict):
                raise self.fail("must be a table", key)
            for name in table:
                if name not in allowed:
                    raise self.fail(
                        f"unknown key; expected one of: {', '.join(sorted(allowed))}", key, 0, name
                    )
        reports = data.get("reports", {})
        retention = data.get("retention", {})
        keep = retention.get("keep_results_days")
        if keep is not None:
            values.whole(keep, self.fail, "retention", 0, "keep_results_days", minimum=1,
                  maximum=values.DAYS_MAX, unit="of days")  # fmt: skip
        min_queries = values.whole(data.get("segments", {}).get("min_queries", 20), self.fail,
                            "segments", 0, "min_queries", minimum=1, unit="of queries")  # fmt: skip
        base_url = reports.get("base_url")
        if base_url is not None and (
            not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))
        ):
            raise self.fail(
                'must be an http(s) URL, e.g. "https://search.example.com/evalplat/"',
                "reports",
                0,
                "base_url",
            )
        database = data.get("database", {})
        url = database.get("url")
        if url is not None and not isinstance(url, str):
            raise self.fail("must be a string", "database", 0, "url")
        if url is not None and ("://" not in url or "\x00" in url):
            raise self.fail('must be a database URL, e.g. "sqlite:///evalplat.db"', "database", 0,
                            "url")  # fmt: skip
        from evalplat.nightly.project_online import read_online

        online = read_online(data.get("online"), self.fail, set(config_names), metrics, gates)
        if online is not None:  # an online gate without a rule of its own takes [online]'s
            gates = tuple(
                gate
                if not is_online(gate.metric) or CONFIRMATION_KEYS & set(table)
                else with_rule(gate, online.day_rule)
                for gate, table in zip(gates, self.tables(data, "gates"), strict=True)
            )
        from evalplat.events.warehouse import read_warehouse

        events = read_warehouse(data.get("events"), self.fail)
        from evalplat.nightly.project_sweeps import read_sweeps

        sweeps = read_sweeps(self.tables(data, "sweeps"), self.fail, configs)
        return Project(
            path=self.file,
            database_url=url,
            testsets=testsets,
            configs=configs,
            metrics=metrics,
            gates=gates,
            alerts=alerts,
            reports_dir=self.path(reports.get("dir", "reports"), "dir", "reports", 0, "dir"),
            keep_results_days=keep,
            reports_base_url=base_url,
            min_segment_queries=min_queries,
            judges=judges,
            targets=targets,
            nightly_judge=nightly_judge,
            judge_budget=judge_budget,
            fail_on=self.fail_on(data.get("nightly", {})),
            online=online,
            events=events,
            gate_testsets=read_gate_testsets(data, gates, set(names), self.fail),
            sweeps=sweeps,
        )

    def tables(self, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail("must be an array of tables", key)
        return value

    def string(
        self, table: dict[str, Any], key: str, where: str, index: int, required: bool = True
    ) -> str | None:
        value = table.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f'needs {key} = "..." (a non-empty string)', where, index, key)
        return value

    def testset(self, table: dict[str, Any], index: int) -> TestSetSpec:
        self.only(table, {"name", "qrels", "queries", "docs", "format", "gains"}, "testsets", index)
        name = self.string(table, "name", "testsets", index)
        if name is not None and name.strip() == ONLINE_TEST_SET:
            raise self.fail(
                f"test set name '{name}' is reserved for online runs scored from events",
                "testsets", index, "name",
            )  # fmt: skip
        if name is not None:
            name = self.name(name, "test set", "testsets", index)
        kind = table.get("format")
        if kind is not None and (not isinstance(kind, str) or kind.strip().lower() not in FORMATS):
            raise self.fail(f"must be one of {', '.join(FORMATS)}", "testsets", index, "format")
        assert_str = name or ""
        gains: tuple[tuple[int, int | float], ...] = ()
        if "gains" in table:
            from evalplat.metrics.model import gain_map

            value = table["gains"]
            if not isinstance(value, dict):
                raise self.fail(
                    "must be a table of grade = gain, e.g. { 0 = 0, 1 = 1, 2 = 3 }",
                    "testsets",
                    index,
                    "gains",
                )
            try:
                gains = gain_map("gains", value)
            except InputError as error:
                raise self.fail(error.problem, "testsets", index, "gains") from None
        return TestSetSpec(
            name=assert_str,
            qrels=self.path(
                table.get("qrels"), f"test set '{name}' qrels", "testsets", index, "qrels"
            ),
            queries=None
            if table.get("queries") is None
            else self.path(table["queries"], "queries", "testsets", index, "queries"),
            docs=None
            if table.get("docs") is None
            else self.path(table["docs"], "docs", "testsets", index, "docs"),
            format=self.string(table, "format", "testsets", index, required=False),
            gains=gains,
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
        name = self.name(self.string(table, "name", "configs", index) or "", "config", "configs",
                         index)  # fmt: skip
        searcher = self.string(table, "searcher", "configs", index) or ""
        wanted = table.get("testsets", sorted(testsets))
        if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
            raise self.fail(
                f"config '{name}': must be a list of names", "configs", index, "testsets"
            )
        for t in wanted:
            if t not in testsets:
                raise self.fail(
                    f"config '{name}' names test set '{t}', which is not defined in [[testsets]]",
                    "configs",
                    index,
                    "testsets",
                )
        params = table.get("params", {})
        if not isinstance(params, dict):
            raise self.fail(f"config '{name}': must be a table", "configs", index, "params")
        prefix = f"config '{name}': "
        depth = values.whole(table.get("depth", 100), self.fail, "configs", index, "depth",
                             minimum=1, maximum=DEPTH_MAX, prefix=prefix)  # fmt: skip
        concurrency = values.whole(table.get("concurrency", 4), self.fail, "configs", index,
                            "concurrency", minimum=1, maximum=CONCURRENCY_MAX,
                            prefix=prefix)  # fmt: skip
        given_label = self.string(table, "label", "configs", index, required=False)
        compare_to = self.string(table, "compare_to", "configs", index, required=False)
        return ConfigSpec(
            name=name,
            searcher=searcher,
            testsets=tuple(wanted),
            params=params,
            label=None
            if given_label is None
            else values.label(given_label, self.fail, "configs", index, "label"),
            depth=depth,
            concurrency=concurrency,
            compare_to=compare_to,
        )

    def metrics(self, table: Any) -> tuple[str, ...]:
        if not isinstance(table, dict):
            raise self.fail("must be a table with names = [...]", "metrics")
        for key in table:
            if key != "names":
                raise self.fail("unknown key; expected: names", "metrics", 0, key)
        names = table.get("names")
        if names is None:
            return DEFAULT_METRICS_FALLBACK
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail("must be a non-empty list of metric names", "metrics", 0, "names")
        from evalplat.metrics import parse

        try:
            return tuple(str(parse(n)) for n in names)
        except InputError as error:
            raise self.fail(str(error), "metrics", 0, "names") from None

    def nightly(self, table: Any, judges: list[str]) -> tuple[str | None, int]:
        """``[nightly]``: the judge that grades the night's new unjudged documents, and its
        budget of requests a night."""
        if not isinstance(table, dict):
            raise self.fail("must be a table", "nightly")
        for key in table:
            if key not in ("judge", "judge_budget", "fail_on"):
                raise self.fail("unknown key; expected one of: fail_on, judge, judge_budget",
                                "nightly", 0, key)  # fmt: skip
        judge = table.get("judge")
        if judge is not None and (not isinstance(judge, str) or judge not in judges):
            known = ", ".join(judges) or "none"
            raise self.fail(f"no judge named {judge!r} in [[judges]] (known: {known})",
                            "nightly", 0, "judge")  # fmt: skip
        budget = table.get("judge_budget", 200)
        if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= 10**7:
            raise self.fail("must be a whole number of requests from 0 to 10,000,000", "nightly",
                            0, "judge_budget")  # fmt: skip
        return judge, budget

    def fail_on(self, table: Any) -> tuple[str, ...]:
        """``[nightly] fail_on``: what makes the night exit non-zero (``FAIL_ON``)."""
        if not isinstance(table, dict) or "fail_on" not in table:
            return DEFAULT_FAIL_ON
        chosen = table["fail_on"]
        if not isinstance(chosen, list) or any(c not in FAIL_ON for c in chosen):
            raise self.fail(f"must be a list of some of: {', '.join(map(repr, FAIL_ON))}",
                            "nightly", 0, "fail_on")  # fmt: skip
        return tuple(dict.fromkeys(chosen))

    def name(self, value: str, what: str, table: str, index: int) -> str:
        return values.name(value, what, self.fail, table, index, "name")

    def judge_fail(self, index: int, problem: str, key: str | None) -> InputError:
        return self.fail(problem, "judges", index, key)

    def only(self, table: dict[str, Any], allowed: set[str], where: str, index: int) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(
                    f"unknown key; expected one of: {', '.join(sorted(allowed))}",
                    where,
                    index,
                    key,
                )
