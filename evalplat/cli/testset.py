"""``evalplat testset import | from-events | list | show | export``: judged query sets as immutable
versions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import (
    DbOption,
    JsonOption,
    check_output_folder,
    check_output_path,
    echo_err,
    open_store,
    print_json,
    writing,
)

if TYPE_CHECKING:
    from evalplat.store import ImportOutcome, Store
    from evalplat.testsets.content import TestSetContent

app = typer.Typer(
    help="Test sets: queries and judgments (and documents), versioned.", no_args_is_help=True
)

FORMATS = "trec, csv, tsv, jsonl, quepid, rre, srw, ltr"


@app.command("import")
def import_(
    name: Annotated[str, typer.Argument(help="Test set name, e.g. cranfield.")],
    qrels: Annotated[
        Path,
        typer.Option(
            "--qrels",
            help="Judgments: TREC qrels, CSV/TSV, JSONL, or a Quepid, RRE, SRW or LTR "
            "judgment list (its query texts become the queries).",
        ),
    ],
    queries: Annotated[
        Path | None, typer.Option("--queries", help="Queries: TSV (qid<TAB>text) or JSONL.")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option("--docs", help="Documents as JSONL (id, title, text, other fields)."),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"Judgments format when the extension and content are unclear: {FORMATS}.",
        ),
    ] = None,
    queries_format: Annotated[
        str | None, typer.Option("--queries-format", help="Queries format: tsv, csv or jsonl.")
    ] = None,
    docs_format: Annotated[
        str | None, typer.Option("--docs-format", help="Documents format: jsonl.")
    ] = None,
    grades: Annotated[
        str | None,
        typer.Option(
            "--grades",
            help="How grades of one pair from several sources resolve: mean (default), max, "
            "majority or source:NAME. Stored with the version.",
            show_default=False,
        ),
    ] = None,
    add: Annotated[
        bool,
        typer.Option(
            "--add",
            help="Add these judgments to the latest version (its queries, documents and other "
            "judgments kept), e.g. a reviewed `evalplat judge export`.",
        ),
    ] = False,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Validate the files, then store them as a new version (identical content: same version).

    Nothing is written unless every file is valid; an error names the file and the line.
    """
    from evalplat.errors import InputError
    from evalplat.testsets.content import load_testset

    if add and (queries is not None or docs is not None):
        raise InputError("--add takes judgments only: the queries and documents are the test set's")
    store = open_store(db) if add else None
    if store is not None:
        content = _added(name, qrels, format, grades, store)
    else:
        content = load_testset(
            qrels,
            queries=queries,
            docs=docs,
            format=format,
            queries_format=queries_format,
            docs_format=docs_format,
            grade_rule=grades,
        )
    if grades is not None:
        from evalplat.testsets.raters import check_rule_source

        check_rule_source(grades, content.judgments)
    source: dict[str, str | int | None] = {
        "qrels": qrels.name,
        "queries": None if queries is None else queries.name,
        "docs": None if docs is None else docs.name,
        "format": format,
    }
    parent = None
    if store is not None:
        parent = store.test_set_version(name).version
        source["added_to"] = parent
    outcome = (store or open_store(db)).import_test_set(name, content, source=source, parent=parent)
    _print_import(outcome, json_output, documents=True)


def _added(
    name: str, qrels: Path, format: str | None, grades: str | None, store: Store
) -> TestSetContent:
    """The latest version of ``name`` with the judgments of ``qrels`` added (``--add``)."""
    from evalplat.formats.testset_files import parse_judgments
    from evalplat.judging.review import add_judgments
    from evalplat.testsets.raters import check_grade_rule

    parsed = parse_judgments(qrels, format)
    if grades is not None:
        check_grade_rule(grades)
    base = store.load_test_set(name)
    return add_judgments(base, parsed.frame, grades, path=parsed.path, line_of=parsed.line_of)


@app.command("from-events")
def from_events(
    name: Annotated[str, typer.Argument(help="Test set name to add a version to.")],
    model: Annotated[
        str,
        typer.Option("--model", help="Click model: ctr, coec (position-corrected) or purchase."),
    ],
    min_impressions: Annotated[
        int,
        typer.Option("--min-impressions", help="Leave out pairs shown fewer times than this."),
    ] = 10,
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config", help="Only searches of this config (NAME or NAME@VER); repeatable."
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only searches from this time on (ISO 8601 with a zone)."),
    ] = None,
    thresholds: Annotated[
        str | None,
        typer.Option(
            "--thresholds",
            help="Ascending rates that grade 1, 2, ... (default ctr 0.05,0.15,0.3; coec "
            "0.5,1,2; purchase 0.01,0.05,0.1).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Grade query-document pairs from the imported interaction logs and store them as a new
    version (judgment source clicks:MODEL; the model and its parameters are its provenance)."""
    from evalplat.events.click_models import parse_thresholds
    from evalplat.events.records import parse_timestamp

    cuts = parse_thresholds(thresholds, model)
    start = None if since is None else parse_timestamp(since, "--since")
    outcome = open_store(db).test_set_from_events(
        name, model=model, min_impressions=min_impressions, configs=config, since=start,
        thresholds=cuts,
    )  # fmt: skip
    _print_import(outcome, json_output, note=f" (clicks:{model})")


def _print_import(
    outcome: ImportOutcome, json_output: bool, *, documents: bool = False, note: str = ""
) -> None:
    """The version an import stored, or that it was identical to the latest (stderr)."""
    from evalplat.metrics.numbers import counted

    info = outcome.version
    if json_output:
        print_json({**info.to_dict(), "created": outcome.created})
        return
    counts = f"{counted(info.queries, 'query')}, {counted(info.judgments, 'judgment')}"
    counts += f", {counted(info.documents, 'document')}" if documents else ""
    if outcome.created:
        typer.echo(f"imported {info.name}@{info.version}: {counts}{note}")
    else:
        echo_err(f"unchanged: identical to {info.name}@{info.version} ({counts}), nothing added")


@app.command("list")
def list_test_sets(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Every test set with its latest version."""
    test_sets = open_store(db, read_only=True).list_test_sets()
    if json_output:
        print_json([t.to_dict() for t in test_sets])
        return
    if not test_sets:
        echo_err("no test sets yet: import one with `evalplat testset import NAME --qrels F`")
        return
    from rich.table import Table

    from evalplat.cli.common import table_console

    table = Table("name", "version", "queries", "judgments", "documents", "created")
    for t in test_sets:
        table.add_row(
            t.name,
            str(t.version),
            str(t.queries),
            str(t.judgments),
            str(t.documents),
            t.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    table_console().print(table)


@app.command("show")
def show(
    ref: Annotated[str, typer.Argument(help="NAME or NAME@VERSION.")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """One test set version, and the other versions of the same test set."""
    from dataclasses import asdict

    store = open_store(db, read_only=True)
    info = store.test_set_version(ref)
    versions = store.test_set_versions(info.name)
    agreement = store.rater_agreement(f"{info.name}@{info.version}")
    if json_output:
        print_json(
            {
                **info.to_dict(),
                "versions": [v.version for v in versions],
                "agreement": [asdict(a) for a in agreement],
            }
        )
        return
    typer.echo(f"{info.name}@{info.version}")
    typer.echo(f"queries    {info.queries}")
    typer.echo(f"judgments  {info.judgments}")
    typer.echo(f"documents  {info.documents}")
    typer.echo(f"hash       {info.content_hash}")
    typer.echo(f"created    {info.created_at.isoformat()}")
    if info.source:
        files = ", ".join(f"{k}={v}" for k, v in info.source.items() if v)
        typer.echo(f"source     {files}")
    typer.echo("versions   " + ", ".join(str(v.version) for v in versions))
    if info.grade_rule is not None:
        typer.echo(f"grades     several sources per pair, resolved by {info.grade_rule}")
    for a in agreement:
        kappa = "n/a" if a.kappa is None else f"{a.kappa:.3f}"
        exact = "n/a" if a.exact is None else f"{a.exact:.0%}"
        typer.echo(
            f"agreement  {a.source_a} / {a.source_b}: weighted kappa {kappa}, "
            f"same grade {exact}, {a.pairs} pairs"
        )


@app.command("export")
def export(
    ref: Annotated[str, typer.Argument(help="NAME or NAME@VERSION.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Folder to write qrels.txt, queries.tsv and docs.jsonl into; with --format, "
            "the file to write (default: standard output).",
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"Write the judgments (and query texts) as one file in this format: {FORMATS}.",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Write a version back out as files that `testset import` reads."""
    import sys
    import tempfile

    from evalplat.testsets.content import export_testset, write_qrels

    if format is not None:
        from evalplat.formats.testset_files import detect_format

        fmt = detect_format("-", "judgments", format)
        if out is not None:
            check_output_path(out, "--out")
    elif out is not None:
        check_output_folder(out, "--out")
    content = open_store(db, read_only=True).load_test_set(ref)
    if format is not None:
        written = _export_as(content, fmt, out, ref.split("@", 1)[0])
        if json_output and written is not None:
            print_json({"files": {"qrels": str(written)}})
        elif written is not None:
            typer.echo(str(written))
        return
    if out is None:
        with tempfile.TemporaryDirectory() as folder:
            path = write_qrels(content.qrels, Path(folder) / "qrels.txt")
            sys.stdout.write(path.read_text(encoding="utf-8"))
        return
    with writing(out, "--out"):
        paths = export_testset(content, out)
    if json_output:
        print_json({"files": {kind: str(path) for kind, path in paths.items()}})
    else:
        for path in paths.values():
            typer.echo(str(path))


def _export_as(content: TestSetContent, fmt: str, out: Path | None, name: str) -> Path | None:
    """Write ``content``'s judgments as ``fmt`` to ``out`` (standard output when ``None``)."""
    import sys
    import tempfile

    from evalplat.formats.judgment_lists import write_judgment_list
    from evalplat.formats.text_files import JUDGMENT_LISTS
    from evalplat.testsets.content import write_judgments

    if content.several_grades and fmt != "jsonl":
        rule = content.grade_rule or "mean"
        echo_err(f"several sources grade some pairs: {fmt} holds one grade, resolved by {rule}")
    with tempfile.TemporaryDirectory() as folder:
        target = out if out is not None else Path(folder) / f"judgments.{fmt}"
        with writing(target, "--out"):
            if fmt in JUDGMENT_LISTS:
                write_judgment_list(fmt, content.queries, content.qrels, target, name)
            elif fmt == "jsonl":
                write_judgments(content.judgments, target, fmt)
            else:
                write_judgments(content.qrels, target, fmt)
        if out is None:
            sys.stdout.write(target.read_text(encoding="utf-8"))
            return None
    return out
