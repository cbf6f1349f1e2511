"""Latitude and longitude columns whose names lie: a pair that holds each other's values.

A latitude lies in -90..90 and a longitude in -180..180. When a column named for latitude holds values past ±90
while its partner named for longitude stays inside ±90, the two fit only the other way round: a script that trusts
the names ('the most northern site' as the largest latitude) answers from the wrong column. Values past ±180 are
left out first: they are fill values (-999), not coordinates.

Where both columns stay inside ±90 the values alone cannot tell; the rows' own words can. Rows that name a country
(a region column's 'Northern Italy') are placed in that country's box (country_boxes.py): when most of them fall
outside it as named and inside it swapped, the pair is swapped.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_LAT = re.compile(r"(?<![a-z])(lat|latitude)(?![a-z])|latitude", re.IGNORECASE)
_LON = re.compile(r"(?<![a-z])(lon|lng|long|longitude)(?![a-z])|longitude", re.IGNORECASE)
# an angle named for latitude or longitude (OMNI2's 'SW_Plasma_flow_lat_angle', 'Lat_Angle_of_B_GSE') is a direction
# in some frame, not a place on Earth
_ANGLE = re.compile(r"angle", re.IGNORECASE)
OUTSIDE_SHARE = 0.1  # of a latitude column's values past ±90 before the pair is called swapped, not one typo
MIN_PLACED = 5  # rows naming a country before their points are weighed
INSIDE_AS_NAMED = 0.1  # at most this share of those rows inside their country as named ...
INSIDE_SWAPPED = 0.8  # ... and at least this share inside it swapped
TEXT_COLUMNS, TEXT_VALUES = 40, 2000  # text looked at for country names: a wide table's first columns, their values


def coordinate_pairs(names: list[str]) -> list[tuple[str, str]]:
    """Return (latitude column, longitude column) pairs: names alike but for the lat/lon word ('start_lat' and
    'start_lng', 'Latitude (Y)' and 'Longitude (X)'), or the only two when a table has one of each."""
    names = [n for n in names if not _ANGLE.search(n)]
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
        swapped = f"{lat!r} holds longitudes and {lon!r} latitudes"
        if outside >= OUTSIDE_SHARE * len(lats) and (lons.abs() <= 90).all():
            notes.append(f"columns {lat!r} and {lon!r} look swapped: {outside} of {len(lats)} {lat!r} values lie "
                         f"outside -90..90 (range {lats.min():g} .. {lats.max():g}), where no latitude lies, while "
                         f"every {lon!r} value is inside it ({lons.min():g} .. {lons.max():g}): {swapped}")
        elif outside == 0 and (lons.abs() <= 90).all() and (placed := _placed_swapped(df, lat, lon)):
            notes.append(f"columns {lat!r} and {lon!r} look swapped: {placed}: {swapped}")
    return notes


def _inside(lat: float, lon: float, box: tuple[str, float, float, float, float]) -> bool:
    _, south, north, west, east = box
    across = lon >= west or lon <= east  # a box across the dateline
    return south <= lat <= north and (west <= lon <= east if west <= east else across)


@functools.cache
def _country_finder() -> tuple[Any, dict[str, tuple[str, float, float, float, float]], frozenset[str]]:
    """Return a regex of country names ('Britain (UK)' gives 'Britain' and 'UK'), the box of each name, and the
    names' first words (a column none of whose words is one names no country: its values need no regex)."""
    from dslake_index.profilers.country_boxes import BOXES

    by_name = {}
    for box in BOXES.values():
        for name in re.split(r"\s*[()]\s*", box[0]):
            if len(name) > 1:
                by_name[name] = box
    words = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
    firsts = frozenset(re.findall(r"[\w'.&-]+", n)[0] for n in by_name)
    return re.compile(rf"(?<![\w])({words})(?![\w])"), by_name, firsts


def _placed_swapped(df: Any, lat: str, lon: str) -> str:
    """Return the evidence ('of 720 rows that name a country (Italy, Malta), 0 lie inside it as named ...') when rows
    naming a country lie outside it as named and inside it swapped; '' otherwise."""
    import pandas as pd

    finder, by_name, firsts = _country_finder()
    text_columns = [c for c, kind in df.dtypes.items() if c not in (lat, lon)
                    and (pd.api.types.is_object_dtype(kind) or pd.api.types.is_string_dtype(kind))][:TEXT_COLUMNS]
    named = pd.Series(None, index=df.index, dtype=object)
    for column in text_columns:
        uniques = [v for v in pd.unique(df[column].dropna()) if isinstance(v, str)]
        if not uniques or len(uniques) > TEXT_VALUES:
            continue
        if firsts.isdisjoint(re.findall(r"[\w'.&-]+", "\n".join(uniques))):
            continue  # dates, codes, words of no country: the usual column, tested in one pass
        found = {v: {m for m in finder.findall(v)} for v in uniques}
        country = {v: next(iter(c)) for v, c in found.items() if len(c) == 1}
        named = named.where(named.notna(), df[column].map(country))
    lats, lons = pd.to_numeric(df[lat], errors="coerce"), pd.to_numeric(df[lon], errors="coerce")
    rows = [(la, lo, by_name[n], n) for la, lo, n in zip(lats, lons, named, strict=True)
            if isinstance(n, str) and pd.notna(la) and pd.notna(lo)]
    if len(rows) < MIN_PLACED:
        return ""
    as_named = sum(_inside(la, lo, box) for la, lo, box, _ in rows)
    swapped = sum(_inside(lo, la, box) for la, lo, box, _ in rows)
    if as_named > INSIDE_AS_NAMED * len(rows) or swapped < INSIDE_SWAPPED * len(rows):
        return ""
    la, lo, _, country = next(r for r in rows if _inside(r[1], r[0], r[2]))
    names = sorted({r[3] for r in rows}, key=lambda n: -sum(r[3] == n for r in rows))
    return (f"of {len(rows)} rows that name a country ({', '.join(names[:5])}), {as_named} lie inside it as named and "
            f"{swapped} swapped (e.g. a row naming {country}: {lat} {la:g}, {lon} {lo:g})")
