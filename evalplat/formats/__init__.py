"""Readers for the file formats evalplat accepts (TREC qrels and run files)."""

from __future__ import annotations

from evalplat.formats.trec import read_qrels, read_run

__all__ = ["read_qrels", "read_run"]
