"""Benchmark: ``evalplat.comparison.agreement.agreement`` at the size of a report site's page.

Run: ``python scripts/bench_agreement.py [--versions N] [--days N] [--metrics N] [--kpis N]
[--against REV] [--repeat N]``. Builds seeded inputs (every version online every day, so every
two versions are an A/B pair) and times ``agreement`` over every metric and KPI with 2000
bootstrap resamples. With ``--against REV`` it also loads ``agreement.py`` as it was at the git
revision REV and alternates the two, checking that both give the same rows, and prints each
run's figures side by side. Defaults: the demo's page (3 versions, 2 days, 8 metrics, 7 KPIs).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from evalplat.comparison import agreement as current

METRICS = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "nDCG@5", "P@5", "RR"]
KPIS = ["online:CTR", "online:CTR@3", "online:MRR", "online:Abandonment", "online:ZeroResult",
        "online:SessionSuccess", "online:Conversion"]  # fmt: skip


def _inputs(versions: int, days: int, metrics: int, kpis: int) -> tuple[pd.DataFrame, ...]:
    rng = np.random.default_rng(14)
    names = [f"v{n}@1" for n in range(versions)]
    offline = pd.DataFrame(
        [(v, m, float(rng.random())) for v in names for m in METRICS[:metrics]],
        columns=["version", "metric", "value"],
    )
    online = pd.DataFrame(
        [(v, f"2026-03-{d + 1:02d}", k, float(rng.random()), int(rng.integers(100, 1000)))
         for v in names for d in range(days) for k in KPIS[:kpis]],
        columns=["version", "day", "kpi", "value", "sessions"],
    )  # fmt: skip
    return offline, online


def _at(revision: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:evalplat/comparison/agreement.py"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "agreement_at_revision.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("agreement_at_revision", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load agreement.py at {revision}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _timed(module: ModuleType, offline: pd.DataFrame, online: pd.DataFrame) -> tuple[float, list]:
    start = time.perf_counter()
    rows = module.agreement(offline, online)
    return time.perf_counter() - start, [row.to_dict() for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--metrics", type=int, default=8, choices=range(1, len(METRICS) + 1))
    parser.add_argument("--kpis", type=int, default=7, choices=range(1, len(KPIS) + 1))
    parser.add_argument("--against", metavar="REV", help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    offline, online = _inputs(args.versions, args.days, args.metrics, args.kpis)
    other = _at(args.against) if args.against else None
    print(f"{args.versions} versions x {args.days} days, {args.metrics} metrics x {args.kpis} "
          f"KPIs, 2000 resamples")  # fmt: skip
    for _ in range(args.repeat):
        now, rows = _timed(current, offline, online)
        line = f"this tree {now:6.2f} s"
        if other is not None:
            then, before = _timed(other, offline, online)
            if before != rows:
                raise SystemExit("the two revisions give different rows")
            line += f"   {args.against} {then:6.2f} s   same rows"
        print(line)


if __name__ == "__main__":
    main()
