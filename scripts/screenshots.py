"""Regenerate docs/screenshots/*.png: the comparison and history pages on the Cranfield set.

Builds a throw-away SQLite database: imports the bundled Cranfield test set, runs the builtin
engine with the porter tokenizer (twice, as two nights) and with unicode61 (no stemming), compares
them, writes the report site and photographs two of its pages with Debian's chromium driven by
Playwright (``pip install playwright``; the browser is /usr/bin/chromium, never downloaded).

    python scripts/screenshots.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def build_site(workdir: Path) -> Path:
    """Runs, comparisons and the report site in ``workdir``; returns the site's index.html."""
    from evalplat.reports import render_site
    from evalplat.resources import bundled_testset
    from evalplat.running import runner
    from evalplat.store import Store
    from evalplat.testsets.content import load_testset

    folder = bundled_testset("cranfield")
    content = load_testset(
        folder / "qrels.txt", queries=folder / "queries.tsv", docs=folder / "docs.jsonl"
    )
    with Store.init(f"sqlite:///{workdir / 'evalplat.db'}") as store:
        store.import_test_set("cranfield", content)
        settings = runner.RunSettings(depth=100, concurrency=2, cache_dir=workdir / "cache")
        store.add_config("docs-bm25", "builtin", {"tokenizer": "porter"}, label="porter")
        nights = [runner.run(store, "docs-bm25", "cranfield", settings=settings,
                             trigger="nightly") for _ in range(3)]  # fmt: skip
        store.add_config("docs-bm25", "builtin", {"tokenizer": "unicode61"}, label="unicode61")
        nights += [runner.run(store, "docs-bm25", "cranfield", settings=settings,
                              trigger="nightly") for _ in range(2)]  # fmt: skip
        _one_run_a_night(store, [night.id for night in nights])
        store.set_baseline("docs-bm25", nights[0].id)
        for night in nights[1:]:
            store.compare_runs(nights[0].id, night.id)
        return render_site(store, workdir / "site")


def _one_run_a_night(store: Any, run_ids: list[int]) -> None:
    """Date the runs (made seconds apart) at 03:00 UTC on consecutive nights up to last
    night, as a nightly job would have, so the history page reads as it does in use."""
    from datetime import UTC, datetime, time, timedelta

    from sqlalchemy import update

    from evalplat.db.models import Run

    last = datetime.combine(datetime.now(UTC).date(), time(3, tzinfo=UTC))
    with store.session() as session:
        for back, run_id in enumerate(reversed(run_ids)):
            night = last - timedelta(days=back)
            session.execute(
                update(Run)
                .where(Run.id == run_id)
                .values(started_at=night, finished_at=night + timedelta(minutes=2))
            )


def photograph(index: Path, out_dir: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    site = index.parent
    pages = {
        "comparison.png": next(iter(sorted((site / "compare").glob("*.html")))),
        "history.png": next(iter(sorted((site / "history").glob("*.html")))),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1500}, device_scale_factor=1)
        for name, html in pages.items():
            page.goto(html.as_uri())
            target = out_dir / name
            page.screenshot(path=str(target), full_page=False)
            written.append(target)
        browser.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        index = build_site(args.keep)
        paths = photograph(index, ROOT / "docs" / "screenshots")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            index = build_site(Path(tmp))
            paths = photograph(index, ROOT / "docs" / "screenshots")
    for path in paths:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
