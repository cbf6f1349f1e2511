"""Families across sibling folders, sidecars and family descriptions, on real files indexed end to end."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from dsstar_lake.lake import Lake

DAYS = (1, 2, 3, 4, 6)  # the 5th is missing: a gap the description must name


def sp3_text(day: int, epochs: int = 40) -> str:
    """Return a small SP3 orbit file (the layout the sp3 profiler reads)."""
    lines = [f"#dV2019  9 {day:2d}  0  0  0.00000000    {epochs:4d} U+u   IGS14 FIT TUD ",
             "## 2072 259200.00000000    10.00000000 58751 0.0000000000000",
             "+    1   L47  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0",
             "%c L  cc GPS ccc cccc cccc cccc cccc ccccc ccccc ccccc ccccc"]
    for i in range(epochs):
        lines.append(f"*  2019  9 {day:2d}  0 {i // 6:2d} {i % 6 * 10:2d}.00000000")
        lines.append(f"PL47  {1000 + i:12.6f}  {2000 - i:12.6f}  {3000 + 2 * i:12.6f} 999999.999999")
        lines.append(f"VL47  {10 + i:12.6f}  {20 - i:12.6f}  {30 + i:12.6f} 999999.999999")
    return "\n".join([*lines, "EOF", ""])


def header_xml(name: str, day: int) -> str:
    """Return a small XML header that documents the orbit file of the same stem."""
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Earth_Explorer_Header><Fixed_Header>"
            f"<File_Name>{name}</File_Name>"
            "<File_Description>Precise orbit of the satellite centre of mass in the Earth-fixed frame</File_Description>"
            "<Mission>Kestrel</Mission><Validity_Period>"
            f"<Validity_Start>UTC=2019-09-{day:02d}T00:00:00</Validity_Start>"
            f"<Validity_Stop>UTC=2019-09-{day:02d}T23:59:59</Validity_Stop>"
            "</Validity_Period></Fixed_Header></Earth_Explorer_Header>\n")


def day_folder_lake(root: Path, days: tuple[int, ...] = DAYS) -> Path:
    """One folder per day, each with an orbit file, its header, a table, a note, and a table with its own columns."""
    for day in days:
        name = f"KS_OPER_ORB_2__201909{day:02d}T000000_201909{day:02d}T235959_0101"
        folder = root / "orbits" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.sp3").write_text(sp3_text(day))
        (folder / f"{name}.HDR").write_text(header_xml(name, day))
        (folder / "summary.csv").write_text("hour,passes\n" + "".join(f"{h},{h % 4 + day}\n" for h in range(6 + day)))
        (folder / "notes.md").write_text(f"# Day {day}\n\nOperator notes for day {day}: antenna {day * 3} serviced.\n")
        # one table whose columns change from day to day: different schemas never merge
        (folder / "odd.csv").write_text(f"count_{'abcdefgh'[day]},value\n1,2\n")
    return root


def entries(lake: Lake) -> dict[str, dict]:
    return {row["path"]: dict(row) for row in lake.connection().execute(
        "SELECT id, kind, folder, path, format, member_count, description, card FROM entries")}


@pytest.fixture(scope="module")
def days_lake(tmp_path_factory) -> Path:
    root = day_folder_lake(tmp_path_factory.mktemp("days") / "lake")
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


def test_per_day_folders_make_one_family_per_kind_of_file(days_lake):
    lake = Lake.open(days_lake)
    found = entries(lake)
    families = {p: e for p, e in found.items() if e["kind"] == "family"}
    stem = "orbits/KS_OPER_ORB_2__*T000000_*T235959_0101/KS_OPER_ORB_2__*T000000_*T235959_0101"
    assert set(families) == {f"{stem}.sp3", f"{stem}.HDR", "orbits/KS_OPER_ORB_2__*T000000_*T235959_0101/summary.csv"}
    assert all(e["member_count"] == len(DAYS) for e in families.values())
    # The notes (prose) and the tables whose columns differ from day to day stay entries of their own.
    singles = sorted(p.rsplit("/", 1)[1] for p, e in found.items() if e["kind"] == "file")
    assert singles == ["notes.md"] * len(DAYS) + ["odd.csv"] * len(DAYS)
    # Every member points at its family, and the family's glob lists exactly its members.
    for family in families.values():
        members = lake.members(family["id"])
        assert len(members) == len(DAYS)
        assert sorted(glob.glob(str(days_lake / family["path"]))) == [str(days_lake / m) for m in members]
    lake.close()


def test_the_header_family_says_what_it_documents_and_the_data_family_names_its_headers(days_lake):
    lake = Lake.open(days_lake)
    found = entries(lake)
    data = next(e for p, e in found.items() if p.endswith(".sp3"))
    header = next(e for p, e in found.items() if p.endswith(".HDR"))
    assert f"`{header['path']}` (xml, {len(DAYS)} files; its own catalog entry)" in data["description"]
    assert "Precise orbit of the satellite centre of mass" in data["description"]  # what the headers say
    assert "Mission" in data["description"] and "Validity_Start" in data["description"]
    assert "Kestrel" in data["card"]  # a question in the headers' words finds the data
    assert "What these files are for: each is the header (metadata)" in header["description"]
    assert f"`{data['path']}` (sp3, {len(DAYS)} files" in header["description"]
    assert "The data file it documents" in header["description"] and "P line" in header["description"]
    assert "Text sample" not in header["description"].split("The data file it documents")[0]  # fields say it
    hits = lake.search("precise orbit positions of the Kestrel satellite", k=3)
    assert any(h.path == data["path"] for h in hits)
    lake.close()


def test_a_family_description_names_its_values_compactly(days_lake):
    lake = Lake.open(days_lake)
    data = next(e for p, e in entries(lake).items() if p.endswith(".sp3"))
    description = data["description"]
    assert "every day except 20190905 (5 values)" in description  # a gap named, not a list of members
    assert "(equal in every member)" in description  # the folder's date and the name's date are one value
    assert "Members" not in description and description.count("20190903") == 0  # no member list
    assert "List them all with `sorted(glob.glob('data/orbits/KS_OPER_ORB_2__" in description
    assert "Sizes: " in description
    lake.close()


def test_a_sibling_folder_that_appears_joins_the_family_and_leaving_ones_dissolve_it(tmp_path):
    root = day_folder_lake(tmp_path / "lake", days=(1, 2, 3))
    lake = Lake.open(root, catalog=tmp_path / "incremental")
    lake.index()
    day_folder_lake(root, days=(4,))
    lake.index()
    full = Lake.open(root, catalog=tmp_path / "full")
    full.index()
    assert snapshot(lake) == snapshot(full)
    assert {e["member_count"] for e in entries(lake).values() if e["kind"] == "family"} == {4}
    for day in (2, 3, 4):
        for path in (root / "orbits").glob(f"*201909{day:02d}T000000*"):
            for f in path.iterdir():
                f.unlink()
            path.rmdir()
    lake.index()
    assert all(e["kind"] == "file" for e in entries(lake).values())  # one day left: no family
    full.index()
    assert snapshot(lake) == snapshot(full)
    lake.close()
    full.close()


def snapshot(lake: Lake) -> dict:
    conn = lake.connection()
    return {
        "files": sorted(tuple(r) for r in conn.execute("SELECT path, hash, status, entry_id FROM files")),
        "entries": sorted(tuple(r) for r in conn.execute(
            "SELECT id, kind, folder, path, member_count, description, card_hash FROM entries")),
        "vectors": sorted(lake.vector_store().ids()),
    }


def data_book_csv(state: str, rows: int) -> str:
    """A data-book CSV: a title, a blank line, the table, then note lines after it."""
    body = "".join(f'"{state} area {i}","{1000 + 37 * i:,}"\n' for i in range(rows))
    return (f"Metropolitan Areas: Reports for {state},\n,\nMetropolitan Area,# of Reports\n{body},\n"
            '"Areas are ranked by reports per 100,000 population.",\n,\n"Source: Consumer Reports Data Book 2024, a federal agency",\n')


STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana",
          "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana",
          "Nebraska", "Nevada", "NewHampshire", "NewJersey", "NewMexico", "NewYork", "NorthCarolina", "NorthDakota",
          "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "RhodeIsland", "SouthCarolina", "SouthDakota", "Tennessee",
          "Texas", "Utah", "Vermont", "Virginia", "Washington", "WestVirginia", "Wisconsin", "Wyoming"]


@pytest.fixture(scope="module")
def tables_lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tables") / "lake"
    states = root / "book"
    states.mkdir(parents=True)
    for i, state in enumerate(STATES):
        (states / f"{state}.csv").write_text(data_book_csv(state, 3 + i % 9))
    yearly = root / "yearly"
    yearly.mkdir()
    for year in range(2002, 2024):
        if year in (2011, 2015):
            continue
        rows = 5 + (year % 4)
        (yearly / f"testing-{year}.csv").write_text(
            "beach,year,cfu\n" + "".join(f"b{r},{year},{r * 7}\n" for r in range(rows)))
    beaches = root / "beaches"
    beaches.mkdir()
    for name in ("city_point", "m_street", "malibu", "tenean"):
        (beaches / f"{name}_beach_datasheet.csv").write_text(
            "date,site,cfu\n" + "".join(f"2024-06-{d:02d},{name},{d * 3}\n" for d in range(1, 9)))
    for name in ("carson", "wollaston"):  # the glob matches them too, but their columns differ
        (beaches / f"{name}_beach_datasheet.csv").write_text("when,station,ecoli,rain\n2024-06-01,x,4,0.1\n")
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


def run_listing_and_loader(root: Path, description: str, monkeypatch) -> tuple[list[str], object]:
    """Run a family description's listing and loader code the way a script in the sandbox would (data/ = lake)."""
    monkeypatch.chdir(root.parent)
    if not (root.parent / "data").exists():
        os.symlink(root, root.parent / "data")
    scope = {"pd": pd, "glob": glob}
    listing = re.search(r"List them all with `([^`]+)`", description).group(1)
    if listing.startswith("files = "):
        exec(listing, scope)
        files = scope["files"]
    else:
        files = eval(listing, scope)
    loader = re.search(r" them all with glob, e.g. `([^`]+)`", description).group(1)
    return files, eval(loader, scope)


def test_word_families_list_their_values_say_what_is_left_out_and_read_without_the_first_members_nrows(
        tables_lake, monkeypatch):
    lake = Lake.open(tables_lake)
    family = entries(lake)["book/*.csv"]
    description = family["description"]
    assert family["member_count"] == 50
    assert "Alabama, Alaska" in description and "… and 10 more (the last is Wyoming)" in description
    assert "Members (first" not in description and "- book/" not in description
    rows = [3 + i % 9 for i in range(50)]
    assert f"Rows per member: 3 … 11 (median 7; {sum(rows):,} in all)" in description
    assert "the first member, described below, has 3, and the nrows=3 in its load line is its own" in description
    loader_line = next(line for line in description.splitlines() if " them all with glob" in line)
    assert "nrows=" not in loader_line.split("`")[1]
    files, frame = run_listing_and_loader(tables_lake, description, monkeypatch)
    assert len(files) == 50 and list(frame.columns) == ["Metropolitan Area", "# of Reports"]
    assert frame["# of Reports"].dtype.kind in "if"  # thousands=',' applies to every member
    lake.close()


def test_numbered_families_give_ranges_and_gaps(tables_lake, monkeypatch):
    lake = Lake.open(tables_lake)
    description = entries(lake)["yearly/testing-*.csv"]["description"]
    assert "The '*' stands for 2002 … 2023, every year except 2011, 2015 (20 values)." in description
    assert "Rows per member: 5 … 8" in description and "the first member, described below, has 7" in description
    files, frame = run_listing_and_loader(tables_lake, description, monkeypatch)
    assert len(files) == 20 and len(frame) == sum(5 + y % 4 for y in range(2002, 2024) if y not in (2011, 2015))
    lake.close()


def test_a_glob_that_matches_other_files_lists_only_the_members(tables_lake, monkeypatch):
    lake = Lake.open(tables_lake)
    description = entries(lake)["beaches/*_beach_datasheet.csv"]["description"]
    assert "the glob also matches 2 files that are not members" in description
    files, frame = run_listing_and_loader(tables_lake, description, monkeypatch)
    assert sorted(os.path.basename(f) for f in files) == [
        f"{n}_beach_datasheet.csv" for n in ("city_point", "m_street", "malibu", "tenean")]
    assert list(frame.columns) == ["date", "site", "cfu"] and len(frame) == 32
    lake.close()


def test_a_data_file_and_its_small_json_sidecar_name_each_other(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    (root / "station_readings.csv").write_text(
        "time,temp_c,wind_ms\n" + "".join(f"2024-01-01T{h:02d}:00,{h * 0.5},{h % 7}\n" for h in range(24)) * 20)
    (root / "station_readings.json").write_text('{"title": "Harbor weather mast", "units": {"temp_c": "degC"}}')
    (root / "other.json").write_text('{"title": "unrelated"}')
    lake = Lake.open(root)
    lake.index()
    found = entries(lake)
    assert "Header: `station_readings.json` (json; its own catalog entry) documents this file" in \
        found["station_readings.csv"]["description"]
    assert "header (metadata) of the data file with the same stem beside it, in `station_readings.csv`" in \
        found["station_readings.json"]["description"]
    assert "What these files are for" not in found["other.json"]["description"]
    lake.close()


def test_a_family_card_gives_the_familys_rows_not_the_first_members(days_lake):
    lake = Lake.open(days_lake)
    summary = next(e for p, e in entries(lake).items() if p.endswith("/summary.csv"))
    lake.close()
    rows_per_day = {day: 6 + day for day in DAYS}  # summary.csv of day d has 6 + d rows
    assert f"rows in all {sum(rows_per_day.values())}" in summary["card"]
    # The first member's own count (7 rows) and dates would read as the family's: a yearly family said
    # "dates: 2002 to 2002".
    assert f"{rows_per_day[DAYS[0]]} rows" not in summary["card"]
    assert "dates:" not in summary["card"]
    assert "table: 2 columns" in summary["card"]
