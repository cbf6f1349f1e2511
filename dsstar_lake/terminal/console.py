"""The consoles the CLI prints to: on a terminal as rich draws them; into a pipe or a file, plain text.

The one rule every command's output follows: frames, boxes and colour are for a person at a terminal. Into a pipe
or a file (`dslake models | grep`, `dslake runs > runs.txt`) a table is aligned columns, one line per row with
every character of its cells, and a framed box is `title: text`; no box-drawing character and no ANSI code is
written (rich writes no colour off a terminal; FORCE_COLOR, which rich honours, still asks for a terminal's look).
The commands print rich tables and panels as they would on a terminal; this console decides how they look.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from dsstar_lake.terminal.closed_pipe import leave_quietly

if TYPE_CHECKING:
    from rich.panel import Panel
    from rich.table import Table

COLUMN_GAP = "  "
LONG_CELL = 60  # a cell longer than this does not widen its column when most of the column's cells are shorter


def _loaded(module: str, name: str) -> tuple[type, ...]:
    """Return (the class module.name) once its module is imported, else (): nothing can be an instance before.

    A command that prints no table or panel (a piped search, an ask's --json) then never imports rich.table and
    rich.panel (~0.03 s of a cold command), and this console still knows every one it is given.
    """
    cls = getattr(sys.modules.get(module), name, None)
    return (cls,) if cls is not None else ()


def _frames() -> tuple[type, ...]:
    return _loaded("rich.table", "Table") + _loaded("rich.panel", "Panel")


class CliConsole(Console):
    """A Console that draws on a terminal and writes plain text anywhere else.

    Plain lines are never wrapped (soft wrap: a pager or an editor wraps them, `grep` sees whole lines).
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("soft_wrap", True)
        super().__init__(**kwargs)

    def on_broken_pipe(self) -> None:
        """End the command quietly with 0 when the reader has gone (rich's own answer exits 1)."""
        leave_quietly()

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print as rich does on a terminal; elsewhere, tables and panels as plain lines."""
        frames = _frames()
        if self.is_terminal or not any(isinstance(obj, frames) for obj in objects):
            super().print(*objects, **kwargs)
            return
        for obj in objects:
            if isinstance(obj, frames):
                lines = plain_lines(obj)
                if lines:
                    super().print("\n".join(lines), markup=False, highlight=False, emoji=False)
            else:
                super().print(obj, **kwargs)


def plain_lines(renderable: Table | Panel | str | Text) -> list[str]:
    """Return a table, a panel or a text as plain lines (no frame, no style, trailing spaces dropped)."""
    if isinstance(renderable, _loaded("rich.panel", "Panel")):
        return _panel_lines(renderable)
    if isinstance(renderable, _loaded("rich.table", "Table")):
        return _table_lines(renderable)
    return plain_text(renderable).splitlines()


def plain_text(cell: Any) -> str:
    """Return the words of a cell or title: markup read (so escaped brackets print as brackets), styles dropped."""
    if cell is None:
        return ""
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return Text.from_markup(cell, emoji=False).plain
    if isinstance(cell, _frames()):
        return "\n".join(plain_lines(cell))
    return str(cell)


def _panel_lines(panel: Panel) -> list[str]:
    """A panel as `title: text` when its text is one line, else the title line, the text and a blank line."""
    title = plain_text(panel.title).strip()
    body = plain_text(panel.renderable).rstrip("\n").splitlines() or [""]
    if not title:
        return body
    if len(body) == 1 and not isinstance(panel.renderable, _frames()):
        return [f"{title}: {body[0]}".rstrip()]
    return [f"{title}:", *body, ""]


def _table_lines(table: Table) -> list[str]:
    """A table as aligned columns: its title, a header line, one line per row, then its caption.

    A cell of several lines (a hit's summary lines) keeps its first line in the row; the others follow the row,
    each starting at the cell's column, so that a row's first line always holds every column.
    """
    columns = table.columns
    rows = [[plain_text(c.header) for c in columns]] if table.show_header else []
    cells = [list(c.cells) for c in columns]
    rows += [[plain_text(column[r]) if r < len(column) else "" for column in cells] for r in range(table.row_count)]
    split = [[cell.splitlines() or [""] for cell in row] for row in rows]
    widths = [_column_width([cell_len(row[i][0]) for row in split]) for i in range(len(columns))]
    starts = [sum(widths[:i]) + len(COLUMN_GAP) * i for i in range(len(columns))]
    lines = [plain_text(table.title)] if table.title else []
    for row in split:
        firsts = [_justified(cell[0], widths[i], columns[i].justify) for i, cell in enumerate(row)]
        lines.append(COLUMN_GAP.join(firsts).rstrip())
        for i, cell in enumerate(row):
            lines += [(" " * starts[i] + more).rstrip() for more in cell[1:]]
    if table.caption:
        lines.append(plain_text(table.caption))
    return lines


def _column_width(lengths: list[int]) -> int:
    """Return a column's width: its longest cell, or, when only a few cells are long, its longest short cell.

    One long value (a list of patterns in `dslake config`) would otherwise push every row's next columns far to
    the right; its own row is then the one that is not aligned, and still holds every character.
    """
    short = [n for n in lengths if n <= LONG_CELL]
    return max(short) if short and len(short) > len(lengths) // 2 else max(lengths, default=0)


def _justified(text: str, width: int, justify: str | None) -> str:
    pad = " " * max(0, width - cell_len(text))
    return pad + text if justify == "right" else text + pad


def make_console(stderr: bool = False) -> CliConsole:
    """Return a console for the CLI's standard output (or its standard error)."""
    return CliConsole(stderr=stderr)
