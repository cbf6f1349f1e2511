"""The report's prompt templates: one text file per use in this folder, filled like the agent's."""

from __future__ import annotations

from pathlib import Path

from dsstar_lake.agent.prompts import Templates

HERE = Path(__file__).resolve().parent
_REPORT = Templates(HERE, "report prompt")


def template(name: str) -> str:
    """Return the text of report/<name>.txt."""
    return _REPORT.template(name)


def fill(name: str, **values: object) -> str:
    """Fill a report template; every variable must be given and nothing else."""
    return _REPORT.fill(name, **values)
