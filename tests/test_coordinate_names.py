"""Latitude and longitude columns that hold each other's values are said; correct pairs, including southern sites
and sites either side of the dateline, are not."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path


def _csv(path: Path, header: str, rows: list[tuple]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def _swapped(notes: list[str]) -> list[str]:
    return [n for n in notes if "look swapped" in n]


# Australian sites: longitudes 115..153 east, latitudes 12..43 south
SITES = [("Perth", -31.95, 115.86), ("Darwin", -12.46, 130.84), ("Sydney", -33.87, 151.21),
         ("Hobart", -42.88, 147.33), ("Brisbane", -27.47, 153.03), ("Adelaide", -34.93, 138.6)]


def test_a_latitude_column_holding_longitudes_is_said(tmp_path):
    p = _csv(tmp_path / "sites.csv", "site,Latitude (Y),Longitude (X)", [(s, lon, lat) for s, lat, lon in SITES])
    (note,) = _swapped(profile_path(p, Limits()).notes)
    assert "'Latitude (Y)' holds longitudes and 'Longitude (X)' latitudes" in note
    assert "6 of 6 'Latitude (Y)' values lie outside -90..90 (range 115.86 .. 153.03)" in note


def test_a_swapped_pair_in_a_workbook_with_a_fill_value_is_said(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["site", "lat", "lng"])
    for s, lat, lon in SITES:
        ws.append([s, lon, lat])
    ws.append(["unknown", -999, -999])  # a fill value, not a coordinate
    p = tmp_path / "sites.xlsx"
    wb.save(p)
    (note,) = _swapped(profile_path(p, Limits()).notes)
    assert "6 of 6 'lat' values" in note


def test_correct_pairs_are_not_said(tmp_path):
    correct = _csv(tmp_path / "au.csv", "site,Latitude,Longitude", SITES)
    # New Zealand and Fiji either side of the dateline: longitudes 166..180 and -179
    dateline = _csv(tmp_path / "nz.csv", "site,lat,lon", [("Auckland", -36.85, 174.76), ("Invercargill", -46.41, 168.35),
                                                          ("Chatham", -43.95, -176.56), ("Suva", -18.14, 178.44),
                                                          ("Taveuni", -16.85, -179.97)])
    # European sites: both columns inside -90..90, as they should be
    europe = _csv(tmp_path / "eu.csv", "site,start_lat,start_lon", [("Rome", 41.9, 12.5), ("Oslo", 59.91, 10.75),
                                                                    ("Lisbon", 38.72, -9.14)])
    for p in (correct, dateline, europe):
        assert _swapped(profile_path(p, Limits()).notes) == [], p.name


# Sites of the western Mediterranean with the region each row names; both coordinates lie inside -90..90 either way
MEDITERRANEAN = [("Arene Candide", "Northern Italy", 44.16, 8.33), ("Grotta dell'Uzzo", "Sicily, Italy", 38.11, 12.79),
                 ("Pulo di Molfetta", "Southern Italy", 41.19, 16.58), ("Ala", "Northern Italy", 45.76, 11.01),
                 ("Skorba", "Malta", 35.92, 14.38), ("Scaloria", "Southern Italy", 41.64, 15.91),
                 ("Knossos", "Crete, Greece", 35.3, 25.16), ("Franchthi", "Greece", 37.42, 23.13)]


def test_rows_naming_their_country_tell_a_swapped_pair_inside_90_degrees(tmp_path):
    p = _csv(tmp_path / "dates.csv", "Site,Region,Latitude,Longitude",
             [(s, f'"{r}"', lon, lat) for s, r, lat, lon in MEDITERRANEAN])
    (note,) = _swapped(profile_path(p, Limits()).notes)
    assert "of 8 rows that name a country (Italy, Greece, Malta), 0 lie inside it as named and 8 swapped" in note
    assert "'Latitude' holds longitudes and 'Longitude' latitudes" in note


def test_rows_naming_their_country_over_a_correct_pair_are_not_said(tmp_path):
    correct = _csv(tmp_path / "sites.csv", "Site,Region,Latitude,Longitude",
                   [(s, f'"{r}"', lat, lon) for s, r, lat, lon in MEDITERRANEAN])
    southern = _csv(tmp_path / "nz.csv", "site,country,lat,lon",
                    [("Auckland", "New Zealand", -36.85, 174.76), ("Dunedin", "New Zealand", -45.87, 170.5),
                     ("Wellington", "New Zealand", -41.29, 174.78), ("Gisborne", "New Zealand", -38.66, 178.02),
                     ("Suva", "Fiji", -18.14, 178.44), ("Nadi", "Fiji", -17.8, 177.42)])
    for p in (correct, southern):
        assert _swapped(profile_path(p, Limits()).notes) == [], p.name
