"""``evalplat init`` and ``evalplat db upgrade | current | check``."""

from __future__ import annotations

import typer

from evalplat.cli.common import DbOption, JsonOption, open_store, print_json

db_app = typer.Typer(help="Database schema migrations.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.add_typer(db_app, name="db")


def init(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Create the database, or upgrade it to this evalplat's schema (safe to repeat)."""
    _upgrade(db, json_output)


@db_app.command("upgrade")
def upgrade(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Apply pending schema migrations."""
    _upgrade(db, json_output)


@db_app.command("current")
def current(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Show the database's schema revision and the one this evalplat needs."""
    from evalplat.db import migrate

    store = open_store(db, check=False)
    revision = migrate.current_revision(store.engine)
    head = migrate.head_revision()
    if json_output:
        print_json(
            {
                "database": store.description,
                "current": revision,
                "head": head,
                "up_to_date": revision == head,
            }
        )
        return
    state = "up to date" if revision == head else "behind: run `evalplat db upgrade`"
    typer.echo(f"{store.description}: {revision or 'empty'} (head {head}, {state})")


@db_app.command("check")
def check(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Check that the schema is current and matches the models; exit 3 if not."""
    from evalplat.db import migrate
    from evalplat.errors import SchemaOutdatedError
    from evalplat.metrics.numbers import counted

    store = open_store(db, check=False)
    migrate.ensure_current(store.engine)
    differences = migrate.schema_differences(store.engine)
    if json_output:
        print_json({"database": store.description, "differences": [str(d) for d in differences]})
    if differences:
        raise SchemaOutdatedError(
            f"database {store.description} differs from evalplat's models in "
            f"{counted(len(differences), 'place')}, first: {differences[0]}"
        )
    if not json_output:
        typer.echo(f"{store.description}: schema is current and matches evalplat's models")


def _upgrade(db: str | None, json_output: bool) -> None:
    store = open_store(db, init=True)
    before, after = store.migrated or (None, None)
    if json_output:
        print_json({"database": store.description, "previous": before, "current": after})
    elif before == after:
        typer.echo(f"{store.description}: schema already at {after}, nothing to do")
    elif before is None:
        typer.echo(f"{store.description}: created, schema at {after}")
    else:
        typer.echo(f"{store.description}: upgraded schema from {before} to {after}")
