"""A name that promises values on a grid the file does not hold: `mock_tiegcm_grid_sept2019.npz` holds three 1-D
arrays (lat_grid (36,), lon_grid (72,), alt_grid (15,)): the axes of a grid, and no value on it.

A coder who reads 'grid' loads the file for the gridded quantity (a density, a temperature) and finds none; the
entry says so. The rule is narrow on purpose (no false alarm elsewhere in a lake): the name holds the word 'grid',
'gridded' or 'mesh', the file is an array archive with at least two arrays, and every array is 1-D.
"""

from __future__ import annotations

import math
import re
from typing import Any

GRID_WORDS = {"grid", "grids", "gridded", "mesh"}
_WORDS = re.compile(r"[A-Za-z]+")


def grid_word(name: str) -> str | None:
    """Return the grid word a file name holds ('grid' in 'mock_tiegcm_grid_sept2019.npz'), else None."""
    stem = name.rsplit(".", 1)[0]
    return next((w for w in _WORDS.findall(stem) if w.lower() in GRID_WORDS), None)


def axes_only_note(name: str, structure: Any) -> list[str]:
    """Return a note when a name promises a grid and every array the file holds is 1-D (its axes at most)."""
    word = grid_word(name)
    arrays = structure.get("arrays") if isinstance(structure, dict) else None
    if word is None or not arrays or len(arrays) < 2:
        return []
    shapes = [tuple(a.get("shape") or ()) for a in arrays]
    if any(len(shape) != 1 for shape in shapes):
        return []
    listed = ", ".join(f"{a['name']} {shape}" for a, shape in zip(arrays[:8], shapes, strict=False))
    cells = math.prod(shape[0] for shape in shapes)
    dims = " x ".join(str(shape[0]) for shape in shapes[:8])
    return [f"The name says {word!r} but every one of the {len(arrays)} arrays is 1-D ({listed}): axes of a "
            f"{dims} grid ({cells:,} points) at most, with no values on it; a quantity on this grid (a density, a "
            "temperature) is not in this file"]
