"""An answer's text as a Python value: a number when the final script printed a number, a list when a list.

`Answer.value` is what a notebook computes with (`answer.value * 2`, `len(answer.value)`); `Answer.text` keeps what
was printed. The reading is strict, so that a value never says less than its text: a number is a whole line that
is a number (thousands separators as `7,805,421`, a trailing `%` dropped: the answer forms ask for the bare
percentage), a list is a JSON list or the list a Python script prints (`['a', 'b']`, numpy scalars as
`np.float64(1.5)` read as their values). Anything else, a number with a unit (`4.5 million`, `12 ppm`) or words,
stays the text. The benchmark's scorers read the text with their own, more lenient contract (eval/answers.py).
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

from dsstar_lake.agent.readings import plain_values

# A bare number: sign, digits (with thousands separators, or plain), decimals, exponent, and an optional %.
_NUMBER = re.compile(r"[-+\u2212]?(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)(?P<exp>[eE][-+]?\d+)?%?")
# ast.literal_eval of a long printout is slow and memory hungry; a list answer is far shorter.
_MAX_LITERAL_CHARS = 200_000

Value = int | float | list[Any] | str


def typed_value(text: str) -> Value:
    """Return the number or list text spells as a whole, else text (stripped)."""
    stripped = (text or "").strip()
    if not stripped:
        return stripped
    found = _number(stripped)
    if found is not None:
        return found
    literal = _literal(plain_values(stripped))
    if isinstance(literal, dict) and len(literal) == 1 and str(next(iter(literal))).strip().lower() == "answer":
        literal = next(iter(literal.values()))  # {"answer": …}, the contract's object form
    if isinstance(literal, bool):
        return stripped
    if isinstance(literal, int | float):
        return literal
    if isinstance(literal, list | tuple):
        return list(literal)
    return stripped


def _number(text: str) -> int | float | None:
    match = _NUMBER.fullmatch(text)
    if not match:
        return None
    digits = match.group(0).rstrip("%").replace(",", "").replace("\u2212", "-")
    if match.group("exp") is None and "." not in digits:
        return int(digits)
    value = float(digits)
    return value if math.isfinite(value) else None


def _literal(text: str) -> Any:
    """Return the JSON or Python literal text is, or None."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > _MAX_LITERAL_CHARS or text[0] not in "[({":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
