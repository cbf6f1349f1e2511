"""What every dslake command shares: the error-to-exit-code group, JSON output, opening a lake, common options.

The commands themselves stay in cli.py, thin: parse, call the Lake facade, render.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from dsstar_lake.cli_help import HiddenChoice
from dsstar_lake.console import make_console
from dsstar_lake.errors import DslakeError
from dsstar_lake.modelnames import PROVIDERS, ROLES

out = make_console()  # into a pipe or a file, tables wrap instead of being cut at 80 columns
err = make_console(stderr=True)


class DslakeGroup(click.Group):
    """A click group that turns DslakeError into one line and an exit code (never a traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DslakeError as exc:
            from dsstar_lake.render import safe  # a message can quote a file name or a model's words

            err.print(f"[red]error:[/red] {safe(exc.message)}", highlight=False)
            if exc.hint:
                err.print(f"[dim]hint:[/dim] {safe(exc.hint)}", highlight=False)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(130)


def print_json(data: Any) -> None:
    """Print a result as the running command's one JSON object (docs/json.md: schema, ISO times, rounded timings)."""
    from dsstar_lake.jsonout import command_path, dumps

    click.echo(dumps(command_path(click.get_current_context()), data))


lake_option = click.option("--lake", "lake_path", type=click.Path(file_okay=True), help="The lake folder.")
catalog_option = click.option("--catalog", type=click.Path(file_okay=False), help="Catalog folder (default LAKE/.dslake).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
chroma_option = click.option("--chroma-url", help="Use a shared Chroma server (http://HOST:PORT) for the vectors.")


def llm_options(command: Any) -> Any:
    """Add the model-choice flags shared by ask, report and eval: --llm, --model, --model-ROLE, --base-url, budgets."""
    options = [
        # scripted (JSONL rules, for tests) is accepted but not advertised: README, "Testing without a model".
        click.option("--llm", "llm_provider",
                     type=HiddenChoice([p for p in PROVIDERS if p != "scripted"], ["scripted"]),
                     help="Model provider (default from settings: gemini)."),
        click.option("--model", help="Model for every role."),
        click.option("--base-url", help="Endpoint for an OpenAI-compatible server (or a Gemini proxy)."),
        click.option("--manual-dir", type=click.Path(file_okay=False), help="Folder for the manual provider's files."),
        click.option("--scripted-file", type=click.Path(dir_okay=False), hidden=True,
                     help="JSONL rules for the scripted provider."),
        click.option("--cache", type=click.Choice(["off", "record", "replay"]), help="LLM response cache mode."),
        click.option("--max-llm-calls", type=click.IntRange(min=0), help="Stop and finalize after this many calls."),
        click.option("--max-cost", type=click.FloatRange(min=0), help="Stop and finalize past this cost (USD)."),
        *[click.option(f"--model-{role}", f"model_{role}", help=f"Model for the {role} role.") for role in ROLES],
    ]
    for option in reversed(options):
        command = option(command)
    return command


def llm_flags(params: dict[str, Any]) -> Any:
    """Collect the llm_options flags into an LlmFlags (and remove them from params)."""
    from dsstar_lake.llm.flags import LlmFlags

    role_models = {role: params.pop(f"model_{role}", None) for role in ROLES}
    return LlmFlags(
        provider=params.pop("llm_provider", None), model=params.pop("model", None),
        role_models={k: v for k, v in role_models.items() if v}, base_url=params.pop("base_url", None),
        manual_dir=params.pop("manual_dir", None), scripted_file=params.pop("scripted_file", None),
        cache=params.pop("cache", None), max_llm_calls=params.pop("max_llm_calls", None),
        max_cost=params.pop("max_cost", None))
