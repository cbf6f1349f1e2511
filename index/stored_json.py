"""Decoding the manifest's stored JSON (profiles, members' statistics) at the pace an entries rebuild needs.

A first index of the KramaBench lake renders its 11 families from 13 MB of members' stored tables and notes. Two
things made that decode cost ~0.75 CPU-s: the standard library's decoder, and the cyclic garbage collector, which
the million dicts and lists a decode creates set off again and again, each time walking every object alive. So:
- orjson (a dependency; chromadb requires it too) decodes the text, about twice as fast. Where it would read a
  text otherwise than the standard library does, `json.loads` reads it, so the values are always the ones
  `json.loads` gives: orjson refuses NaN and Infinity (which the profiles' encoder writes), and it turns an
  integer beyond 64 bits into a float, so a text with a run of 19 or more digits (anywhere, even inside a string:
  rare, and only slower) is left to the standard library.
- `collector_paused()` stops the collector while many texts are decoded. Decoded JSON holds no reference cycles,
  so there is nothing for it to find; reference counting still frees everything as before.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

# A number orjson may not read as an int has 19 digits or more (beyond int64 in 19, beyond uint64 in 20). Digits
# become "0" and everything else " ", then a run of 19 is looked for: C speed, where a regex took longer than the
# decode it guards.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_RUN = b"0" * 19


def loads(text: str | bytes) -> Any:
    """Return the value of a JSON text exactly as `json.loads` reads it."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if _LONG_RUN not in data.translate(_DIGITS_ONLY):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN, a big integer, a lone surrogate: the standard library reads those
    return json.loads(text)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a batch of decoding (as it was before, after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
