"""Prompt templates: one text file per role in a folder, with explicit {variables} filled by fill()."""

from __future__ import annotations

import string
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

from dsstar_lake.base.errors import ConfigError
from dsstar_lake.base.untrusted import for_prompt, frame, heading_title

T = TypeVar("T")

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


class Templates:
    """The <name>.txt templates of one folder; `kind` names them in errors ("prompt", "report prompt")."""

    def __init__(self, folder: Path, kind: str) -> None:
        self.folder = folder
        self.kind = kind
        self.template = cache(self._read)
        self.variables = cache(self._variables)

    def _read(self, name: str) -> str:
        path = self.folder / f"{name}.txt"
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{self.kind} template {path} cannot be read: {exc.strerror}") from exc

    def _variables(self, name: str) -> frozenset[str]:
        return frozenset(field for _, field, _, _ in string.Formatter().parse(self.template(name)) if field)

    def fill(self, name: str, **values: object) -> str:
        """Fill a template; every variable must be given and nothing else (a typo is a bug, not a blank)."""
        expected = self.variables(name)
        missing, extra = expected - values.keys(), values.keys() - expected
        if missing or extra:
            raise ValueError(f"{self.kind} {name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
        # Values are inserted as-is (braces inside code or data never reach the formatter), but with control and
        # format characters escaped: no value brings terminal sequences or bidi tricks into a prompt.
        return self.template(name).format_map({k: for_prompt(v) for k, v in values.items()})


_AGENT = Templates(PROMPTS_DIR, "prompt")


def template(name: str) -> str:
    """Return the text of prompts/<name>.txt."""
    return _AGENT.template(name)


def variables(name: str) -> frozenset[str]:
    """Return the {variables} a template expects."""
    return _AGENT.variables(name)


def fill(name: str, **values: object) -> str:
    """Fill an agent prompt; every variable must be given and nothing else."""
    return _AGENT.fill(name, **values)


@cache
def section_titles() -> frozenset[str]:
    """Return the titles of every agent template's own headings (`# Question`, `# Given data: ...`, `# Your task`)."""
    return frozenset(heading_title(line) for path in PROMPTS_DIR.glob("*.txt")
                     for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#"))


def printed(text: str) -> str:
    """Frame what a script printed (or its error) for a prompt, shown as printed.

    The frame's tag bounds it and the prompt says its text is data; of its '#' lines only those that read as one of
    the templates' own headings get a backslash, so `# Question` in an output cannot pose as the prompt's.
    """
    return frame(text, "output", section_titles())


def ask_with_reminder(complete: Callable[[str], str], prompt: str, parse: Callable[[str], T | None], expected: str,
                      unreadable: Callable[[str], None] = lambda text: None) -> tuple[T | None, str]:
    """Ask; on an unreadable answer (parse gives None) ask once more with the terse reminder (prompts/reminder.txt).

    Return what parse read (None: the reminder's answer was unreadable too) and the last answer's text;
    unreadable(text) is told of the first unreadable answer before the reminder goes out.
    """
    text = complete(prompt)
    value = parse(text)
    if value is None:
        unreadable(text)
        text = complete(fill("reminder", prompt=prompt, expected=expected))
        value = parse(text)
    return value, text
