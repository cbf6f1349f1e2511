"""The rich consoles the CLI prints to: on a terminal as rich draws them; into a pipe or a file, every character kept."""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.panel import Panel
from rich.table import Table

# Width of a pipe or a file when COLUMNS does not say (rich's own default, 80, splits most tables' cells).
PIPE_WIDTH = 120


class CliConsole(Console):
    """A Console that, when its stream is not a terminal, wraps instead of cutting.

    Plain lines are never wrapped (soft wrap: a pager or an editor wraps them); tables get at least PIPE_WIDTH
    columns (COLUMNS, when set, wins) and fold a long cell over several lines instead of ending it with an
    ellipsis, so that `dslake runs | cat` or `dslake search ... > hits.txt` keeps every character.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("soft_wrap", True)
        super().__init__(**kwargs)

    @property  # type: ignore[override]
    def size(self) -> ConsoleDimensions:
        """Return the terminal's size, or at least PIPE_WIDTH columns for a pipe (COLUMNS wins when set)."""
        size = Console.size.fget(self)  # type: ignore[attr-defined]
        if self.is_terminal or self._width is not None:
            return size
        return ConsoleDimensions(max(size.width, PIPE_WIDTH), size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print as rich does; into a pipe, with every table's cells folded rather than cut."""
        if not self.is_terminal:
            for obj in objects:
                fold_cells(obj)
        super().print(*objects, **kwargs)


def fold_cells(renderable: Any) -> None:
    """Make the tables in a renderable (a table, or a panel holding one) wrap long cells instead of cutting them."""
    if isinstance(renderable, Panel):
        fold_cells(renderable.renderable)
    if isinstance(renderable, Table):
        for column in renderable.columns:
            column.no_wrap = False
            column.overflow = "fold"


def make_console(stderr: bool = False) -> CliConsole:
    """Return a console for the CLI's standard output (or its standard error)."""
    return CliConsole(stderr=stderr)
