"""Columns without meaning: what a header-less table's numbered columns show, sentinels such as -1, coded
columns (Kp stored x10 on a grid of thirds), a format document's comments that go on below a word, and the
fill values and ranges of a wide table's later columns. Every file here is generated in tmp_path."""

from __future__ import annotations

import random

import pandas as pd
from dslake_index.cards import DESC_MAX, DETAIL_COLUMNS, describe
from dslake_index.entries import family_entry
from dslake_index.families import Member, group_files
from dslake_index.family_stats import MemberFacts, family_view
from dslake_index.layouts import parse_layouts
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.registry import profile_path

KP = [0, 3, 7, 10, 13, 17, 20, 23, 27, 30, 33, 37, 40, 43, 47, 50]


def _yearly(path, years=60):
    """A yearly sunspot-like file: ';'-separated, no header, mid-year times, -1 where nothing was measured."""
    rng = random.Random(7)
    lines = []
    for i in range(years):
        deviation = "-1.0" if i < 12 else f"{rng.uniform(0.5, 20):.1f}"
        observations = -1 if i < 12 else rng.randint(150, 15000)
        lines.append(f"{1900 + i}.5; {rng.uniform(0, 250):5.1f}; {deviation}; {observations:5d};"
                     f"{0 if i == years - 1 else 1}")
    path.write_text("\n".join(lines) + "\n")


def test_numbered_columns_say_what_their_values_show(tmp_path):
    path = tmp_path / "SN_y_tot.csv"
    _yearly(path)
    profile = profile_path(path, Limits())
    columns = {c.name: c for c in profile.tables[0].columns}
    assert columns["0"].shows.startswith("years at their middle (1900.5 = mid-1900")
    assert (columns["2"].fill, columns["2"].fill_count) == (-1, 12) and columns["2"].min >= 0.5
    assert (columns["3"].fill, columns["3"].fill_count) == (-1, 12) and columns["3"].min >= 150
    assert columns["4"].shows == "a 0/1 flag (1 in 59 rows, 0 in 1)"
    assert columns["1"].shows is None and columns["1"].fill is None
    text = describe(profile, "SN_y_tot.csv")
    assert "-1 in 12 rows, likely missing (every other value is 0 or more)" in text
    assert "-1 in column(s) 2-3 (likely: every other value there is 0 or more)" in text
    assert "values look like a 0/1 flag (1 in 59 rows, 0 in 1)" in text
    # The load line gives the values the description counts.
    df = eval(profile.tables[0].read_hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd})
    assert int((df[3] == -1).sum()) == 12 and df[0].iloc[0] == 1900.5


def test_a_header_less_series_names_its_year_day_and_hour_columns(tmp_path):
    path = tmp_path / "index.lst"
    path.write_text("".join(f"2024 {132 + h // 24:3d} {h % 24:2d} {KP[h % 7 + 3]:2d}\n" for h in range(48)))
    shows = [c.shows for c in profile_path(path, Limits()).tables[0].columns]
    assert shows[0] == "a year (2024 in every row)"
    assert shows[1] == "days of the year (1 = January 1)" and shows[2] == "hours of the day (0 .. 23)"
    assert shows[3].startswith("Kp-style codes: x10 on a grid of thirds")


def test_values_that_only_resemble_a_kind_are_not_called_one(tmp_path):
    rng = random.Random(3)
    rows = []
    for _ in range(80):
        flag = rng.choice([-1, -1, 0, 1, 2, 3, 4, 5, 6])  # -1 is one of a small code's values
        pressure = round(rng.uniform(1000, 1030), 2)  # lies in the years' range but does not run forward
        count = rng.choice([3, 5, 7, 13, 15, 17, 23, 27])  # 3s and 7s, and a 5: not the grid of thirds
        rows.append(f"{flag},{pressure},{count},{rng.choice([0, 1, 2])}")
    path = tmp_path / "plain.csv"
    path.write_text("\n".join(rows) + "\n")
    columns = profile_path(path, Limits()).tables[0].columns
    assert [c.fill for c in columns] == [None] * 4
    assert [c.shows for c in columns] == [None] * 4


def test_a_named_column_coded_on_thirds_says_so_and_a_family_keeps_it(tmp_path):
    names = []
    for m in range(3):
        name = f"omni-{m:03d}.csv"
        rows = [f"2014-01-{1 + m + h // 24:02d} {h % 24:02d}:00:00,{KP[(h + m) % len(KP)]},{h % 11}" for h in range(48)]
        (tmp_path / name).write_text("Timestamp,Kp_index,count\n" + "\n".join(rows) + "\n")
        names.append(name)
    profiles = {n: profile_path(tmp_path / n, Limits()) for n in names}
    kp = profiles[names[0]].tables[0].columns[1]
    assert kp.shows.startswith("Kp-style codes") and profiles[names[0]].tables[0].columns[2].shows is None
    members = [Member(n, n, profiles[n].signature(), (tmp_path / n).stat().st_size,
                      [(t.n_rows, t.n_rows_exact, t.read_hint) for t in profiles[n].tables]) for n in names]
    (group,) = group_files(members, 2)
    facts = [MemberFacts(n, profiles[n].to_dict()["tables"], profiles[n].notes) for n in names]
    assert family_view(profiles[names[0]], facts).profile.tables[0].columns[1].shows == kp.shows
    entry = family_entry(group, profiles[names[0]], 40, facts=facts)
    assert "'Kp_index': int; " in entry.description and "values look like Kp-style codes" in entry.description


def test_a_wide_tables_later_columns_keep_their_fill_values_missing_counts_and_ranges(tmp_path):
    n_cols = DETAIL_COLUMNS + 12
    header = ",".join(f"c{j}" for j in range(n_cols))
    rows = []
    for i in range(50):
        cells = [str(i + j) for j in range(n_cols)]
        if i % 10 == 0:
            cells[DETAIL_COLUMNS + 3] = "99999.99"  # a fill value in a later column
        cells[DETAIL_COLUMNS + 4] = "" if i % 5 == 0 else f"{i}.5"
        cells[DETAIL_COLUMNS + 5] = str(KP[i % len(KP)])
        rows.append(",".join(cells))
    path = tmp_path / "wide.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    text = describe(profile_path(path, Limits()), "wide.csv")
    later = {line.strip()[3:].split("'")[0]: line for line in text.splitlines() if line.startswith("    - 'c")}
    assert f"c{DETAIL_COLUMNS + 11}" in later  # every later column has a line of its own here
    fill = later[f"c{DETAIL_COLUMNS + 3}"]
    assert "fill value 99999.99 in 5 rows (missing data)" in fill and "; 34 .. 82 without it" in fill
    assert "10 missing" in later[f"c{DETAIL_COLUMNS + 4}"]
    assert "values look like Kp-style codes" in later[f"c{DETAIL_COLUMNS + 5}"]
    assert "statistics left out" not in text


def test_a_very_wide_table_gives_its_short_lines_way_before_any_column_name(tmp_path):
    n_cols = 320
    names = [f"m_{j:03d}" for j in range(n_cols)]  # the list of the rest fits whole, the short lines do not
    rows = [",".join("99999.99" if (i + j) % 7 == 0 else str(i * j % 97) for j in range(n_cols)) for i in range(20)]
    path = tmp_path / "very_wide.csv"
    path.write_text(",".join(names) + "\n" + "\n".join(rows) + "\n")
    text = describe(profile_path(path, Limits(max_columns=60)), "very_wide.csv")
    assert len(text) <= DESC_MAX and "[... truncated]" not in text
    assert all(repr(name) in text for name in names)  # every name, whether a short line or the list of the rest
    short = text.split("statistics left out")[0].split(f"'{names[DETAIL_COLUMNS - 1]}'")[1].splitlines()[1:]
    assert short and all("fill value 99999.99" in line for line in short[:-1])  # fill values first


def test_a_format_documents_comment_below_a_word_joins_that_word():
    text = """OMNI2_YYYY.DAT FORMAT DESCRIPTION
WORD  FORMAT  Fill Value         MEANING                  UNITS/COMMENTS

 1      I4              Year                              1963, 1964, etc.
 2      I4              Decimal Day                       January 1 = Day 1
 3      I3              Hour                              0, 1,...,23
 4     F6.1  999.9     sigma|B|            RMS Standard Deviation in average
                                               magnitude (word 10), nT
 5     I3    99        Kp               Planetary Geomagnetic Activity Index
                                       (e.g. 3+ = 33, 6- = 57, 4 = 40, etc.)
 6      I4   999        R                          Sunspot number (new version 2)

 COMMENTS
   (*) a remark in the text that follows the table
"""
    (layout,) = parse_layouts(text.splitlines())
    words = {w[0]: w for w in layout["words"]}
    assert words[4][4] == "RMS Standard Deviation in average magnitude (word 10), nT"
    assert words[5][4] == "Planetary Geomagnetic Activity Index (e.g. 3+ = 33, 6- = 57, 4 = 40, etc.)"
    assert words[6][4] == "Sunspot number (new version 2)"


def test_a_time_series_with_a_hole_says_where_and_how_long(tmp_path):
    hours = [t for t in pd.date_range("2014-05-01", periods=240, freq="h")
             if not pd.Timestamp("2014-05-03") <= t < pd.Timestamp("2014-05-04 06:00") and t != pd.Timestamp("2014-05-08 12:00")]
    path = tmp_path / "hourly.csv"
    path.write_text("Timestamp,speed\n" + "".join(f"{t:%Y-%m-%d %H:%M:%S},{i % 9}\n" for i, t in enumerate(hours)))
    text = describe(profile_path(path, Limits()), "hourly.csv")
    assert ("times every hour with 2 gap(s) inside: 31 of the 240 steps from the first time to the last have no row; "
            "missing 2014-05-03 00:00 .. 2014-05-04 05:00 (30), 2014-05-08 12:00") in text
    # a regular series without a hole, and monthly times (no one step), say nothing of gaps
    whole = tmp_path / "whole.csv"
    whole.write_text("day,n\n" + "".join(f"{t:%Y-%m-%d},1\n" for t in pd.date_range("2020-01-01", periods=40)))
    months = tmp_path / "months.csv"
    months.write_text("month,n\n" + "".join(f"{t:%Y-%m-%d},1\n" for t in pd.date_range("2020-01-01", periods=40,
                                                                                              freq="MS")))
    # times on a step with most steps missing are sparse (a bathing season, events), not a series with holes
    season = tmp_path / "season.csv"
    season.write_text("day,n\n" + "".join(f"{t:%Y-%m-%d},1\n" for t in pd.date_range("2020-01-01", periods=900)
                                          if 6 <= t.month <= 8))
    assert "gap(s) inside" not in describe(profile_path(season, Limits()), "season.csv")
    assert "gap(s) inside" not in describe(profile_path(whole, Limits()), "whole.csv")
    assert "gap(s) inside" not in describe(profile_path(months, Limits()), "months.csv")
