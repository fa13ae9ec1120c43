"""``events attach --max-invalid N``: bad rows of a file read in place are left out of every
reading and listed next to it; the hit-list and time checks of an import apply to its rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalplat.errors import InputError
from evalplat.store import Store

from .logs import table_counts

DAY = 1772359200000  # 2026-03-01T10:00:00Z in epoch milliseconds


def _searches(path: Path) -> Path:
    """Five searches of one arm: rows 2 to 4 are bad (a null hit, a hit shown twice, a time
    after 9999-12-30)."""
    pq.write_table(pa.table({
        "query_id": ["a", "b", "c", "d", "e"],
        "session_id": ["s1", "s2", "s3", "s4", "s5"],
        "timestamp": pa.array([DAY, DAY, DAY, 10**15, DAY + 1], pa.int64()),
        "config": ["web"] * 5,
        "hit_ids": [["d1", "d2"], ["d1", None], ["d1", "d2", "d1"], ["d1"], []],
    }), path)  # fmt: skip
    return path


def test_bad_rows_within_the_limit_are_left_out(store: Store, tmp_path: Path) -> None:
    store.add_config("web", "builtin")
    path = _searches(tmp_path / "searches.parquet")
    with pytest.raises(InputError, match=r"row 2: a hit id is null \(every position"):
        store.attach_events([path])
    with pytest.raises(InputError, match=r"row 2: .* \(3 bad rows, more than --max-invalid 2;"):
        store.attach_events([path], max_invalid=2)
    assert store.event_attachments() == []
    assert not (tmp_path / "searches.parquet.rejects.jsonl").exists()
    [attached] = store.attach_events([path], max_invalid=3)
    assert (attached.searches, attached.rejected) == (2, 3)
    assert attached.rejects_file == str(tmp_path / "searches.parquet.rejects.jsonl")
    found = [json.loads(line) for line in Path(attached.rejects_file).read_text().splitlines()]
    assert [(r["line"], r["reason"][:30]) for r in found] == [
        (2, "a hit id is null (every positi"),
        (3, "a hit id is shown twice in one"),
        (4, "timestamp is out of range (197"),
    ]  # fmt: skip
    [(_, scores)] = store.online_scores(metrics=["online:ZeroResult"])
    assert (scores.sessions, scores.searches) == (2, 2)  # rows 1 and 5 only
    assert scores.means["online:ZeroResult"][0] == pytest.approx(0.5)


def test_cli_attach_summary_and_refusal(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.add_config("web", "builtin")
    path = _searches(tmp_path / "searches.parquet")
    before = table_counts(db_url)
    result = cli("events", "attach", str(path), "--max-invalid", "1", "--db", db_url)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert table_counts(db_url) == before
    result = cli("events", "attach", str(path), "--max-invalid", "3", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"left out: 3 bad rows, listed in {tmp_path / 'searches.parquet.rejects.jsonl'}"
    )
