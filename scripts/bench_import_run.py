"""Benchmark ``evalplat import-run`` of a 1M-line run file beside Y = ``evalplat evaluate``.

The test set of ``bench_store.py`` (10,000 queries, about 100 judgments each) is imported once
into a template database per tree and backend (by that tree's code: each migrates its own
schema); a TREC run file of 10,000 queries x 100 results is written next to it. Each repeat
then runs, as fresh processes and for every source tree given with ``--source`` in turn
(alternating, so a change in the machine's load weighs on each alike):

- **Y**: ``evalplat evaluate --qrels QRELS --run RUN`` (the same file, no database);
- **import-run** into a fresh copy of each template (SQLite: a copy of the file; PostgreSQL:
  ``CREATE DATABASE ... TEMPLATE``), with the default metrics.

It prints, per tree and backend, the medians of wall time and CPU time (user + system) and the
ratio of the import's wall time to Y's, with the load average at the start and the end. Run
from the repository root::

    python scripts/bench_import_run.py --folder /tmp/bir --source /path/to/main --source . \\
        --postgres postgresql+psycopg://root@127.0.0.1:5432/test --repeat 3

The folder keeps the generated files between calls; PostgreSQL's databases are dropped at the
end. Each ``--source`` is put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

QUERIES = 10_000
DEPTH = 100


def write_run(path: Path, queries: int, seed: int = 1) -> None:
    """A run over the qrels' document pool (``bench_store.outcomes``) as a TREC run file."""
    from bench_store import outcomes  # scripts/bench_store.py

    with path.open("w", encoding="utf-8") as handle:
        for outcome in outcomes(queries, seed):
            handle.write(
                "".join(
                    f"{outcome.query_id} Q0 {doc} {rank} {score} bench\n"
                    for rank, (doc, score) in enumerate(outcome.hits, start=1)
                )
            )


def prepare(folder: Path, queries: int) -> tuple[Path, Path, Path]:
    """The qrels, queries and run files in ``folder`` (written once)."""
    from bench_store import generate  # scripts/bench_store.py

    qrels, topics, run = folder / "qrels.txt", folder / "queries.tsv", folder / "run.txt"
    if not run.exists():
        folder.mkdir(parents=True, exist_ok=True)
        generate(folder, queries)
        write_run(run, queries)
    return qrels, topics, run


def import_test_set(url: str, qrels: Path, topics: Path) -> None:
    from evalplat.store import Store
    from evalplat.testsets.content import load_testset

    store = Store.init(url)
    store.import_test_set("bench", load_testset(qrels, queries=topics))
    store.close()


def _admin(url: str, statement: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(statement))
    engine.dispose()


def _database_url(admin_url: str, name: str) -> str:
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def timed(source: Path, arguments: list[str]) -> tuple[float, float]:
    """(wall time, CPU time: user + system) of one evalplat command as a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(source))
    command = [sys.executable, "-c", "from evalplat.__main__ import main; main()", *arguments]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env, cwd=scratch)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def make_template(source: Path, url: str, qrels: Path, topics: Path) -> None:
    """Import the test set into ``url`` with the code of ``source`` (its own schema)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), str(Path(__file__).parent)]))
    code = (
        "import sys; from pathlib import Path; from bench_import_run import import_test_set; "
        "import_test_set(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))"
    )
    # from the scripts folder: a working directory holding another tree would shadow it
    command = [sys.executable, "-c", code, url, str(qrels), str(topics)]
    subprocess.run(command, check=True, env=env, cwd=Path(__file__).parent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="keeps the generated files")
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--source", action="append", type=Path, help="source tree, repeatable")
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to test too")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = args.folder.resolve()
    qrels, topics, run = prepare(folder, args.queries)
    sources = [s.resolve() for s in args.source or [Path(".")]]
    # one template per tree and backend: each tree's code migrates its own schema
    templates: dict[tuple[Path, str], str] = {}
    backends = ([] if args.no_sqlite else ["SQLite"]) + (["PostgreSQL"] if args.postgres else [])
    created: list[str] = []
    for number, source in enumerate(sources):
        if "SQLite" in backends:
            template = folder / f"template{number}.db"
            template.unlink(missing_ok=True)
            make_template(source, f"sqlite:///{template}", qrels, topics)
            templates[(source, "SQLite")] = str(template)
        if "PostgreSQL" in backends:
            name = f"evalplat_bir_{uuid.uuid4().hex[:8]}"
            _admin(args.postgres, f'CREATE DATABASE "{name}"')
            created.append(name)
            make_template(source, _database_url(args.postgres, name), qrels, topics)
            templates[(source, "PostgreSQL")] = name
    print(f"load average at start: {os.getloadavg()}", flush=True)
    timings: dict[tuple[Path, str], list[tuple[float, float]]] = {}
    evaluate = ["evaluate", "--qrels", str(qrels), "--run", str(run)]
    try:
        for _ in range(args.repeat):
            for source in sources:
                timings.setdefault((source, "Y"), []).append(timed(source, evaluate))
                for backend in backends:
                    template = templates[(source, backend)]
                    if backend == "SQLite":
                        copy = folder / "import.db"
                        shutil.copyfile(template, copy)
                        url = f"sqlite:///{copy}"
                    else:
                        fresh = f"evalplat_bir_{uuid.uuid4().hex[:8]}"
                        _admin(args.postgres, f'CREATE DATABASE "{fresh}" TEMPLATE "{template}"')
                        created.append(fresh)
                        url = _database_url(args.postgres, fresh)
                    command = ["import-run", str(run), "--config", "imported"]
                    command += ["--testset", "bench", "--db", url]
                    timings.setdefault((source, backend), []).append(timed(source, command))
                    if backend != "SQLite":
                        _admin(args.postgres, f'DROP DATABASE "{created.pop()}" WITH (FORCE)')
            print(f"load average: {os.getloadavg()}", flush=True)
    finally:
        for name in created:
            _admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"{'tree':<40}{'what':<12}{'wall s':>8}{'CPU s':>8}{'x Y':>7}  runs (wall/CPU)")
    for source in sources:
        y = statistics.median(w for w, _ in timings[(source, "Y")])
        for what in ["Y", *backends]:
            runs = timings[(source, what)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            each = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in runs)
            print(f"{source!s:<40}{what:<12}{wall:>8.2f}{cpu:>8.2f}{wall / y:>7.2f}  {each}")


if __name__ == "__main__":
    main()
