"""What `dslake COMMAND --help` shows beyond the options: an example per command, and choices kept off the list."""

from __future__ import annotations

from typing import Any

import click

# Command path (without "dslake") -> example lines. A test runs every command's --help and looks for them.
EXAMPLES: dict[str, list[str]] = {
    "": ["dslake index ./lake", 'dslake ask "Which county had the most unhealthy days?" --lake ./lake'],
    "index": ["dslake index ./lake", "dslake index ./lake sensors/new.csv      # only these paths",
              "dslake index ./lake --watch --json",
              "dslake index /shared/lake --cluster tcp://10.0.0.5:8786   # profile on a Dask cluster"],
    "status": ["dslake status ./lake", "dslake status ./lake --check --json     # exit 8 when it finds a problem"],
    "show": ["dslake show sensors/daily/readings_2024-01-01.csv --lake ./lake"],
    "search": ['dslake search "ozone by county in 2024" --lake ./lake -k 5 -v'],
    "config": ["dslake config", "DSLAKE_RETRIEVE_K=20 dslake config --lake ./lake --json"],
    "models": ["dslake models", "dslake models --llm openai --base-url http://localhost:11434/v1 --model llama3.1"],
    "eval": ["dslake eval retrieval --tasks tasks/wildfire.json --lake ./lake"],
    "eval retrieval": ["dslake eval retrieval --tasks tasks/wildfire.json --lake ./lake -k 1,5,10"],
    "eval kramabench": ["dslake eval kramabench --tasks tasks/wildfire.json --lake ./lake --out results.jsonl",
                        "dslake eval kramabench --tasks tasks/wildfire.json --lake ./lake --out results.jsonl "
                        "--resume"],
    "ask": ['dslake ask "Which county had the most unhealthy days?" --lake ./lake',
            'dslake ask "Total units sold?" --lake ./lake --files sales.csv --guidelines "an integer" --json'],
    "runs": ["dslake runs --lake ./lake", "dslake runs show 20261125-120000-ab12 --lake ./lake"],
    "runs list": ["dslake runs list --lake ./lake --json"],
    "runs show": ["dslake runs show 20261125-120000-ab12 --lake ./lake   # a unique prefix is enough"],
    "runs resume": ["dslake runs resume 20261125-120000-ab12 --lake ./lake"],
    "report": ['dslake report "How did sales differ by region?" --lake ./lake --format html --out ./report'],
    "serve": ["dslake serve --lake /data/lake      # then open http://127.0.0.1:8765/"],
    "mcp": ["dslake mcp --lake /data/lake      # started by an MCP client; see the README for its config"],
    "doctor": ["dslake doctor", "dslake doctor ./lake --json          # exit 8 when a check fails"],
    "keys": ["dslake keys set gemini", "dslake keys list"],
    "keys set": ["dslake keys set gemini                 # asks for the key, not echoed",
                 "printf %s \"$KEY\" | dslake keys set openai   # from a pipe"],
    "keys list": ["dslake keys list --json"],
    "keys remove": ["dslake keys remove openai"],
    "keys path": ["dslake keys path"],
}


def add_examples(command: click.Command, path: str = "") -> None:
    """Give a command and its subcommands an "Examples" epilog from EXAMPLES (lines kept as written)."""
    lines = EXAMPLES.get(path)
    if lines and not command.epilog:
        # \b keeps click from re-wrapping the example lines into one paragraph.
        command.epilog = "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            add_examples(sub, f"{path} {name}".strip())


class HiddenChoice(click.Choice):
    """A choice that also accepts values it does not advertise (the scripted test provider)."""

    def __init__(self, shown: list[str], hidden: list[str]) -> None:
        super().__init__([*shown, *hidden])
        self.shown = list(shown)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        """Return the choices as help lists them: only the advertised ones."""
        return "[" + "|".join(self.shown) + "]"

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        """Say which values are accepted, naming only the advertised ones."""
        return f"{value!r} is not one of {', '.join(map(repr, self.shown))}."

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        """Complete only the advertised values."""
        from click.shell_completion import CompletionItem

        return [CompletionItem(c) for c in self.shown if c.startswith(incomplete)]


class SectionOption(click.Option):
    """An option listed under a heading of its own in the help (the model flags under "Model options")."""

    def __init__(self, *args: Any, section: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.section = section


class SectionedCommand(click.Command):
    """A command whose help lists its options under "Options", then each SectionOption heading in turn."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Write the options, grouped by section, the command's own first."""
        sections: dict[str, list[tuple[str, str]]] = {"Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and not isinstance(param, click.Argument):  # arguments are in the usage line
                sections.setdefault(getattr(param, "section", "Options"), []).append(record)
        for heading, rows in sections.items():
            if rows:
                with formatter.section(heading):
                    formatter.write_dl(rows)
