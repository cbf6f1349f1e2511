"""Read what the finalyzer prints into a Python value: the answer contract.

The finalyzer should print the bare answer, and nothing else, on its last line (or as the whole output):

- a number: ``42``, ``-0.0059``, ``8577.5298``, ``1.2e-5``;
- a string: ``Wyoming``, ``Damon Pond Beach (DCR)``;
- a list: a JSON list ``["California", "Nevada"]`` or ``[2003, 2011]``;
- or a JSON object, e.g. ``{"answer": 0.519}``.

``parse_answer`` reads more than that, in this order:

1. Surrounding whitespace is dropped; empty output is ``None``. A Markdown code fence (```` ```json ... ``` ````)
   is unwrapped (the last fence, when there are several).
2. When the whole output is JSON or a Python literal (``[...]``, ``(...)``, ``{...}``, a quoted string, a number,
   ``True``/``False``/``None``), that value is the answer, even across several lines. So is a JSON or literal block
   that ends the output (``"The result:\\n[1, 2,\\n 3]"``).
3. Otherwise, when the output ends with two or more bullet lines (``- x``, ``* x``, ``• x``, ``1. x``, ``1) x``),
   those bullets are a list. Otherwise only the last non-empty line counts (without a bullet marker).
4. A line loses a leading ``Answer:`` / ``Final answer:`` / ``Result:`` label and Markdown emphasis (``**42**``).
5. The line is then read as JSON or a Python literal; else as a bracketed list whose items are read one by one
   (``[Bucks Creek, Pleasant Street]``); else as one scalar when it is a number (so ``7,805,421`` is one number);
   else as a comma-separated list (semicolons when there is no comma) of two or more short items, a leading
   ``and``/``or`` dropped from an item; else as one string. A line whose items would be long (more than six words)
   is a sentence, not a list, and stays one string.
6. A scalar is a number when it is one: an optional sign, an optional currency sign (``$ € £ ¥``), digits with
   optional thousands separators (``,`` followed by exactly three digits), decimals and exponent, an optional
   ``%`` and an optional unit of up to three words (``12.5 ppm``, ``7,805,421 acres``, ``3.1 km/s``). The percent
   sign and unit are dropped and the value is kept as written (``38.42%`` is ``38.42``; ``4.5 million`` is
   ``4.5``). Integers stay ``int``. Anything else is a string without its surrounding quotes.

Results: ``None``, ``bool``, ``int``, ``float``, ``str``, ``list`` (items read the same way) or ``dict``. A JSON
object with an ``"answer"`` key stands for that key's value. Ambiguity is resolved toward numbers: ``100,200`` is
the number 100200, while ``100, 200`` is a list. The metrics join a list back into ``"a, b"`` when the truth is a
single string, so a string answer with commas loses nothing.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"```[\w+-]*[ \t]*\n(.*?)```", re.S)
_LABEL = re.compile(
    r"^\s*(\*\*)?(?:the\s+)?(?:final\s+answer|answer|result)(?(1)(?:\*\*)?)\s*(?::|=|\bis\b\s*:?)(?(1)(?:\*\*)?)\s*",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(.*\S)\s*$")
_NUMBER = re.compile(
    r"""^(?P<sign>[-+\u2212])?\s*[$€£¥]?\s*(?P<sign2>[-+\u2212])?
        (?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)
        \s*%?\s*(?:[A-Za-z°µμ/²³]+(?:\s+[A-Za-z°µμ/²³]+){0,2})?\.?$""",
    re.X,
)
_QUOTES = "\"'`“”‘’"
# ast.literal_eval on huge text is slow and can exhaust memory; JSON has no such limit.
_MAX_LITERAL_CHARS = 2_000_000
_MAX_ITEM_WORDS = 6
_MAX_BLOCK_TRIES = 50  # line starts tried when looking for a trailing JSON block (each try parses to the end)


def parse_answer(text: str) -> Any:
    """Parse finalyzer output into a number, string, list, dict, bool or None (see the module docstring)."""
    if text is None:
        return None
    text = str(text).strip()
    if not text:
        return None
    fences = _FENCE.findall(text)
    if fences:
        text = fences[-1].strip()
        if not text:
            return None
    found, value = _read_literal(text)
    if found:
        return _normalise(value)
    found, value = _trailing_block(text)
    if found:
        return _normalise(value)
    lines = [line for line in text.splitlines() if line.strip()]
    bullets: list[str] = []
    for line in reversed(lines):
        match = _BULLET.match(line)
        if not match:
            break
        bullets.insert(0, match.group(1))
    if len(bullets) >= 2:
        return [parse_scalar(_clean_line(item)) for item in bullets]
    return _parse_line(bullets[0] if bullets else lines[-1])


def parse_scalar(text: str) -> Any:
    """Read one item: a number when it is one (units and % dropped), else the string without its quotes."""
    item = text.strip()
    number = parse_number(item)
    if number is not None:
        return number
    lowered = item.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    return _unquote(item)


def parse_number(text: str) -> int | float | None:
    """Return the number a string spells (sign, currency, thousands separators, %, unit), or None."""
    match = _NUMBER.match(text.strip())
    if not match:
        return None
    if match.group("sign") and match.group("sign2"):
        return None
    digits = match.group("num").replace(",", "")
    negative = (match.group("sign") or match.group("sign2") or "") in ("-", "\u2212")
    try:
        value: int | float = int(digits) if re.fullmatch(r"\d+", digits) else float(digits)
    except ValueError:
        return None
    return -value if negative else value


def _parse_line(line: str) -> Any:
    line = _clean_line(line)
    if not line:
        return None
    found, value = _read_literal(line)
    if found:
        return _normalise(value)
    if line.startswith("[") and line.endswith("]"):
        inner = line[1:-1].strip()
        return [parse_scalar(item) for item in _split_items(inner)] if inner else []
    number = parse_number(line)
    if number is not None:
        return number
    for sep in (",", ";"):
        if sep in line:
            items = _split_items(line, sep)
            if len(items) >= 2 and all(len(item.split()) <= _MAX_ITEM_WORDS for item in items):
                return [parse_scalar(item) for item in items]
            break
    return parse_scalar(line)


def _split_items(text: str, sep: str = ",") -> list[str]:
    items = []
    for raw in text.split(sep):
        item = raw.strip()
        item = re.sub(r"^(?:and|or)\s+", "", item, flags=re.I)
        if item:
            items.append(item)
    return items


def _clean_line(line: str) -> str:
    line = _LABEL.sub("", line.strip(), count=1).strip()
    # Markdown emphasis around the whole value: **42**, __x__, `x`.
    for mark in ("**", "__", "`"):
        if len(line) > 2 * len(mark) and line.startswith(mark) and line.endswith(mark):
            line = line[len(mark) : -len(mark)].strip()
    return line


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        return text[1:-1].strip()
    return text


def _read_literal(text: str) -> tuple[bool, Any]:
    """Return (True, value) when text is entirely JSON or a Python literal."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > _MAX_LITERAL_CHARS:
        return False, None
    if text[0] not in "[({\"'" and text.lower() not in ("true", "false", "none"):
        # Bare numbers and words are left to the scalar reader (units, thousands separators).
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _trailing_block(text: str) -> tuple[bool, Any]:
    """Find a JSON or literal list/object that starts a line and runs to the end of the output."""
    if not text.endswith(("]", "}", ")")):
        return False, None
    starts = [m.start(1) for m in re.finditer(r"(?m)^\s*([\[{(])", text)]
    for start in starts[:_MAX_BLOCK_TRIES]:
        if start == 0:
            continue
        found, value = _read_literal(text[start:].strip())
        if found:
            return True, value
    return False, None


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, str) and key.strip().lower() == "answer":
                return _normalise(value[key])
        return value
    if isinstance(value, (tuple, set, frozenset)):
        items = list(value)
        if isinstance(value, (set, frozenset)):
            items.sort(key=str)
        return [_normalise(v) for v in items]
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, str):
        return value.strip()
    return value
