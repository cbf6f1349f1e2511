"""Codes with leading zeros (a ZIP '08123', a county code '001'): pandas reads them as numbers and drops the zeros,
so a description would show 8123 and a script would never match '08123'. Such columns are read as text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

# A field that starts with a zero and a digit. Searched in "\n" + text: a line start is then a character of the
# class, which lets the regex engine skip ahead by it (`^|[...]` under re.M tried both at every position: twice
# the CPU on KramaBench's CSV heads, and the text of a file with no zero-led field is read to its end).
_ZERO_LED = re.compile(r"[\n,;\t|]\s*\"?0\d")
# The same search over the bytes of ASCII text, vectorised: the regex engine tries its class at every character,
# which made this search 10% of a 400 KB numeric CSV's profile; numpy finds the few '0'+digit pairs and looks back.
_DELIMS = np.frombuffer(b"\n,;\t|", dtype=np.uint8)
_SPACES = np.frombuffer(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f", dtype=np.uint8)  # what \s matches in ASCII
# the same sets as lookup tables: indexing one by a byte array is a gather, where np.isin sorts both arrays
_IS_DELIM = np.zeros(256, dtype=bool)
_IS_DELIM[_DELIMS] = True
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[_SPACES] = True
_LOOK_BACK = 32  # spaces between a delimiter and a '0' looked back over; longer runs go to the regex


def zero_led_codes(df: Any, as_text: Callable[[], Any], text: str) -> list[Any]:
    """Return df's numeric-read columns whose text holds fixed-width codes with leading zeros ('08123').

    as_text re-reads the same table with every column as text; it runs only when the text has a zero-led field.
    """
    if not any(d.kind in "iuf" for d in df.dtypes) or not has_zero_led_field(text):
        return []  # the common case costs one regex search, not a second parse
    raw = as_text()
    codes = []
    for name in list(df.columns)[:200]:
        if name not in raw.columns or df[name].dtype.kind not in "iuf":
            continue
        values = [str(v).strip() for v in raw[name].dropna().iloc[:3000].tolist()]  # tolist: not cell by cell
        # Codes are fixed-width ('08123', '10001'); a lone '038' among years is a typo, not a code.
        # (the same test as all-digits, one width above 1, some cell zero-led; in C where it can be: a column of
        # 3,000 cells was tested cell by cell in Python)
        widths = set(map(len, values))
        if (len(widths) == 1 and min(widths) > 1 and "".join(values).isdigit()
                and any(v.startswith("0") for v in values)):
            codes.append(name)
    return codes


def has_zero_led_field(text: str) -> bool:
    """Tell whether a field of the text starts with a zero and a digit: _ZERO_LED.search("\\n" + text), faster."""
    if not text.isascii():
        return _ZERO_LED.search("\n" + text) is not None
    data = np.frombuffer(b"\n" + text.encode("ascii"), dtype=np.uint8)
    zeros = np.flatnonzero(data[:-1] == 48)  # each '0' with a character after it; then those followed by a digit
    after = data[zeros + 1]
    at = zeros[(after >= 48) & (after <= 57)]
    at = at[at > 0]  # position 0 is the '\n' put in front
    if not at.size:
        return False
    before = at - 1
    quoted = data[before] == 34  # '"0' : the optional quote
    before = np.where(quoted & (before > 0), before - 1, before)
    for _ in range(_LOOK_BACK):  # walk back over spaces (\s*): a '\n' or '\t' among them is a delimiter
        char = data[before]
        if _IS_DELIM[char].any():
            return True
        spaced = _IS_SPACE[char] & (before > 0)
        if not spaced.any():
            return False
        before = before[spaced] - 1
    return _ZERO_LED.search("\n" + text) is not None
