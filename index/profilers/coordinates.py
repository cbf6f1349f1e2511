"""Latitude and longitude columns whose names lie: a pair that holds each other's values.

A latitude lies in -90..90 and a longitude in -180..180. When a column named for latitude holds values past ±90
while its partner named for longitude stays inside ±90, the two fit only the other way round: a script that trusts
the names ('the most northern site' as the largest latitude) answers from the wrong column. Values past ±180 are
left out first: they are fill values (-999), not coordinates.
"""

from __future__ import annotations

import re
from typing import Any

_LAT = re.compile(r"(?<![a-z])(lat|latitude)(?![a-z])|latitude", re.IGNORECASE)
_LON = re.compile(r"(?<![a-z])(lon|lng|long|longitude)(?![a-z])|longitude", re.IGNORECASE)
OUTSIDE_SHARE = 0.1  # of a latitude column's values past ±90 before the pair is called swapped, not one typo


def coordinate_pairs(names: list[str]) -> list[tuple[str, str]]:
    """Return (latitude column, longitude column) pairs: names alike but for the lat/lon word ('start_lat' and
    'start_lng', 'Latitude (Y)' and 'Longitude (X)'), or the only two when a table has one of each."""
    lats = [n for n in names if _LAT.search(n) and not _LON.search(n)]
    lons = [n for n in names if _LON.search(n) and not _LAT.search(n)]
    if len(lats) == 1 and len(lons) == 1:
        return [(lats[0], lons[0])]
    by_rest = {_LON.sub("*", n).lower(): n for n in lons}
    return [(n, by_rest[_LAT.sub("*", n).lower()]) for n in lats if _LAT.sub("*", n).lower() in by_rest]


def _degrees(df: Any, name: str) -> Any:
    import pandas as pd

    values = pd.to_numeric(df[name], errors="coerce").dropna()
    return values[values.abs() <= 180]


def swapped_coordinates(df: Any) -> list[str]:
    """Return notes on latitude/longitude column pairs whose values fit only the other way round."""
    notes = []
    names = [c for c in df.columns if isinstance(c, str)]
    for lat, lon in coordinate_pairs(names):
        lats, lons = _degrees(df, lat), _degrees(df, lon)
        if lats.empty or lons.empty:
            continue
        outside = int((lats.abs() > 90).sum())
        if outside >= OUTSIDE_SHARE * len(lats) and (lons.abs() <= 90).all():
            notes.append(f"columns {lat!r} and {lon!r} look swapped: {outside} of {len(lats)} {lat!r} values lie "
                         f"outside -90..90 (range {lats.min():g} .. {lats.max():g}), where no latitude lies, while "
                         f"every {lon!r} value is inside it ({lons.min():g} .. {lons.max():g}): {lat!r} holds "
                         f"longitudes and {lon!r} latitudes")
    return notes
