"""Benchmark a whole ``evalplat nightly``: N configs over a Q-query test set, run-file searchers.

Each config is a ``python`` searcher that answers from a TREC run file of its own
(``bench_runfile_searcher.py``: each run file is turned into a ``marshal`` file of rankings
before the first night; in a night the searcher reads that file once, then every query is a
dictionary lookup), so the night measures evalplat, not a search engine. The searcher's own
reading of its files is timed inside the night and printed beside it. The test set is the one of
``bench_store.py`` (100 judgments per query, grades 0-3); each run file holds ``DEPTH`` results
per query, about half of them judged. The project writes its reports (one page per config).

Night 1 imports the test set and stores every config's first run (each becomes its config's
baseline); night 2, the one a team lives with, runs every config again, compares each run with
its baseline and writes the reports. With ``--nights 3`` or more, the later nights also log the
change since the previous night and keep the older run pages. Each night is timed as a fresh
process (``evalplat nightly --project``), wall and CPU time (user + system, the steadier figure
on a shared machine), printed beside the yardsticks of issue 32, and the report site's share of
it (``render_site`` timed inside the night's process). Run from the repository root::

    python scripts/bench_nightly.py [--configs 20] [--queries 10000] [--nights 2]
        [--postgres postgresql+psycopg://root@127.0.0.1:5432/postgres] [--keep DIR]

Not part of the test suite. With ``--postgres`` the database is a scratch one created on that
server and dropped afterwards; otherwise an SQLite file in a temporary folder, or in ``--keep``
(kept, with the run files, project and site, to profile a step again).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from bench_runfile_searcher import prepare  # scripts/bench_runfile_searcher.py
from bench_store import DOC_POOL, generate  # scripts/bench_store.py

DEPTH = 100
HERE = Path(__file__).resolve().parent
# issue 32, 20 configs x 10,000 queries on SQLite, before the night was made proportional
YARDSTICK = {1: "before: 183 s", 2: "before: 259 s wall, 271 s CPU; goal <= 60 s"}


def write_run(path: Path, queries: int, seed: int) -> None:
    """A TREC run file: per query ``DEPTH`` distinct documents, half from the judged pool."""
    rng = np.random.default_rng(seed)
    judged = np.random.default_rng(7).integers(0, DOC_POOL, size=(queries, 100))
    with path.open("w", encoding="utf-8") as handle:
        for q in range(queries):
            pool = np.concatenate([judged[q][:50], rng.integers(0, DOC_POOL, size=80)])
            docs = list(dict.fromkeys(rng.permutation(pool).tolist()))[:DEPTH]
            lines = (f"q{q} Q0 doc{d} {r + 1} {DEPTH - r} run{seed}\n" for r, d in enumerate(docs))
            handle.write("".join(lines))


def project(folder: Path, url: str, configs: int) -> Path:
    lines = [
        "[database]",
        f'url = "{url}"',
        "",
        "[[testsets]]",
        'name = "bench"',
        f'qrels = "{folder / "qrels.txt"}"',
        f'queries = "{folder / "queries.tsv"}"',
        "",
        "[reports]",
        f'dir = "{folder / "reports"}"',
    ]
    for c in range(configs):
        lines += [
            "",
            "[[configs]]",
            f'name = "config{c:02d}"',
            'searcher = "python"',
            'testsets = ["bench"]',
            "[configs.params]",
            'function = "bench_runfile_searcher:search"',
            f'path = "{HERE}"',
            f'rankings = "{folder / f"run{c:02d}.marshal"}"',
        ]
    path = folder / "evalplat.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The night's command, with the report site timed where the night calls it (wall, and CPU of
# the process and of the one that renders the health pages beside it) and the two figures
# written to stderr for ``night`` to pick up.
NIGHT = """
import resource, sys, time
import evalplat.reports as reports
from evalplat.cli import main

def _cpu():
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime

def timed(*args, _site=reports.render_site, **kwargs):
    wall, cpu = time.perf_counter(), _cpu()
    try:
        return _site(*args, **kwargs)
    finally:
        took = (time.perf_counter() - wall, _cpu() - cpu)
        print("bench-site %.3f %.3f" % took, file=sys.stderr)

reports.render_site = timed
main()
"""


def night(project_file: Path) -> tuple[float, float, tuple[float, float] | None, float]:
    """Wall and CPU time of one night, of its report site (None when not written), and the
    seconds the searchers spent reading their rankings."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-c", NIGHT, "nightly"]
    done = subprocess.run(
        [*command, "--project", str(project_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # 1: a regression alert, a night's ordinary outcome; but a crash exits 1 too
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        raise SystemExit(f"nightly exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    site, loading = None, 0.0
    for line in done.stderr.splitlines():
        if line.startswith("bench-site "):
            site = (float(line.split()[1]), float(line.split()[2]))
        elif line.startswith("bench-searcher-load "):
            loading = float(line.split()[1])
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, site, loading


def _label(number: int) -> str:
    if number == 1:
        return "night 1 (import, first runs)"
    if number == 2:
        return "night 2 (runs, compare, report)"
    return f"night {number} (runs, compare, since previous, report)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=20)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--nights", type=int, default=2, help="nights to run (at least 2)")
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to use instead")
    parser.add_argument("--keep", help="an empty folder to work in and keep (default: temporary)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.keep:
            folder = Path(args.keep).resolve()
            folder.mkdir(parents=True, exist_ok=True)
            if any(folder.iterdir()):
                raise SystemExit(f"--keep {args.keep}: the folder is not empty")
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        generate(folder, args.queries)
        start = time.perf_counter()
        for c in range(args.configs):
            write_run(folder / f"run{c:02d}.txt", args.queries, seed=100 + c)
            prepare(str(folder / f"run{c:02d}.txt"), str(folder / "queries.tsv"),
                    str(folder / f"run{c:02d}.marshal"))  # fmt: skip
        took = time.perf_counter() - start
        print(f"{args.configs} run files and their rankings written in {took:.1f} s", flush=True)
        admin = database = None
        if args.postgres:
            from sqlalchemy import create_engine, text
            from sqlalchemy.engine import make_url

            database = f"evalplat_bench_{uuid.uuid4().hex[:8]}"
            admin = create_engine(args.postgres, isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{database}"'))
            url = make_url(args.postgres).set(database=database)
            rendered = url.render_as_string(hide_password=False)
        else:
            rendered = f"sqlite:///{folder / 'bench.db'}"
        try:
            subprocess.run(
                [sys.executable, "-c", "from evalplat.cli import main; main()", "init", "--db",
                 rendered], check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            file = project(folder, rendered, args.configs)
            for number in range(1, args.nights + 1):
                wall, cpu, site, loading = night(file)
                size = (args.configs, args.queries) == (20, 10_000) and not args.postgres
                yardstick = f"  ({YARDSTICK[number]})" if size and number in YARDSTICK else ""
                pages = "" if site is None else f"; site: wall {site[0]:.1f} s, CPU {site[1]:.1f} s"
                pages += f"; searchers reading their rankings: {loading:.1f} s"
                print(
                    f"{_label(number)}: {args.configs} configs x {args.queries:,} queries: wall "
                    f"{wall:.1f} s, CPU {cpu:.1f} s{pages}{yardstick}  "
                    f"(load average {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
        finally:
            if admin is not None:
                from sqlalchemy import text

                with admin.connect() as connection:
                    connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
                admin.dispose()


if __name__ == "__main__":
    main()
