"""``evalplat metrics list``: the metric registry, the single source of metric names."""

from __future__ import annotations

import typer

from evalplat.cli.common import JsonOption, print_json
from evalplat.metrics.registry import DEFAULT_METRICS, FAMILIES

app = typer.Typer(help="Metrics: names, parameters and formulas.", no_args_is_help=True)


@app.command("list")
def list_metrics(json_output: JsonOption = False) -> None:
    """List every metric with its parameters, direction, inputs, aggregate and formula."""
    rows = [
        {
            "name": spec.name,
            "syntax": _syntax(spec.name, spec.cutoff, spec.params),
            "aliases": list(spec.aliases),
            "params": list(spec.params),
            "cutoff": spec.cutoff,
            "higher_is_better": spec.higher_is_better,
            "direction": _direction(spec.higher_is_better, spec.gateable),
            "gateable": spec.gateable,
            "inputs": list(spec.inputs),
            "unit": spec.unit,
            "aggregate": spec.aggregate,
            "test": spec.test,
            "value_unit": spec.value_unit or None,
            "trec_eval": spec.trec_name_no_cutoff or spec.trec_name,
            "description": spec.description,
            "formula": spec.formula,
            "default": any(m.split("@")[0] == spec.name for m in DEFAULT_METRICS),
        }
        for spec in FAMILIES.values()
    ]
    if json_output:
        print_json(rows)
        return
    width = max(len(str(r["syntax"])) for r in rows)
    for row in rows:
        aliases = f" (alias {', '.join(row['aliases'])})" if row["aliases"] else ""  # type: ignore[arg-type]
        typer.echo(
            f"{row['syntax']!s:<{width}}  {row['description']}{aliases}  [{row['direction']}]"
        )
    typer.echo(f"\nDefault set: {', '.join(DEFAULT_METRICS)}")


def _direction(higher_is_better: bool, gateable: bool) -> str:
    if not gateable:
        return "informational"
    return "higher is better" if higher_is_better else "lower is better"


def _syntax(name: str, cutoff: str, params: tuple[str, ...]) -> str:
    text = name
    if params:
        text += "(" + ",".join(f"{p}=" for p in params) + ")"
    if cutoff == "required":
        text += "@k"
    elif cutoff == "optional":
        text += "[@k]"
    return text
