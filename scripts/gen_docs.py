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

PARAM_NOTES: dict[str, str] = {
    "rel": "binary relevance threshold: a document is relevant when its grade ≥ `rel` "
    "(default 1; trec_eval's `-l`)",
    "gain": "`linear` (gain = grade, trec_eval's; default) or `exp` (gain = 2^grade - 1)",
    "judged_only": "`true` drops unjudged documents from the ranking before scoring "
    "(trec_eval's `-J`; default `false`)",
    "gmax": "the top grade in p = (2^g - 1) / 2^gmax: a grade (default 4, as gdeval and "
    "ir_measures) or `qrels` (the highest grade in the judgments)",
}

# Edge cases the registry's formulas leave implicit, checked against the kernels.
EDGE_CASES: dict[str, list[str]] = {
    "P": [
        "Divides by k even when fewer than k documents were retrieved (a run of 3 "
        "relevant documents scores P@10 = 0.3).",
        "With `judged_only=true` unjudged documents are removed first, then the top k is taken.",
    ],
    "R": [
        "R counts every judged relevant document of the topic, retrieved or not.",
        "A topic without relevant judgments scores 0 and still counts in the mean.",
    ],
    "F1": ["Computed as 2 · |relevant in top k| / (k + R); 0 when nothing relevant is found."],
    "Success": ["Alias `Hit@k`. 0 for a topic without results."],
    "RR": [
        "No cutoff unless written `RR@k` (`MRR@10` is `RR@10`).",
        "0 when no relevant document is retrieved (within k).",
        "trec_eval has no cutoff form of `recip_rank`, so `RR@k` has no trec_eval name.",
    ],
    "AP": [
        "R counts every judged relevant document, so unretrieved relevant documents lower AP.",
        "`AP@k` still divides by R, not by min(k, R) (trec_eval's `map_cut_k`).",
        "0 when R = 0; the topic still counts.",
    ],
    "nDCG": [
        "The ideal ranking sorts every judgment of the topic by grade, retrieved or not, and "
        "is cut at the same k.",
        "Negative grades and unjudged documents gain 0; 0 when no judgment is positive.",
        "`rel` plays no part (as in trec_eval, `-l2` leaves `ndcg` unchanged), so nDCG takes "
        "no `rel` parameter.",
    ],
    "DCG": ["Not normalised, so not bounded by 1; negative grades gain 0."],
    "CG": [
        "No discount: reordering the top k leaves CG@k unchanged (DCG@k is the measure that "
        "rewards order). Not normalised, so not bounded by 1.",
        "Negative grades and unjudged documents gain 0; 0 for a topic without results.",
    ],
    "Rprec": ["The cutoff is R itself; 0 when R = 0."],
    "Bpref": [
        "Unjudged documents and negative grades take no part; a term is 1 when no judged "
        "non-relevant document is ranked above it (also when N = 0).",
        "0 when R = 0.",
    ],
    "ERR": [
        "gmax defaults to 4, as in gdeval and ir_measures, so `ERR@10` means the same "
        "there and here; `ERR(gmax=qrels)@10` uses the highest grade among the judgments of "
        "the evaluated topics instead (a 0-2 scale then stops the cascade at grade 2). Grades "
        "above gmax count as gmax. All values are 0 when gmax ≤ 0.",
        "trec_eval has no ERR.",
    ],
    "Judged": [
        "Any grade counts as judged, negative grades too; unjudged means no qrels line.",
        "Divides by min(k, number retrieved), so a short ranking is not penalised; 0 with no "
        "results. This is ir_measures' `Judged@k`.",
        "Not a relevance measure: the comparator uses it to tell a real drop from a drop "
        "caused by unjudged documents (verdict `needs_judgments`).",
    ],
    "AUC": [
        "Unretrieved judged documents rank below every retrieved one and tie among themselves "
        "(a tie counts 1/2).",
        "Negative grades are ignored; 0 when R = 0 or N = 0.",
    ],
    "KendallTau": [
        "Values lie in [-1, 1]: +1 when the judged documents of the top k are ranked exactly "
        "by grade, -1 when exactly against it.",
        "Only judged documents take part (a negative grade counts as 0, any grade is judged); "
        "unjudged ones are skipped, so the pairs are the judged documents among the top k. "
        "With `judged_only=true` the top k are the first k judged documents.",
        "0 when fewer than two judged documents are in the top k or when all their grades tie: "
        "there is no order to agree with (SciPy's `kendalltau` returns NaN there), and 0 keeps "
        "the topic in means and paired tests like a topic without results elsewhere.",
        "Ties in grades are handled by tau-b's denominator; positions never tie.",
    ],
    "Spearman": [
        "Values lie in [-1, 1], as for `KendallTau`, over the same pairs.",
        "Tied grades share the average of their ranks (SciPy's `spearmanr`).",
        "0 when fewer than two judged documents are in the top k or when all their grades tie, "
        "for the reason given under `KendallTau`.",
    ],
    "NumRet": ["Summed over topics, not averaged; never gated."],
    "NumRel": ["Summed over topics, not averaged; never gated."],
    "NumRelRet": ["Summed over topics, not averaged; never gated."],
    "NumQ": [
        "Summed over topics: the number of topics evaluated (after `--skip-missing` or "
        "`--exclude-no-relevant`); never gated."
    ],
}


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
    return ", ".join(names) if names else "none"


def metrics_block() -> str:
    """One section per metric family of the registry."""
    from evalplat.metrics.registry import DEFAULT_METRICS, FAMILIES

    lines = [
        "| metric | syntax | aliases | higher is better | aggregate | trec_eval |",
        "|---|---|---|---|---|---|",
    ]
    for spec in FAMILIES.values():
        aliases = ", ".join(f"`{a}`" for a in spec.aliases) or "—"
        direction = "yes" if spec.higher_is_better else "no"
        if not spec.gateable:
            direction = "informational"
        trec = spec.trec_name_no_cutoff or (spec.trec_name or "").format(k="k") or "—"
        syntax = _syntax(spec.name, spec.cutoff, spec.params)
        trec_cell = trec if trec == "—" else f"`{trec}`"
        lines.append(
            f"| [{spec.name}](#{spec.name.lower()}) | `{syntax}` | {aliases} | {direction} "
            f"| {spec.aggregate} | {trec_cell} |"
        )
    lines += ["", f"Default metric set: {', '.join(f'`{m}`' for m in DEFAULT_METRICS)}.", ""]
    for spec in FAMILIES.values():
        lines += [f"### {spec.name}", "", spec.description, ""]
        lines.append(f"- Syntax: `{_syntax(spec.name, spec.cutoff, spec.params)}`")
        cutoff = {"required": "required", "optional": "optional", "none": "none"}[spec.cutoff]
        lines.append(f"- Cutoff `@k`: {cutoff}")
        if spec.aliases:
            lines.append(f"- Aliases: {', '.join(f'`{a}`' for a in spec.aliases)}")
        if spec.params:
            lines.append("- Parameters:")
            lines += [f"  - `{p}`: {PARAM_NOTES[p]}" for p in spec.params]
        else:
            lines.append("- Parameters: none")
        lines.append(f"- trec_eval: {_trec_eval(spec)}")
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        gate = "can be gated"
        if not spec.gateable:
            direction, gate = "informational", "never gated"
        bounds = "in [0, 1]" if spec.bounded else "unbounded"
        lines.append(f"- Direction: {direction}; {gate}; values {bounds}; {spec.aggregate} over "
                     "topics")  # fmt: skip
        lines += ["", "```text", spec.formula, "```", ""]
        notes = EDGE_CASES.get(spec.name, [])
        if notes:
            lines += ["Edge cases:", ""] + [f"- {note}" for note in notes] + [""]
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
            lines.append(f"| `{param.name}` | {types} | {default} | {_cell(param.help)}{choices} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


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
