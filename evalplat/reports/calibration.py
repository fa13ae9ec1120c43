"""The calibration page of a judge: how far its grades agree with the team's raters.

``calibration_html`` renders the record that ``evalplat judge calibrate --json`` prints (a
mapping, so this layer needs nothing from the judging package): the verdict on gating first,
then per human source the agreement figures, the confusion matrix with its diagonal marked,
the bias per grade, and the recent comparisons replayed with the model's grades. Pure and
deterministic; every text from the user or the model is escaped by the template.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def calibration_html(record: Mapping[str, Any]) -> str:
    """The page's HTML (pure)."""
    from evalplat.reports.render import _render

    return _render("calibration.html", None, c=record)


def render_calibration(record: Mapping[str, Any], out: str | Path) -> Path:
    """Write the calibration page of ``record`` to ``out``."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(calibration_html(record), encoding="utf-8")
    return path
