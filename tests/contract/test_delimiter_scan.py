"""The fast reader's scan for empty fields finds a two-byte whitespace pattern exactly where a
plain search does, wherever the file's chunks end; and a file read through the one mapping
of its text gives the columns of the reference pass."""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.formats import trec, trec_arrow

PATTERNS = (b"  ", b"\n ", b"\r ", b" \n", b" \r")
texts = st.binary(max_size=40).map(lambda raw: bytes(b" \t\n\r\x00!a"[b % 7] for b in raw))


@settings(max_examples=400, derandomize=True, database=None)
@given(text=texts, chunk=st.integers(min_value=1, max_value=9))
def test_the_scan_finds_a_pattern_exactly_where_a_search_does(text: bytes, chunk: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trec_arrow, "_SCAN_BYTES", chunk)  # chunks of a few bytes: every boundary
        found = trec_arrow._has_any(text, PATTERNS)  # type: ignore[arg-type]
    assert found == any(pattern in text for pattern in PATTERNS)


def test_a_run_read_through_its_mapping_equals_the_reference_pass(tmp_path: Path) -> None:
    lines = [f"q{q} Q0 d{(q * 7 + r) % 50} {r} {10 - r / 4:.2f} tag" for q in range(30)
             for r in range(1, 21)]  # fmt: skip
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    fast = trec_arrow.read_delimited(path, trec.RUN_FIELDS, trec._RUN_KEEP, exact=False)
    slow = trec._read_slow(path, trec.RUN_FIELDS, trec._RUN_KEEP, exact=False)
    assert fast.to_pydict() == slow.to_pydict()


def test_an_empty_field_still_goes_to_the_next_tier_and_the_map_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.0 tag\nq1 Q0 d2  1.0 tag\n")  # a doubled delimiter, rank empty
    maps: list[mmap.mmap] = []
    mapped = trec_arrow._mapped

    def remember(source: Path) -> mmap.mmap:
        maps.append(mapped(source))
        return maps[-1]

    monkeypatch.setattr(trec_arrow, "_mapped", remember)
    with pytest.raises(trec_arrow.FastPathFailed):
        trec_arrow.read_delimited(path, trec.RUN_FIELDS, trec._RUN_KEEP, exact=False)
    assert maps and all(text.closed for text in maps)
