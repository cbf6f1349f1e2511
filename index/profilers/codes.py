"""Codes with leading zeros (a ZIP '08123', a county code '001'): pandas reads them as numbers and drops the zeros,
so a description would show 8123 and a script would never match '08123'. Such columns are read as text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# A field that starts with a zero and a digit. Searched in "\n" + text: a line start is then a character of the
# class, which lets the regex engine skip ahead by it (`^|[...]` under re.M tried both at every position: twice
# the CPU on KramaBench's CSV heads, and the text of a file with no zero-led field is read to its end).
_ZERO_LED = re.compile(r"[\n,;\t|]\s*\"?0\d")


def zero_led_codes(df: Any, as_text: Callable[[], Any], text: str) -> list[Any]:
    """Return df's numeric-read columns whose text holds fixed-width codes with leading zeros ('08123').

    as_text re-reads the same table with every column as text; it runs only when the text has a zero-led field.
    """
    if not _ZERO_LED.search("\n" + text) or not any(s.dtype.kind in "iuf" for _, s in df.items()):
        return []  # the common case costs one regex search, not a second parse
    raw = as_text()
    codes = []
    for name in list(df.columns)[:200]:
        if name not in raw.columns or df[name].dtype.kind not in "iuf":
            continue
        values = [str(v).strip() for v in raw[name].dropna().iloc[:3000]]
        # Codes are fixed-width ('08123', '10001'); a lone '038' among years is a typo, not a code.
        if (any(v.startswith("0") and len(v) > 1 for v in values) and all(v.isdigit() for v in values)
                and len({len(v) for v in values}) == 1):
            codes.append(name)
    return codes
