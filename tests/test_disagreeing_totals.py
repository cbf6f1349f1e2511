"""Totals that disagree: two footnotes stating one total twice and a table summing to a third, and a folder's
year-by-type table whose types sum to more than its yearly total table (a check across the folder's entries)."""

from __future__ import annotations

from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path

from dsstar_lake.lake import Lake

MILITARY = """Reports by Military Consumers,,
,,
Military Status,# of Reports,# of Fraud Reports
Active Duty,"17,336","7,292"
Retiree/Veteran,"166,921","78,913"
Reserve/National Guard,"11,753","6,022"
Spouse/Dependent,"14,629","7,216"
,,
Military Rank,# of Reports,# of Fraud Reports
Enlisted,"129,955","68,201"
Officer,"29,703","17,796"
,,
"Of the 212,158 total reports from military consumers in 2024, 92% provided branch information.",,
,,
"Of the 212,518 total reports from military consumers in 2024, 75% provided information about rank.",,
"""


def test_two_footnotes_stating_two_totals_and_a_table_summing_to_a_third_are_said(tmp_path):
    (tmp_path / "military.csv").write_text(MILITARY)
    notes = " ".join(profile_path(tmp_path / "military.csv", Limits()).notes)
    assert "the notes state 2 different totals of one count: 212,158" in notes and "212,518" in notes
    assert "table 1's '# of Reports' sums to 210,639" in notes and "these totals disagree" in notes


def test_a_footnote_on_a_part_or_a_total_the_table_sums_to_says_nothing(tmp_path):
    rows = "".join(f"{age},\"{n:,}\"\n" for age, n in [("20-29", 100_000), ("30-39", 150_000), ("40-49", 50_000)])
    (tmp_path / "ages.csv").write_text(
        "Reports by Age,\n,\nAge,# of Reports\n" + rows + ",\n"
        '"Percentages are based on the total number of reports with an age: 300,000.",\n'
        '"Of the 650,000 total reports, 46% included age information.",\n')
    assert not [n for n in profile_path(tmp_path / "ages.csv", Limits()).notes if "disagree" in n]


def _yearly(lake_dir, by_type_2024: int) -> None:
    years = range(2018, 2025)
    types = "Year,Fraud,Identity Theft,Other\n" + "".join(
        f'{y},"{1_000_000 + y:,}","{500_000 + y:,}","{by_type_2024 - 1_500_000 - 2 * y if y == 2024 else 700_000:,}"\n'
        for y in years)
    totals = "Year,# of Reports\n" + "".join(
        f'{y},"{(2_200_000 + 2 * y) if y < 2022 else (2_190_000 + 2 * y) if y < 2024 else 6_471_708:,}"\n'
        for y in years)
    (lake_dir / "Number_of_Reports_by_Type.csv").write_text("Number of Reports by Type,,,\n,,,\n" + types)
    (lake_dir / "Report_Count.csv").write_text("Reports by Year,\n,\n" + totals)


def _description(lake: Lake, name: str) -> str:
    return lake.connection().execute("SELECT description FROM entries WHERE path = ?", (name,)).fetchone()[0]


def test_a_folders_parts_summing_to_more_than_its_yearly_total_are_said_in_both_entries(tmp_path):
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    (lake_dir / "notes.txt").write_text("Consumer reports, a data book.\n")
    _yearly(lake_dir, 6_495_932)
    lake = Lake.open(lake_dir)
    lake.index()
    parts = _description(lake, "Number_of_Reports_by_Type.csv")
    assert ("its columns 'Fraud', 'Identity Theft', 'Other' sum per year to more than the yearly total "
            "'# of Reports' of Report_Count.csv in 3 of 7 shared years, every year from 2022 (2024: 6,495,932 "
            "against 6,471,708)") in parts
    assert "is less than the sum of the columns 'Fraud'" in _description(lake, "Report_Count.csv")
    # Only the changed file's folder is checked again, and the unchanged sibling's note follows the change: the
    # yearly totals now equal the parts' sums, so both notes go.
    types = (lake_dir / "Number_of_Reports_by_Type.csv").read_text().splitlines()[3:]
    sums = {row.split(",")[0]: sum(int(v.replace(",", "")) for v in row.split('"')[1::2]) for row in types}
    (lake_dir / "Report_Count.csv").write_text("Reports by Year,\n,\nYear,# of Reports\n"
                                               + "".join(f'{y},"{n:,}"\n' for y, n in sums.items()))
    lake.index()
    assert "sum per year" not in _description(lake, "Number_of_Reports_by_Type.csv")
    assert "is less than the sum" not in _description(lake, "Report_Count.csv")
