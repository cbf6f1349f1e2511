"""dslake command line: parse, call the Lake facade, render with rich. No logic lives here."""

# ruff: noqa: E402 - a no-change `dslake index` is answered before click and rich are imported (below)
from __future__ import annotations

from dsstar_lake.terminal.quick_index import answer_from_console_script

answer_from_console_script(__name__)  # exits when it answered; the full CLI below does everything else

from dsstar_lake.terminal.question_ahead import start_from_console_script

start_from_console_script(__name__)  # `dslake search`: the question is embedded in a child while the CLI loads

import atexit
import gc
import sys
from typing import Any

import click

from dsstar_lake.base.errors import INDEX_FAILURES, STATUS_PROBLEMS
from dsstar_lake.base.modelnames import KEYED_PROVIDERS
from dsstar_lake.terminal.common import (
    DslakeGroup,
    LakeFirstGroup,
    catalog_option,
    chroma_option,
    err,
    group_param,
    index_target,
    json_option,
    lake_arguments,
    lake_option,
    llm_flags,
    llm_options,
    out,
    print_json,
)
from dsstar_lake.terminal.help import add_examples


def open_lake(lake: str | None, catalog: str | None, llm: Any = None, **overrides: Any) -> Any:
    """Open the Lake facade (only this module imports it: tests/test_layers.py), with the flags' settings."""
    from dsstar_lake.lake import Lake

    return Lake.open(lake, catalog=catalog, overrides={k: v for k, v in overrides.items() if v is not None},
                     llm=llm)


def open_existing(lake: str | None, catalog: str | None, llm: Any = None, **overrides: Any) -> Any:
    """Open the catalog of a command that reads one: --lake, else --catalog alone, else the nearest lake from the
    current folder up (terminal/nearest.py); warn on stderr when a newer dslake wrote it (read-only then).

    A subcommand takes what its group was given: `dslake runs --lake LAKE show ID`.
    """
    lake, catalog = lake or group_param("lake_path"), catalog or group_param("catalog")
    if not (lake or catalog):
        from pathlib import Path

        from dsstar_lake.base.settings import Settings
        from dsstar_lake.terminal.nearest import nearest_lake

        lake = str(nearest_lake(Path.cwd(), Settings.load().catalog.dirname))
    handle = open_lake(lake, catalog, llm, **overrides)
    warning = handle.catalog_warning()
    if warning:
        err.print(f"warning: {warning}", highlight=False, markup=False)  # the path may hold brackets
    return handle


@click.group(cls=DslakeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dsstar-lake")
def cli() -> None:
    """Ask questions of a data lake with the DS-STAR agent, retrieval-first."""


@cli.command()
@click.argument("lake", required=False, type=click.Path(file_okay=True))
@click.argument("paths", nargs=-1, type=click.Path())
@lake_option
@catalog_option
@chroma_option
@click.option("--jobs", type=click.IntRange(min=0), help="Profiler processes (default: number of cores).")
@click.option("--follow-symlinks", is_flag=True, default=None, help="Follow symlinks that leave the lake.")
@click.option("--rebuild", is_flag=True, help="Rebuild a damaged catalog from the lake, keeping cached descriptions.")
@click.option("--watch", is_flag=True, help="Keep running and re-index files as they change.")
@click.option("--strict", is_flag=True, help="Exit with 9 when any file failed to index (for CI); without it, "
                                             "failed files are listed and the exit code is 0.")
@click.option("--cluster", help="Profile on a Dask cluster: tcp://HOST:PORT of its scheduler (the lake on a shared "
                                "filesystem or in object storage).")
@click.option("--analyzer", type=click.Choice(["profile", "llm", "auto"]),
              help="Also describe files with the paper's LLM analyzer: llm = every file, auto = files no profiler "
                   "reads and one per family; both add a model's summary to entries whose cards carry no words a "
                   "question uses, after showing its estimated cost (default from agent.analyzer: profile = no "
                   "model).")
@llm_options
@json_option
def index(lake: str | None, paths: tuple[str, ...], lake_path: str | None, catalog: str | None,
          chroma_url: str | None, jobs: int | None, follow_symlinks: bool | None, rebuild: bool, watch: bool, analyzer: str | None, as_json: bool,
          cluster: str | None = None, strict: bool = False, **params: Any) -> None:
    """Describe every file of LAKE into its catalog (only what changed since the last run).

    PATHS (files or folders in the lake, from here or from the lake root) limit the run to them: what a job that
    just wrote or deleted files can say, so that the rest of a big lake is not scanned. The lake may also be
    given as --lake LAKE (then every argument is a PATH), or left out with --catalog DIR of a catalog that has
    indexed it before (a lake in object storage included).
    """
    from dsstar_lake.terminal.results import index_progress, print_index_summary

    lake, paths = index_target(lake, paths, lake_path, catalog)
    if rebuild and paths:
        raise click.UsageError("--rebuild rescans the whole lake: give no PATHS with it")
    if strict and watch:
        raise click.UsageError("--strict ends the run with an exit code, --watch never ends: give one of them")
    handle = open_lake(lake, catalog, llm_flags(params), **{"catalog.chroma_url": chroma_url, "index.jobs": jobs,
                                                        "index.follow_symlinks": follow_symlinks,
                                                        "agent.analyzer": analyzer, "index.cluster": cluster})
    from dsstar_lake.terminal.nearest import second_catalog_note

    second = second_catalog_note(handle.root, handle.catalog_dir, handle.settings.catalog.dirname)
    with index_progress(err, enabled=not as_json) as progress:
        summary = handle.index(progress=progress, rebuild=rebuild, given=list(paths) or None)
    if second:
        summary.notes.append(second)
    if watch:
        from dsstar_lake.usecases.watch import prepare_watch, watch_lake

        prepare_watch(handle)
    print_json(summary.to_dict(), final=not watch) if as_json else print_index_summary(out, summary)
    if not as_json:
        _print_notes(summary.notes)
    if strict and summary.failed:
        err.print(f"--strict: {summary.failed} file{'s' if summary.failed != 1 else ''} failed to index", highlight=False)
        sys.exit(INDEX_FAILURES)
    if watch:
        watch_lake(handle, summary.failures, lambda s, fresh: print_json(s.to_dict(), final=False) if as_json
                   else print_index_summary(out, s, failures=fresh), err)


def _print_notes(notes: list[str]) -> None:
    """Print what an index run wants the user to hear (dslake's own sentences, no file names)."""
    for note in notes:
        out.print(f"note: {note}", highlight=False, markup=False)


@cli.command()
@lake_arguments
@catalog_option
@click.option("--check", is_flag=True, help="Also compare the vector store's ids with the manifest.")
@json_option
def status(lake_path: str | None, catalog: str | None, check: bool, as_json: bool) -> None:
    """Show what the catalog holds, failed files, and files changed since the last index.

    Exits with 8 when it reports a problem the catalog needs fixed (an index or --rebuild fixes it): vectors
    missing or drifted, a damaged manifest or index. Failed and changed files are reported but exit 0.
    """
    from dsstar_lake.terminal.results import print_status

    result = open_existing(lake_path, catalog).status(check_vectors=check)
    print_json(result.to_dict()) if as_json else print_status(out, result)
    if result.problems:  # the catalog needs an index or a rebuild; failed and changed files are not problems
        sys.exit(STATUS_PROBLEMS)


@cli.command()
@click.argument("path")
@lake_arguments
@catalog_option
@json_option
def show(path: str, lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Show the stored description and card of one file (path relative to the lake)."""
    from dsstar_lake.terminal.results import print_show

    result = open_existing(lake_path, catalog).show(path)
    print_json(result) if as_json else print_show(out, result)


@cli.command()
@click.argument("question")
@lake_arguments
@catalog_option
@chroma_option
@click.option("-k", "k", type=click.IntRange(min=1), help="How many entries (default from settings).")
@click.option("--verbose", "-v", is_flag=True, help="Print the time each part took.")
@json_option
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV: one row per hit, with a header.")
@click.option("--nl", "as_nl", is_flag=True, help="Print newline-delimited JSON: one object per hit.")
def search(question: str, lake_path: str | None, catalog: str | None, chroma_url: str | None, k: int | None,
           verbose: bool, as_json: bool, as_csv: bool, as_nl: bool) -> None:
    """Find the catalog entries that best match QUESTION (dense + full-text, fused).

    Each hit says what it holds (title, shape, columns or sheets, dates, key facts) and names the near-identical
    files folded under it. On a terminal the matched words are marked; piped, the table is plain text.
    """
    from dsstar_lake.base.errors import UsageError
    from dsstar_lake.terminal.results import print_hits

    if as_json + as_csv + as_nl > 1:
        raise UsageError("give one of --json, --csv and --nl")
    handle = open_existing(lake_path, catalog, **{"catalog.chroma_url": chroma_url})
    from dsstar_lake.terminal.question_ahead import hand_to

    hand_to(handle.embedder(), question)  # the vector a child embeds meanwhile, when it is this search's
    hits, timing = handle.timed_search(question, k)
    if as_json:
        print_json({"question": question, "hits": [h.to_dict() for h in hits], "timing_ms": vars(timing)})
    elif as_csv or as_nl:
        from dsstar_lake.views.hitlines import csv_text, nl_text

        click.echo(csv_text(hits) if as_csv else nl_text(hits), nl=False)
    else:
        print_hits(out, hits, timing if verbose else None, question)


@cli.command()
@lake_arguments
@catalog_option
@json_option
def config(lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Show every setting, its value, and where the value came from."""
    from dsstar_lake.lake import Lake

    rows = Lake.setting_rows(lake_path, catalog)
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    from dsstar_lake.terminal.results import safe

    table = Table("setting", "value", "from")
    for row in rows:
        table.add_row(safe(row["key"]), safe(repr(row["value"])), safe(row["source"]))
    out.print(table)


@cli.command()
@lake_arguments
@catalog_option
@llm_options
@json_option
def models(lake_path: str | None, catalog: str | None, as_json: bool, **params: Any) -> None:
    """Show the provider and model per role, whether credentials are present, and the prices used."""
    from dsstar_lake.lake import Lake
    from dsstar_lake.terminal.results import print_models

    info = Lake.model_configuration(lake_path, catalog, llm_flags(params))
    print_json(info) if as_json else print_models(out, info)


@cli.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and answers on benchmark tasks."""


@eval_group.command(name="retrieval")
@click.option("--tasks", "task_files", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="KramaBench workload JSON or JSONL {id, query, files}; repeatable.")
@lake_arguments
@catalog_option
@click.option("-k", "ks", default="1,5,10,20", show_default=True, help="Comma-separated K values.")
@click.option("--missing", type=click.Path(exists=True, dir_okay=False),
              help="Lake files known to be absent (default: missing_blobs.txt beside the tasks).")
@llm_options
@json_option
def eval_retrieval(task_files: tuple[str, ...], lake_path: str | None, catalog: str | None, ks: str,
                   missing: str | None, as_json: bool, **params: Any) -> None:
    """Recall@K and all-found@K of the retriever on tasks whose files are known, and where each task's files stand
    in the first planner prompt; with a model configured, the selector's choice too (precision, recall, F1)."""
    from dsstar_lake.base.errors import UsageError
    from dsstar_lake.terminal.results import print_retrieval_report

    try:
        k_values = [int(k) for k in ks.split(",") if k.strip()]
    except ValueError:
        raise UsageError(f"-k expects comma-separated integers, got {ks!r}") from None
    flags = llm_flags(params)
    # A model flag asks for the selection (a model that is not usable is then an error); without one, the selector
    # is asked only when a model is configured.
    report = open_existing(lake_path, catalog, flags).evaluate_retrieval(list(task_files), k_values, missing,
                                                                         select=True if flags.given else None)
    print_json(report.to_dict()) if as_json else print_retrieval_report(out, report)


@eval_group.command(name="kramabench")
@click.option("--tasks", "task_files", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="KramaBench workload JSON (or JSONL with answers); repeatable.")
@lake_arguments
@catalog_option
@click.option("--ids", multiple=True, help="Run only these task ids (repeat, or separate with commas).")
@click.option("--oracle", is_flag=True, help="Give each run exactly its task's resolved data_sources (no retrieval).")
@click.option("--jobs", type=click.IntRange(min=1), help="Tasks run in parallel (default from eval.jobs).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Append one JSONL row per task here.")
@click.option("--resume", is_flag=True, help="Skip the task ids already in --out and append the rest.")
@click.option("--missing", type=click.Path(exists=True, dir_okay=False),
              help="Lake files known to be absent (default: missing_blobs.txt beside the tasks).")
@click.option("-k", "k", type=click.IntRange(min=1), help="Entries retrieved per question (default from settings).")
@click.option("--max-rounds", type=click.IntRange(min=1), help="Rounds before finalizing anyway (default 20).")
@click.option("--judge-model", help="Model that judges string_approximate answers (default eval.judge_model; "
              "empty = the run's own model; fuzzy match only when no model is configured).")
@click.option("--no-judge", is_flag=True, help="Ask no model to judge: fuzzy matching decides string answers.")
@llm_options
@json_option
def eval_kramabench(task_files: tuple[str, ...], lake_path: str | None, catalog: str | None, ids: tuple[str, ...],
                    oracle: bool, jobs: int | None, out_path: str | None, resume: bool, missing: str | None,
                    k: int | None, max_rounds: int | None, judge_model: str | None, no_judge: bool, as_json: bool,
                    **params: Any) -> None:
    """Answer KramaBench tasks with the agent and score them with KramaBench's metrics."""
    from dsstar_lake.terminal.results import benchmark_progress, print_benchmark_report

    handle = open_existing(lake_path, catalog, llm_flags(params), **{"eval.judge_model": judge_model})
    report = handle.kramabench(list(task_files), ids=ids, missing=missing, oracle=oracle, jobs=jobs, k=k,
                               max_rounds=max_rounds, out=out_path, resume=resume, judge=not no_judge,
                               progress=None if as_json else benchmark_progress(err))
    print_json(report.to_dict()) if as_json else print_benchmark_report(out, report)


@cli.command()
@click.argument("question")
@lake_arguments
@catalog_option
@chroma_option
@click.option("-k", "k", type=click.IntRange(min=1), help="How many entries to retrieve (default from settings).")
@click.option("--files", "files", multiple=True, help="Give a context file (lake-relative) instead of retrieving; repeat.")
@click.option("--guidelines", help="How to print the answer, e.g. 'round to 2 decimals'.")
@click.option("--max-rounds", type=click.IntRange(min=1), help="Rounds before finalizing anyway (default 20).")
@click.option("--clarify", is_flag=True, help="On a terminal, let me pick when readings give different answers.")
@llm_options
@json_option
def ask(question: str, lake_path: str | None, catalog: str | None, chroma_url: str | None, k: int | None,
        files: tuple[str, ...], guidelines: str | None, max_rounds: int | None, clarify: bool, as_json: bool,
        **params: Any) -> None:
    """Answer QUESTION with the DS-STAR agent over the files retrieved from the lake's catalog."""
    from dsstar_lake.terminal.runs import ask_progress, print_answer, terminal_pick

    handle = open_existing(lake_path, catalog, llm_flags(params), **{"catalog.chroma_url": chroma_url})
    # Only a person at a terminal is asked; piped, the run chooses by itself (agent/chooser.py).
    person = terminal_pick(err, click.getchar) if clarify and sys.stdin.isatty() and err.is_terminal else None
    with ask_progress(err, enabled=not as_json) as progress:
        answer = handle.ask(question, k=k, files=list(files) or None, guidelines=guidelines, max_rounds=max_rounds,
                            progress=progress, clarify=person)
    print_json(answer.to_dict()) if as_json else print_answer(out, answer)
    answer.raise_if_unfinished()


@cli.group(name="runs", cls=LakeFirstGroup, invoke_without_command=True, options_metavar="[LAKE] [OPTIONS]")
@lake_option
@catalog_option
@json_option
@click.pass_context
def runs_group(ctx: click.Context, lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """List runs (the default), show one, or resume an interrupted one.

    The lake may come first, as LAKE or --lake LAKE: `dslake runs ./lake show ID`.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(runs_list, lake_path=lake_path, catalog=catalog, as_json=as_json)


@runs_group.command(name="list")
@lake_arguments
@catalog_option
@json_option
def runs_list(lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """List the catalog's runs, newest first."""
    from dsstar_lake.terminal.runs import print_runs

    result = open_existing(lake_path, catalog).runs()
    print_json(result) if as_json else print_runs(out, result)


@runs_group.command(name="show")
@click.argument("run_id")
@lake_arguments
@catalog_option
@json_option
def runs_show(run_id: str, lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Show one run: plan, rounds, verdicts and routes, answer, cost."""
    from dsstar_lake.terminal.runs import print_run

    result = open_existing(lake_path, catalog).run(run_id)
    print_json(result) if as_json else print_run(out, result)


@runs_group.command(name="resume")
@click.argument("run_id")
@lake_arguments
@catalog_option
@llm_options
@json_option
def runs_resume(run_id: str, lake_path: str | None, catalog: str | None, as_json: bool, **params: Any) -> None:
    """Continue an interrupted run from its last completed round."""
    from dsstar_lake.terminal.runs import ask_progress, print_answer

    handle = open_existing(lake_path, catalog, llm_flags(params))
    with ask_progress(err, enabled=not as_json) as progress:
        answer = handle.resume(run_id, progress=progress)
    print_json(answer.to_dict()) if as_json else print_answer(out, answer)
    answer.raise_if_unfinished()


@cli.command()
@click.argument("request")
@lake_arguments
@catalog_option
@chroma_option
@click.option("--rounds", type=click.IntRange(min=0), help="Refinement rounds (default 1, as in the paper).")
@click.option("--max-questions", type=click.IntRange(min=1), help="Most sub-questions in all, refinement rounds included (default 8).")
@click.option("--jobs", type=click.IntRange(min=1), help="Sub-questions answered in parallel (default 2).")
@click.option("-k", "k", type=click.IntRange(min=1), help="Entries retrieved for the request (default 30).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Also write the report and figures here.")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), help="html adds a self-contained report.html.")
@llm_options
@json_option
def report(request: str, lake_path: str | None, catalog: str | None, chroma_url: str | None, rounds: int | None,
           max_questions: int | None, jobs: int | None, k: int | None, out_dir: str | None, fmt: str | None,
           as_json: bool, **params: Any) -> None:
    """Write a cited data-science report for an open-ended REQUEST (DS-STAR+: sub-questions, answers, writer)."""
    from dsstar_lake.terminal.report import print_report, report_progress

    handle = open_existing(lake_path, catalog, llm_flags(params), **{"catalog.chroma_url": chroma_url})
    with report_progress(err, enabled=not as_json) as progress:
        result = handle.report(request, rounds=rounds, max_questions=max_questions, jobs=jobs, k=k, out=out_dir,
                               format=fmt, progress=progress)
    print_json(result.to_dict()) if as_json else print_report(out, result)


@cli.command()
@lake_arguments
@catalog_option
@llm_options
def mcp(lake_path: str | None, catalog: str | None, **params: Any) -> None:
    """Serve the catalog to other agents over MCP on stdio: search, show, status, and ask when a model is set.

    For an MCP client (Claude Desktop, an IDE agent) to start; the README shows its configuration. Nothing
    writes the lake (an ask keeps its run record in the catalog). stdout is the protocol: logs go to stderr.
    """
    from dsstar_lake.mcp.server import serve

    serve(open_existing(lake_path, catalog, llm_flags(params)))


@cli.command()
@lake_arguments
@catalog_option
@json_option
def doctor(lake_path: str | None, catalog: str | None, as_json: bool) -> None:
    """Check this machine: bubblewrap, model credentials, the embedding model, science packages, a catalog.

    One line per check, with how to fix a problem. LAKE (or --catalog) adds the catalog's check, as
    `dslake status --check`. Exits with 8 when a check fails (warnings do not count).
    """
    from dsstar_lake.lake import Lake
    from dsstar_lake.usecases.doctor import print_doctor

    report = Lake.doctor(lake_path, catalog)
    print_json(report.to_dict()) if as_json else print_doctor(out, report)
    if report.failed:
        sys.exit(STATUS_PROBLEMS)  # the code for "a problem was reported, with its fix"


@cli.group(name="keys", invoke_without_command=True)
@click.pass_context
def keys_group(ctx: click.Context) -> None:
    """Keep model keys in a file of your own (mode 0600) instead of the environment; a set variable still wins."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(keys_list)


@keys_group.command(name="set")
@click.argument("provider", type=click.Choice(KEYED_PROVIDERS))
def keys_set(provider: str) -> None:
    """Store PROVIDER's key: typed at a hidden prompt, or read from standard input when it is a pipe."""
    from dsstar_lake.llm import keys

    value = click.prompt(f"{provider} key", hide_input=True) if sys.stdin.isatty() else sys.stdin.read()
    out.print(f"stored the {provider} key in {keys.set_key(provider, value)}", highlight=False)


@keys_group.command(name="list")
@json_option
def keys_list(as_json: bool) -> None:
    """Name the providers that have a stored key (never the keys)."""
    from dsstar_lake.llm import keys

    names, path = keys.stored_providers(), keys.keys_path()
    if as_json:
        print_json({"path": str(path), "providers": names})
    else:
        out.print(f"{', '.join(names) if names else 'no keys stored'} ({path})", highlight=False)


@keys_group.command(name="remove")
@click.argument("provider", type=click.Choice(KEYED_PROVIDERS))
def keys_remove(provider: str) -> None:
    """Forget PROVIDER's stored key."""
    from dsstar_lake.llm import keys

    out.print(f"removed the {provider} key" if keys.remove_key(provider) else f"no {provider} key was stored",
              highlight=False)


@keys_group.command(name="path")
def keys_path() -> None:
    """Print where keys are kept."""
    from dsstar_lake.llm import keys

    click.echo(str(keys.keys_path()))


@cli.command()
@lake_arguments
@catalog_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback unless --allow-remote).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port to bind.")
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host; every request then needs the token.")
@click.option("--token", envvar="DSLAKE_SERVE_TOKEN", help="Token for --allow-remote (or DSLAKE_SERVE_TOKEN).")
@llm_options
def serve(lake_path: str | None, catalog: str | None, host: str, port: int, allow_remote: bool,
          token: str | None, **params: Any) -> None:
    """Serve local web pages over the catalog, the runs and the reports (http://127.0.0.1:8765/).

    Pages: status, search, each entry with a data preview, runs with their rounds, and reports; with a model, a
    question box starts an ask (--llm manual --manual-dir DIR: answer its prompts on the run page). Nothing writes
    the lake. Binds to loopback; another address needs --allow-remote and a token.
    """
    from dsstar_lake.mcp.server import check_catalog
    from dsstar_lake.web.access import check_bind, check_port
    from dsstar_lake.web.app import serve as run_server

    check_bind(host, allow_remote, token)  # before opening anything: a refused bind is one line
    lake = open_existing(lake_path, catalog, llm_flags(params))
    check_catalog(lake)  # no catalog, or a damaged one: one line and its code, before anything says "serving"
    check_port(host, port)  # a port in use: one line, before "serving"
    shown = f"[{host}]" if ":" in host else host
    err.print(f"serving http://{shown}:{port}/ (Ctrl-C stops)", highlight=False)
    run_server(lake, host=host, port=port, allow_remote=allow_remote, token=token)


add_examples(cli)


def main() -> None:
    """Run the CLI."""
    # Registered first, so it runs last at exit, after every clean-up registered since (the profilers' pool,
    # Chroma's): the interpreter's own final garbage collections then skip the objects still alive, which once
    # Chroma or the ONNX model is loaded cost up to a second of every index and search (a process's memory goes
    # back to the system at exit all the same; files and the manifest are closed by the commands themselves).
    atexit.register(gc.freeze)
    cli()


if __name__ == "__main__":
    main()
