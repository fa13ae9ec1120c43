"""docs/adding-a-measure.md runs as written: its module and script, in a fresh interpreter.

A fresh process keeps the registration out of this one's registry. The page states what the
script prints; the test holds it to that.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = REPO_ROOT / "docs" / "adding-a-measure.md"


def test_the_example_registers_computes_and_compares_a_new_measure(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    files = re.findall(r"^```python\n# (\S+\.py)\n(.*?)^```$", text, flags=re.S | re.M)
    assert [name for name, _ in files] == ["slow_measures.py", "example.py"]
    for name, body in files:
        (tmp_path / name).write_text(body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["0.0 0.5", "0.5 False"]
    assert "It prints `0.0 0.5`, then `0.5 False`" in text


def test_the_page_lists_every_field_of_the_model() -> None:
    from dataclasses import fields

    from evalplat.metrics.model import Measure

    text = PAGE.read_text(encoding="utf-8")
    table = text.split("## In evalplat itself")[0]
    described = set(re.findall(r"`([a-z_]+)`", table))
    internal = {"compute", "trec_name", "trec_name_no_cutoff", "bounded", "value_unit"}
    assert {f.name for f in fields(Measure)} - internal <= described
