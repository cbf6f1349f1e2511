"""Cards and descriptions: split path words, names that retrieval needs, bounds, determinism, real hints."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from dslake_index.cards import CARD_MAX, DESC_MAX, HINT_PREFIX, card, describe, path_words
from dslake_index.profilers.base import Column, Limits, Profile, Table
from dslake_index.profilers.registry import profile_path

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"


def test_path_words_split_every_way():
    words = path_words("astronomy/omni2_low_res/SW_OPER_ACCACAL_2__20240511T000000.cdf")
    for w in ["astronomy", "omni", "2", "omni2", "low", "res", "sw", "oper", "accacal", "20240511", "cdf"]:
        assert w in words
    assert path_words("data/stationReadingsHTTPServer-v2.csv")[:6] == ["data", "station", "readings", "http",
                                                                         "server", "stationreadingshttpserver"]
    assert "csvs" in path_words("legal/CSVs/x.csv") and "cs" not in path_words("legal/CSVs/x.csv")
    assert path_words("europe/données météo 2024.csv") == ["europe", "données", "météo", "2024", "csv"]
    assert "*" not in path_words("sensors/daily/readings_*.csv")


def test_card_holds_path_words_columns_sheets_and_values(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Beach Tests"
    ws.append(["Beach Name", "County", "Sample Date", "Result"])
    for i in range(20):
        ws.append([["Carson", "Malibu"][i % 2], "Suffolk", f"2024-06-{i + 1:02d}", i])
    wb.create_sheet("Notes")["A1"] = "about"
    p = tmp_path / "beachWaterQuality_2024.xlsx"
    wb.save(p)
    text = card(profile_path(p, Limits()), "env/beachWaterQuality_2024.xlsx")
    for expected in ["env", "beach", "water", "quality", "2024", "Beach Tests", "Notes", "Beach Name", "Sample Date",
                     "Carson", "Suffolk", "2024-06-01 to 2024-06-20"]:
        assert expected in text, expected
    assert len(text) <= CARD_MAX


def test_wide_files_stay_bounded(tmp_path):
    p = tmp_path / "wide.csv"
    header = ",".join(f"measurement_{i}_value" for i in range(500))
    rows = "\n".join(",".join(str(r * i) for i in range(500)) for r in range(30))
    p.write_text(header + "\n" + rows + "\n")
    prof = profile_path(p, Limits())
    desc = describe(prof, "wide.csv")
    assert len(desc) <= DESC_MAX and "500 columns" in desc
    # names go on past the profiled columns until the list's own bound, which says it was cut
    assert "'measurement_99_value' int" in desc and "… [cut]" in desc
    assert len(card(prof, "wide.csv")) <= CARD_MAX


def test_description_reads_like_an_analyzer_report():
    prof = profile_path(SAMPLES / "weather/station_log.csv", Limits())
    desc = describe(prof, "weather/station_log.csv")
    assert f"pd.read_csv('{HINT_PREFIX}weather/station_log.csv', skiprows=4)" in desc
    assert "72 rows x 4 columns" in desc and "'air_temp_c': float" in desc and "2 missing" in desc
    assert "Harbor Weather Station Log" in desc
    layout = describe(profile_path(SAMPLES / "layout.xlsx", Limits()), "layout.xlsx")
    assert "usecols='F:H'" in layout and "F4:H7" in layout


def test_pure_and_deterministic():
    prof = Profile(format="csv", size=10, tables=[Table(n_rows=2, n_cols=1, columns=[
        Column(name="a", dtype="int", min=1, max=2, examples=[1, 2])], read_hint="pd.read_csv({path})")])
    again = Profile.from_dict(prof.to_dict())
    assert describe(prof, "x/a.csv") == describe(again, "x/a.csv")
    assert card(prof, "x/a.csv") == card(again, "x/a.csv")
    assert prof.to_dict() == again.to_dict()


def test_a_preamble_title_is_described_without_its_own_label(tmp_path):
    path = tmp_path / "noaa_wildfires_monthly_stats.csv"
    rows = "".join(f"2000{m:02d},{1000 + m},{50 + m}\n" for m in range(1, 13))
    path.write_text("Title:U.S. Wildfires December\nMissing:-999\n\nDate,Acres Burned,Number of Fires\n" + rows)
    profile = profile_path(path, Limits())
    text = describe(profile, "noaa_wildfires_monthly_stats.csv")
    # The title line drops the label (and the month the rows do not share); the note on the lines to skip still
    # quotes them as the file has them.
    assert "\nTitle: U.S. Wildfires\n" in text
    assert "skiprows=3): Title:U.S. Wildfires December | Missing:-999" in text
    assert "title: U.S. Wildfires\n" in card(profile, "noaa_wildfires_monthly_stats.csv") + "\n"


def test_a_note_on_the_sheets_layout_gives_way_to_the_title_under_it_said_in_years(tmp_path):
    # Census workbooks put a screen reader's note above the title that says what the table holds.
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "NST-EST2024-POP"
    ws.append(["table with row headers in column A and column headers in rows 3 through 4. (leading dots indicate "
               "sub-parts)"])
    ws.append(["Annual Estimates of the Resident Population for the United States, Regions, States: April 1, 2020 "
               "to July 1, 2024"])
    ws.append(["Geographic Area", "April 1, 2020 Estimates Base", "2023", "2024"])
    for i, state in enumerate(["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado"]):
        ws.append([f".{state}", 1_000_000 + i, 1_000_100 + i, 1_000_200 + i])
    path = tmp_path / "NST-EST2024-POP.xlsx"
    wb.save(path)
    text = card(profile_path(path, Limits()), "NST-EST2024-POP.xlsx")
    title = next(line for line in text.splitlines() if line.startswith("title: "))
    # The day dates are the days of a count, not months the table is by: their month names stay out of the card.
    assert title == ("title: Annual Estimates of the Resident Population for the United States, Regions, States: "
                     "2020 to 2024")
    assert "row headers" not in text and "July" not in text
    # A title that is no note on the layout is kept as it is, dates and all.
    ws.delete_rows(1)
    wb.save(path)
    text = card(profile_path(path, Limits()), "NST-EST2024-POP.xlsx")
    assert "title: Annual Estimates of the Resident Population for the United States, Regions, States: April 1, 2020 " \
           "to July 1, 2024" in text
