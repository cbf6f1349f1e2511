"""What the pages show beyond what the facade returns as is: a run's scripts and figures, a report (the data
preview is web/preview.py).

Everything here reads; nothing writes the lake or the catalog. Text from the lake or a model stays text: the
templates escape it (Jinja2 autoescape).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from dsstar_lake.runs.record import FIGURES_DIR
from dsstar_lake.sandbox.figures import MIME, read_figure

MAX_TEXT = 20_000  # characters of a script or its output shown on a run page
REPORT_LIMIT = 64 * 2**20
SCRIPT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}$")


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def read_run_file(folder: str | Path, name: str, limit: int = MAX_TEXT) -> str | None:
    """Return one of a run's own files (NAME.py, NAME.out), never following a link a script may have planted."""
    if not SCRIPT_NAME.match(name):
        return None
    try:
        fd = os.open(Path(folder) / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return _cut(handle.read(limit + 1000).decode("utf-8", errors="replace"), limit)


def run_scripts(view: dict[str, Any]) -> None:
    """Add each round script's code and full output to a run view (show_run keeps only the first lines)."""
    for slot in view.get("rounds") or []:
        for script in slot.get("scripts") or []:
            name = str(script.get("name") or "")
            script["code"] = read_run_file(view["folder"], f"{name}.py")
            script["output"] = read_run_file(view["folder"], f"{name}.out")


def report_page(view: dict[str, Any]) -> str | None:
    """Return a report run's HTML page: report.html as written, else report.md rendered the same sanitising way."""
    if (view.get("meta") or {}).get("kind") != "report":
        return None
    # report.html embeds its figures as data URIs: read it whole, within reason.
    written = read_run_file(view["folder"], "report.html", limit=REPORT_LIMIT)
    if written is not None:
        return written
    markdown = read_run_file(view["folder"], "report.md")
    if markdown is None:
        return None
    from dsstar_lake.report.htmlpage import html_page

    folder = Path(view["folder"])
    figures = {f: folder / f for q in view.get("questions") or [] for f in q.get("figures") or []
               if isinstance(f, str) and (folder / f).is_file() and not (folder / f).is_symlink()}
    numbers = [q["n"] for q in view.get("questions") or [] if isinstance(q.get("n"), int)]
    return html_page(markdown, (view.get("report") or {}).get("title") or "Report", figures, numbers)



def run_figure(view: dict[str, Any], name: str) -> tuple[bytes, str] | None:
    """Return one of a run's images and its media type, only when the run's record names it, else None.

    The record names each round script's figures and each report sub-question's (figures/NAME in the run
    folder); any other name, `..` or an absolute path among them, is not one of those and gets nothing.
    """
    if name not in run_figures(view):
        return None
    folder, _, base = name.partition("/")
    if folder != FIGURES_DIR or not base or "/" in base:
        return None
    data = read_figure(Path(view["folder"]) / FIGURES_DIR, base)
    return (data, MIME[Path(base).suffix.lower()]) if data else None


def run_figures(view: dict[str, Any]) -> set[str]:
    """Return the figures a run's record names: its rounds' scripts' and its report sub-questions'."""
    names = [f for slot in view.get("rounds") or [] for s in slot.get("scripts") or [] for f in s.get("figures") or []]
    names += [f for q in view.get("questions") or [] for f in q.get("figures") or []]
    return {f for f in names if isinstance(f, str)}
