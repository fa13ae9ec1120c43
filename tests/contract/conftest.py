"""Print how many inputs the bad-input suite tried per reader (``fuzzkit.TRIED``)."""

from __future__ import annotations

import pytest

from .fuzzkit import TRIED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TRIED:
        return
    terminalreporter.write_sep("-", f"bad inputs tried: {sum(TRIED.values())}")
    for reader, count in sorted(TRIED.items()):
        terminalreporter.write_line(f"{count:6d}  {reader}")
