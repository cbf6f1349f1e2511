"""dslake command line: parse, call the Lake facade, render with rich. No logic lives here."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from dsstar_lake.errors import DslakeError

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class DslakeGroup(click.Group):
    """A click group that turns DslakeError into one line and an exit code (never a traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DslakeError as exc:
            err.print(f"[red]error:[/red] {exc.message}", highlight=False)
            if exc.hint:
                err.print(f"[dim]hint:[/dim] {exc.hint}", highlight=False)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(130)


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def _open(lake: str | None, catalog: str | None, **overrides: Any) -> Any:
    from dsstar_lake.lake import Lake

    return Lake.open(lake, catalog=catalog, overrides={k: v for k, v in overrides.items() if v is not None})


lake_option = click.option("--lake", "lake_path", type=click.Path(file_okay=True), help="The lake folder.")
catalog_option = click.option("--catalog", type=click.Path(file_okay=False), help="Catalog folder (default LAKE/.dslake).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
chroma_option = click.option("--chroma-url", help="Use a shared Chroma server (http://HOST:PORT) for the vectors.")


@click.group(cls=DslakeGroup)
@click.version_option(package_name="dsstar-lake")
def cli() -> None:
    """Ask questions of a data lake with the DS-STAR agent, retrieval-first."""


@cli.command()
@click.argument("lake", type=click.Path(file_okay=True))
@catalog_option
@chroma_option
@click.option("--jobs", type=click.IntRange(min=0), help="Profiler processes (default: number of cores).")
@click.option("--follow-symlinks", is_flag=True, default=None, help="Follow symlinks that leave the lake.")
@click.option("--rebuild", is_flag=True, help="Rebuild a damaged catalog from the lake, keeping cached descriptions.")
@click.option("--watch", is_flag=True, help="Keep running and re-index files as they change.")
@json_option
def index(lake: str, catalog: str | None, chroma_url: str | None, jobs: int | None, follow_symlinks: bool | None,
          rebuild: bool, watch: bool, as_json: bool) -> None:
    """Describe every file of LAKE into its catalog (only what changed since the last run)."""
    from dsstar_lake.render import index_progress, print_index_summary

    handle = _open(lake, catalog, **{"catalog.chroma_url": chroma_url, "index.jobs": jobs,
                                     "index.follow_symlinks": follow_symlinks})
    with index_progress(err, enabled=not as_json) as progress:
        summary = handle.index(progress=progress, rebuild=rebuild)
    _print_json(summary.to_dict()) if as_json else print_index_summary(out, summary)
    if watch:
        from dsstar_lake.watch import watch_lake

        watch_lake(handle, lambda s: _print_json(s.to_dict()) if as_json else print_index_summary(out, s), err)


@cli.command()
@click.argument("lake", required=False, type=click.Path(file_okay=True))
@catalog_option
@click.option("--check", is_flag=True, help="Also compare the vector store's ids with the manifest.")
@json_option
def status(lake: str | None, catalog: str | None, check: bool, as_json: bool) -> None:
    """Show what the catalog holds, failed files, and files changed since the last index."""
    from dsstar_lake.render import print_status

    result = _open(lake or (None if catalog else "."), catalog).status(check_vectors=check)
    _print_json(result.to_dict()) if as_json else print_status(out, result)


@cli.command()
@click.argument("path")
@lake_option
@catalog_option
@json_option
def show(path: str, lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Show the stored description and card of one file (path relative to the lake)."""
    from dsstar_lake.render import print_show

    result = _open(lake_path or (None if catalog else "."), catalog).show(path)
    _print_json(result) if as_json else print_show(out, result)


@cli.command()
@click.argument("question")
@lake_option
@catalog_option
@chroma_option
@click.option("-k", "k", type=click.IntRange(min=1), help="How many entries (default from settings).")
@click.option("--verbose", "-v", is_flag=True, help="Print the time each part took.")
@json_option
def search(question: str, lake_path: str | None, catalog: str | None, chroma_url: str | None, k: int | None,
           verbose: bool, as_json: bool) -> None:
    """Find the catalog entries that best match QUESTION (dense + full-text, fused)."""
    from dsstar_lake.render import print_hits

    handle = _open(lake_path or (None if catalog else "."), catalog, **{"catalog.chroma_url": chroma_url})
    hits = handle.search(question, k)
    timing = handle.retriever().last_timing
    if as_json:
        _print_json({"question": question, "hits": [h.to_dict() for h in hits], "timing_ms": vars(timing)})
    else:
        print_hits(out, hits, timing if verbose else None)


@cli.command()
@lake_option
@catalog_option
@json_option
def config(lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Show every setting, its value, and where the value came from."""
    from dsstar_lake.settings import Settings

    settings = _open(lake_path, catalog).settings if (lake_path or catalog) else Settings.load()
    rows = [{"key": k, "value": v, "source": s} for k, v, s in settings.items()]
    if as_json:
        _print_json(rows)
        return
    table = Table("setting", "value", "from")
    for row in rows:
        table.add_row(row["key"], repr(row["value"]), row["source"])
    out.print(table)


def main() -> None:
    """Run the CLI."""
    cli()


if __name__ == "__main__":
    main()
