"""Regenerate the generated parts of the docs from the code's registries.

    python scripts/gen_docs.py           # rewrite every generated block in docs/
    python scripts/gen_docs.py --check   # exit 1 and name the stale pages, write nothing

A generated block sits between ``<!-- BEGIN GENERATED: NAME -->`` and ``<!-- END GENERATED: NAME
-->`` in a page; everything outside the markers is hand-written and kept as it is. Sources:

- ``metrics`` (docs/metrics.md): the metric registry, ``evalplat.metrics.registry``;
- ``cli`` (docs/cli.md): the Typer app, every command with its help, arguments and options;
- ``searchers`` (docs/searchers.md): ``evalplat.searchers.SEARCHERS``;
- ``alert-channels`` (docs/alerts.md): ``evalplat.alerts.registry.CHANNEL_KINDS``.

What a registry does not hold (edge-case notes, parameter meanings) is kept here, keyed by metric
family or parameter name, so one place says it and the registry stays the source of names.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"

if str(REPO_ROOT) not in sys.path:  # run from a clone without installing the package
    sys.path.insert(0, str(REPO_ROOT))

# -- metrics ------------------------------------------------------------------------------------


def _syntax(name: str, cutoff: str, params: tuple[str, ...]) -> str:
    text = name
    if params:
        text += "(" + ",".join(f"{p}=…" for p in params) + ")"
    return text + {"required": "@k", "optional": "[@k]", "none": ""}[cutoff]


def _trec_eval(spec: Any) -> str:
    names = []
    if spec.trec_name is not None:
        example = spec.trec_name.format(k=10)
        option = example.rsplit("_", 1)[0] + ".10"
        names.append(f"`{spec.trec_name.format(k='k')}` (e.g. `-m {option}` prints `{example}`)")
    if spec.trec_name_no_cutoff is not None:
        names.append(f"`{spec.trec_name_no_cutoff}`")
    if spec.trec_name_params is not None:
        written = _trec_with_params(spec)
        names.append(f"`{written}` (with {', '.join(f'`{p}`' for p in spec.trec_params)})")
    return ", ".join(names) if names else "none"


def _trec_with_params(spec: Any) -> str:
    """The trec_eval name of a measure with parameters, its fields left as their names."""
    import re

    return re.sub(r"\{(\w+)(?::[^}]*)?\}", lambda m: f"<{m.group(1)}>", spec.trec_name_params)


def metrics_block() -> str:
    """One section per measure of the registry, from its declaration (the metric model)."""
    from evalplat.metrics.model import AGGREGATES, TESTS, UNITS
    from evalplat.metrics.registry import DEFAULT_METRICS, FAMILIES, PARAMS

    lines = [
        "| metric | syntax | aliases | direction | inputs | aggregate | verdict test | trec_eval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for spec in FAMILIES.values():
        aliases = ", ".join(f"`{a}`" for a in spec.aliases) or "—"
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        if not spec.gateable:
            direction = "informational"
        trec = spec.trec_name_no_cutoff or (spec.trec_name or "").format(k="k")
        trec = trec or (_trec_with_params(spec) if spec.trec_name_params else "—")
        syntax = _syntax(spec.name, spec.cutoff, spec.params)
        trec_cell = trec if trec == "—" else f"`{trec}`"
        anchor = spec.name.lower().replace(":", "")
        lines.append(
            f"| [{spec.name}](#{anchor}) | `{syntax}` | {aliases} | {direction} "
            f"| {', '.join(spec.inputs)} | {spec.aggregate} | {spec.test} | {trec_cell} |"
        )
    lines += ["", f"Default metric set: {', '.join(f'`{m}`' for m in DEFAULT_METRICS)}.", ""]
    for spec in FAMILIES.values():
        lines += [f"### {spec.name}", "", spec.description, ""]
        lines.append(f"- Syntax: `{_syntax(spec.name, spec.cutoff, spec.params)}`")
        lines.append(f"- Cutoff `@k`: {spec.cutoff}")
        if spec.aliases:
            lines.append(f"- Aliases: {', '.join(f'`{a}`' for a in spec.aliases)}")
        if spec.params:
            lines.append("- Parameters:")
            lines += [f"  - `{p}`: {PARAMS[p].help}" for p in spec.params]
        else:
            lines.append("- Parameters: none")
        lines.append(f"- trec_eval: {_trec_eval(spec)}")
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        gate = "can be gated" if spec.gateable else "never gated"
        if not spec.gateable:
            direction = "informational"
        bounds = "in [0, 1]" if spec.bounded else "unbounded"
        unit = f" ({spec.value_unit})" if spec.value_unit else ""
        lines.append(f"- Direction: {direction}; {gate}; values {bounds}{unit}")
        lines.append(f"- Inputs: {', '.join(spec.inputs)}; one value {UNITS[spec.unit]}")
        lines.append(f"- Aggregate: {AGGREGATES[spec.aggregate]}")
        lines.append(f"- Verdict: {TESTS[spec.test]}")
        lines += ["", "```text", spec.formula, "```", ""]
        if spec.notes:
            lines += ["Edge cases:", ""] + [f"- {note}" for note in spec.notes] + [""]
    return "\n".join(lines).rstrip() + "\n"


# -- command line -------------------------------------------------------------------------------


def _walk(
    command: Any, context: Any, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    yield path, command, context
    for name, sub in getattr(command, "commands", {}).items():
        if getattr(sub, "hidden", False):
            continue
        yield from _walk(sub, sub.context_class(sub, info_name=name, parent=context), (*path, name))


def cli_commands() -> list[tuple[tuple[str, ...], Any, Any]]:
    """(path, command, context) for the root and every command and sub-command, in app order."""
    from typer.main import get_command

    from evalplat.cli import app

    root = get_command(app)
    context = root.context_class(root, info_name="evalplat", **root.context_settings)
    return list(_walk(root, context, ()))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def cli_block() -> str:
    """Every command: usage, help text, and a table of its arguments and options."""
    commands = cli_commands()
    lines: list[str] = []
    leaves = [path for path, command, _ in commands if path and not hasattr(command, "commands")]
    lines += ["Commands:", ""]
    lines += [f"- [`evalplat {' '.join(p)}`](#{'evalplat-' + '-'.join(p)})" for p in leaves]
    lines.append("")
    for path, command, context in commands:
        title = " ".join(("evalplat", *path))
        lines += [f'<a id="{title.replace(" ", "-")}"></a>', "", f"## `{title}`", ""]
        usage = " ".join(command.collect_usage_pieces(context))
        lines += ["```text", f"{title} {usage}", "```", ""]
        lines += [(command.help or "").strip(), ""]
        params = [p for p in command.get_params(context) if not getattr(p, "hidden", False)]
        records = [(p, p.get_help_record(context)) for p in params]
        rows = [(p.param_type_name, r) for p, r in records if r is not None]
        if rows:
            lines += ["| | name | help |", "|---|---|---|"]
            for kind, (name, help_text) in rows:
                lines.append(f"| {kind} | `{_cell(name)}` | {_cell(help_text)} |")
            lines.append("")
        subcommands = getattr(command, "commands", {})
        if subcommands:
            lines.append("Sub-commands: " + ", ".join(
                f"[`{name}`](#{title.replace(' ', '-')}-{name})" for name in subcommands
            ))  # fmt: skip
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# -- searchers and alert channels ---------------------------------------------------------------


def _default(value: Any) -> str:
    if value is None:
        return "—"
    if value == "" or value == {} or value == []:
        return f"`{value!r}`"
    return f"`{value}`" if not isinstance(value, bool) else f"`{str(value).lower()}`"


def searchers_block() -> str:
    """The searcher kinds and the params each declares."""
    from evalplat.searchers import SEARCHERS

    lines = ["| kind | what it does |", "|---|---|"]
    lines += [f"| [`{k.name}`](#{k.name}) | {_cell(k.description)} |" for k in SEARCHERS.values()]
    lines.append("")
    for kind in SEARCHERS.values():
        lines += [f'<a id="{kind.name}"></a>', "", f"### `{kind.name}`", "", kind.description, ""]
        lines += ["| param | type | default | help |", "|---|---|---|---|"]
        for param in kind.params:
            default = "**required**" if param.required else _default(param.default)
            choices = f" One of: {', '.join(param.choices)}." if param.choices else ""
            lines.append(
                f"| `{param.name}` | {param.type} | {default} | {_cell(param.help)}{choices} |"
            )
        if kind.extra_params:
            lines += ["", "Any other param is passed to the function as a keyword argument."]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def alerts_block() -> str:
    """The alert channel types and their params."""
    from evalplat.alerts.base import COMMON_KEYS
    from evalplat.alerts.registry import CHANNEL_KINDS

    type_names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    type_names.update({dict: "table", list: "list"})
    lines = ["| type | what it does |", "|---|---|"]
    lines += [f"| `{k.name}` | {_cell(k.description)} |" for k in CHANNEL_KINDS.values()]
    lines += ["", f"Every table may also set: {', '.join(f'`{k}`' for k in COMMON_KEYS)}.", ""]
    for kind in CHANNEL_KINDS.values():
        lines += [f'### `type = "{kind.name}"`', "", kind.description, ""]
        lines += ["| param | type | default | help |", "|---|---|---|---|"]
        for param in kind.params:
            shown = [t for t in param.types if not (t is int and float in param.types)]
            types = " or ".join(type_names.get(t, t.__name__) for t in shown)
            default = "**required**" if param.required else _default(param.default)
            choices = f" One of: {', '.join(param.choices)}." if param.choices else ""
            choices += _param_range(param.minimum, param.above, param.maximum)
            lines.append(f"| `{param.name}` | {types} | {default} | {_cell(param.help)}{choices} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _param_range(minimum: float | None, above: float | None, maximum: float | None) -> str:
    """A number's range in words (`check_number`'s bounds), or nothing."""
    if minimum is not None and maximum is not None:
        return f"; from {minimum:g} to {maximum:g}"
    parts = [] if above is None else [f"more than {above:g}"]
    parts += [] if minimum is None else [f"at least {minimum:g}"]
    parts += [] if maximum is None else [f"at most {maximum:g}"]
    return f"; {', '.join(parts)}" if parts else ""


# -- pages --------------------------------------------------------------------------------------

BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "metrics": ("metrics.md", metrics_block),
    "cli": ("cli.md", cli_block),
    "searchers": ("searchers.md", searchers_block),
    "alert-channels": ("alerts.md", alerts_block),
}


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"


def render_page(page: str, text: str) -> str:
    """``text`` (the page as it is) with each of its generated blocks regenerated.

    Raises ``ValueError`` when a block's markers are missing, so a page that lost them is not
    silently left stale.
    """
    for name, (block_page, build) in BLOCKS.items():
        if block_page != page:
            continue
        begin, end = _markers(name)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), flags=re.S)
        if not pattern.search(text):
            raise ValueError(f"docs/{page} has no {begin} ... {end} block")
        head, tail = pattern.split(text, maxsplit=1)
        note = "<!-- generated by scripts/gen_docs.py: do not edit by hand -->"
        text = f"{head}{begin}\n{note}\n\n{build()}\n{end}{tail}"
    return text


def pages() -> list[str]:
    """The pages that hold generated blocks."""
    return sorted({page for page, _build in BLOCKS.values()})


def stale_pages() -> list[str]:
    """Pages whose committed text differs from what the generator produces now."""
    stale = []
    for page in pages():
        text = (DOCS / page).read_text(encoding="utf-8")
        if render_page(page, text) != text:
            stale.append(page)
    return stale


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python scripts/gen_docs.py [--check]", file=sys.stderr)
        return 2
    if argv == ["--check"]:
        stale = stale_pages()
        for page in stale:
            print(f"stale: docs/{page} (run python scripts/gen_docs.py)", file=sys.stderr)
        return 1 if stale else 0
    for page in pages():
        path = DOCS / page
        text = path.read_text(encoding="utf-8")
        new = render_page(page, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"wrote docs/{page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
