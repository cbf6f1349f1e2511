"""Stored JSON is decoded to exactly what json.loads gives, whichever decoder reads it."""

from __future__ import annotations

import gc
import json

import pytest
from dslake_index.stored_json import collector_paused, loads

TEXTS = [
    '{"columns": [{"name": "a", "min": -3, "max": 2.5, "mean": 0.1, "top_values": [["x", 2]]}], "n_rows": 7}',
    "[NaN, Infinity, -Infinity, -0, -0.0, 1e400, 5e-324]",  # what the profiles' encoder writes for odd floats
    "[9223372036854775807, -9223372036854775808, 18446744073709551615]",  # the edges of 64-bit integers
    "[18446744073709551616, -9223372036854775809, 123456789012345678901234567890]",  # beyond: never floats
    '["\\ud800 a lone surrogate", "é ü 中", "\\u00e9"]',
    '{"a": 1, "a": 2}',
]


def typed(value):
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize("text", TEXTS)
def test_values_and_types_are_json_loads(text):
    assert typed(loads(text)) == typed(json.loads(text))
    assert typed(loads(text.encode("utf-8", "surrogatepass"))) == typed(json.loads(text))


def test_the_collector_is_paused_and_given_back_as_it_was():
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("rendering failed")
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()  # a caller that had paused it keeps it paused
    gc.enable()
