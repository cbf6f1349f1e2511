"""The report's prompt templates: one text file per use in this folder, filled like the agent's."""

from __future__ import annotations

import string
from functools import cache
from pathlib import Path

from dsstar_lake.errors import ConfigError

HERE = Path(__file__).resolve().parent


@cache
def template(name: str) -> str:
    """Return the text of report/<name>.txt."""
    path = HERE / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"report template {path} cannot be read: {exc.strerror}") from exc


def render(name: str, **values: object) -> str:
    """Fill a template; every variable must be given and nothing else (a typo is a bug, not a blank)."""
    expected = {field for _, field, _, _ in string.Formatter().parse(template(name)) if field}
    missing, extra = expected - values.keys(), values.keys() - expected
    if missing or extra:
        raise ValueError(f"report prompt {name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
    return template(name).format_map({k: str(v) for k, v in values.items()})
