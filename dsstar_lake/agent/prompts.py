"""Prompt templates: one text file per role in prompts/, with explicit {variables} filled by render()."""

from __future__ import annotations

import string
from functools import cache
from pathlib import Path

from dsstar_lake.errors import ConfigError

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


@cache
def template(name: str) -> str:
    """Return the text of prompts/<name>.txt."""
    path = PROMPTS_DIR / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"prompt template {path} cannot be read: {exc.strerror}") from exc


@cache
def variables(name: str) -> frozenset[str]:
    """Return the {variables} a template expects."""
    return frozenset(field for _, field, _, _ in string.Formatter().parse(template(name)) if field)


def render(name: str, **values: object) -> str:
    """Fill a template; every variable must be given and nothing else (a typo is a bug, not a blank)."""
    expected = variables(name)
    missing, extra = expected - values.keys(), values.keys() - expected
    if missing or extra:
        raise ValueError(f"prompt {name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
    # Values are inserted as-is: braces inside code or data never reach the formatter.
    return template(name).format_map({k: str(v) for k, v in values.items()})
