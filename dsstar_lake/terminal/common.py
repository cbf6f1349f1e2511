"""What every dslake command shares: the error-to-exit-code group, JSON output, opening a lake, common options.

The commands themselves stay in cli.py, thin: parse, call the Lake facade, render.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import click

from dsstar_lake.base.errors import DslakeError
from dsstar_lake.base.modelflags import (
    MODEL_FLAGS,
    ROLE_FLAG,
    ROLE_FLAG_HELP,
    SECTION,
    ModelFlag,
    parse_role_model,
    role_flag,
)
from dsstar_lake.base.modelnames import ROLES
from dsstar_lake.terminal.closed_pipe import reader_may_leave
from dsstar_lake.terminal.console import make_console
from dsstar_lake.terminal.help import HiddenChoice, SectionedCommand, SectionOption

out = make_console()  # into a pipe or a file, tables wrap instead of being cut at 80 columns
err = make_console(stderr=True)


# ctx.meta keys (shared by a command's context and its groups'): --json was given; an object was printed.
JSON_ASKED = "dslake.json"
JSON_ANSWERED = "dslake.json_answered"


class DslakeGroup(click.Group):
    """A click group that turns DslakeError into one line and an exit code (never a traceback).

    Under --json the failure is also one JSON object on stdout (docs/json.md: `dslake.error/1`), whatever failed:
    dslake's own errors, click's usage errors, a crash (its traceback still goes to stderr).
    Its commands list the model flags under a heading of their own; its subgroups are DslakeGroups too.
    """

    command_class = SectionedCommand
    group_class = type

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Note --json among the words before parsing them: a failure to parse the rest answers in JSON too."""
        if "--json" in args[: args.index("--") if "--" in args else None]:
            ctx.meta[JSON_ASKED] = True
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        with reader_may_leave():  # `dslake --help | head -1`
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with reader_may_leave():  # `dslake search ... | head -1` ends quietly with 0, as `ls | head` does
            return self._invoke_telling_errors(ctx)

    def _invoke_telling_errors(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # the reader left: nothing to tell it (reader_may_leave ends the command)
            raise
        except DslakeError as exc:
            from dsstar_lake.terminal.results import (
                safe,  # a message can quote a file name or a model's words
            )

            _json_error(ctx, exc.message, exc.hint, exc.exit_code)
            err.print(f"[red]error:[/red] {safe(exc.message)}", highlight=False)
            if exc.hint:
                err.print(f"[dim]hint:[/dim] {safe(exc.hint)}", highlight=False)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:  # click's usage errors: it prints the usage on stderr and exits
            _json_error(ctx, exc.format_message(), None, exc.exit_code)
            raise
        except KeyboardInterrupt:
            _json_error(ctx, "interrupted", None, 130)
            err.print("interrupted")
            sys.exit(130)
        except (click.exceptions.Exit, click.Abort):  # a chosen exit code, or a prompt given up: no failure to tell
            raise
        except Exception as exc:  # a bug in dslake: the traceback on stderr as ever, the object for the reader
            _json_error(ctx, f"{type(exc).__name__}: {exc}", "this is a bug in dslake; please report it "
                        "with the traceback printed on stderr", 1)
            raise


def _json_error(ctx: click.Context, message: str, hint: str | None, exit_code: int) -> None:
    """Print the failure as the command's one JSON object when --json was asked and no result was printed."""
    if not ctx.meta.get(JSON_ASKED) or ctx.meta.get(JSON_ANSWERED):
        return
    from dsstar_lake.views.jsonout import error_dumps

    ctx.meta[JSON_ANSWERED] = True  # an enclosing group sees the same meta: one object, however deep the failure
    click.echo(error_dumps(message, hint, exit_code))


def print_json(data: Any, final: bool = True) -> None:
    """Print a result as the running command's one JSON object (docs/json.md: schema, ISO times, rounded timings).

    final: this object is the command's answer, so a failure after it prints no second one (an ask that stopped
    resumable prints its answer, then exits 5); a --watch stream's passes are not final.
    """
    from dsstar_lake.views.jsonout import command_path, dumps

    ctx = click.get_current_context()
    click.echo(dumps(command_path(ctx), data))
    if final:
        ctx.meta[JSON_ANSWERED] = True


lake_option = click.option("--lake", "lake_path", type=click.Path(file_okay=True),
                           help="The lake folder (or give it as LAKE).")


def one_lake(argument: str | None, option: str | None, after_text: bool = False) -> str | None:
    """Return the lake a command was given as LAKE or as --lake (the same one twice is fine, two are not).

    after_text: LAKE follows a question or a name, so a missing folder there is most likely the last word of an
    unquoted question (`dslake search ozone county` reads "county" as LAKE); the hint says so.
    """
    from dsstar_lake.base.errors import LakeNotFound, UsageError

    quotes = "the lake comes after the other arguments: put a question or request of several words in quotes"
    if argument is not None and option is not None and argument != option:
        raise UsageError(f"two lakes given: {argument} and --lake {option}; give one",
                         hint=quotes if after_text else None)
    if after_text and option is None and argument is not None and "://" not in argument \
            and not Path(argument).expanduser().exists():
        raise LakeNotFound(f"lake not found: {argument}", hint=quotes)
    return option if option is not None else argument


def lake_arguments(command: Any) -> Any:
    """Accept the lake as an optional last argument LAKE or as --lake LAKE; the command gets it as lake_path.

    Put it below the command's own arguments, so that LAKE comes after them on the command line.
    """

    @functools.wraps(command)
    def with_one_lake(*args: Any, lake_arg: str | None = None, lake_path: str | None = None, **kwargs: Any) -> Any:
        params = click.get_current_context().command.params
        after_text = any(isinstance(p, click.Argument) and p.name != "lake_arg" for p in params)
        return command(*args, lake_path=one_lake(lake_arg, lake_path, after_text), **kwargs)

    with_one_lake = lake_option(with_one_lake)
    return click.argument("lake_arg", metavar="[LAKE]", required=False, type=click.Path(file_okay=True))(with_one_lake)


def index_target(lake: str | None, paths: tuple[str, ...], lake_path: str | None,
                 catalog: str | None) -> tuple[str | None, tuple[str, ...]]:
    """Return (lake, PATHS) of `dslake index`: with --lake, the first argument is a PATH; with neither, --catalog
    names a catalog that remembers its lake."""
    if lake_path is not None:
        return lake_path, (lake, *paths) if lake is not None and lake != lake_path else paths
    if lake is None and catalog is None:
        raise click.UsageError("Missing argument LAKE: dslake index LAKE (or --lake LAKE, or --catalog DIR of a "
                               "catalog that indexed it before)")
    return lake, paths


def group_param(name: str) -> Any:
    """Return a parameter the enclosing groups of the running command were given (None when none was)."""
    ctx = click.get_current_context(silent=True)
    parent = ctx.parent if ctx is not None else None
    while parent is not None:
        if parent.params.get(name) is not None:
            return parent.params[name]
        parent = parent.parent
    return None


class LakeFirstGroup(DslakeGroup):
    """A group that also takes the lake before its subcommand: `dslake runs ./lake` and `dslake runs ./lake show
    ID` mean `dslake runs --lake ./lake …` (a first word that names no subcommand and is no option is the lake)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Read the first word that is neither an option, an option's value nor a subcommand as --lake LAKE (also
        after the group's options: `dslake runs --json ./lake`), then parse as usual."""
        takes_value = {name for param in self.get_params(ctx) if isinstance(param, click.Option) and not param.is_flag
                       for name in param.opts}
        i = 0
        while i < len(args):
            word = args[i]
            if word == "--":
                break
            if word.startswith("-"):
                i += 2 if word in takes_value else 1  # '--lake=X' is one word
                continue
            if word not in self.commands:
                args = [*args[:i], "--lake", word, *args[i + 1 :]]
            break
        return super().parse_args(ctx, args)


catalog_option = click.option("--catalog", type=click.Path(file_okay=False), help="Catalog folder (default LAKE/.dslake).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
chroma_option = click.option("--chroma-url", help="Use a shared Chroma server (http://HOST:PORT) for the vectors.")


def _model_option(flag: ModelFlag) -> Any:
    """Build the click option of one row of the model-flag table."""
    kinds: dict[str, Any] = {
        "text": None, "folder": click.Path(file_okay=False), "file": click.Path(dir_okay=False),
        "count": click.IntRange(min=0), "cost": click.FloatRange(min=0),
        "choice": HiddenChoice(list(flag.choices), list(flag.unadvertised)),
    }
    return click.option(flag.flag, flag.dest, cls=SectionOption, section=SECTION, type=kinds[flag.kind],
                        hidden=flag.hidden, help=flag.help)


def llm_options(command: Any) -> Any:
    """Add the model flags (dsstar_lake/base/modelflags.py) to a command that calls a model, under "Model options"."""
    options = [
        *[_model_option(flag) for flag in MODEL_FLAGS],
        click.option(ROLE_FLAG, "llm_role_models", cls=SectionOption, section=SECTION, multiple=True,
                     metavar="ROLE=MODEL", help=ROLE_FLAG_HELP),
        # The per-role spellings of before --model-for, kept working for scripts that use them.
        *[click.option(role_flag(role), f"llm_model_{role}", hidden=True) for role in ROLES],
    ]
    for option in reversed(options):
        command = option(command)
    return command


def llm_flags(params: dict[str, Any]) -> Any:
    """Collect the llm_options flags into an LlmFlags (and remove them from params)."""
    from dsstar_lake.base.errors import UsageError
    from dsstar_lake.llm.flags import LlmFlags

    role_models = {role: model for role in ROLES if (model := params.pop(f"llm_model_{role}", None))}
    for text in params.pop("llm_role_models", None) or ():
        try:
            role, model = parse_role_model(text)
        except ValueError as exc:
            raise UsageError(f"{ROLE_FLAG}: {exc}") from None
        role_models[role] = model
    return LlmFlags(role_models=role_models, **{flag.name: params.pop(flag.dest, None) for flag in MODEL_FLAGS})
