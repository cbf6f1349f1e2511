"""Values a profile used to get wrong: units in column names, codes with leading zeros."""

from __future__ import annotations

import pandas as pd
from dslake_index.cards import describe
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.profilers.stats import unit_of


def test_units_over_units_and_number_densities_are_read_from_column_names():
    assert unit_of("SW_Plasma_Speed_km_s") == "km/s"
    assert unit_of("Flux_W_m2") == "W/m2"
    assert unit_of("N_cm3") == "per cm3" and unit_of("Proton_Density_N_cm3") == "per cm3"
    # A volume is still a volume, and single units are as before.
    assert unit_of("Volume_m3") == "m3" and unit_of("Scalar_B_nT") == "nT" and unit_of("Altitude (km)") == "km"
    assert unit_of("ELEMENT_SET_NO") is None


def test_codes_with_leading_zeros_are_loaded_as_text_and_the_load_line_says_so(tmp_path):
    path = tmp_path / "zips.csv"
    path.write_text("zip,city,population\n08123,Mount Laurel,41000\n10001,New York,21000\n02134,Boston,30000\n")
    profile = profile_path(path, Limits())
    table = profile.tables[0]
    assert table.read_hint == f"pd.read_csv({PATH_PLACEHOLDER}, dtype={{'zip': str}})"
    text = describe(profile, "zips.csv")
    assert "'08123'" in text and "dtype={'zip': str}" in text
    # The load line, run as written, keeps the zeros; the number column stays a number.
    df = eval(table.read_hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd})
    assert df["zip"].tolist() == ["08123", "10001", "02134"] and df["population"].dtype.kind == "i"


def test_numbers_without_leading_zeros_stay_numbers(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("id,value\n1,0.5\n2,10\n3,0\n")
    assert "dtype" not in profile_path(path, Limits()).tables[0].read_hint


def test_a_column_of_one_nines_value_is_a_code_not_missing_data(tmp_path):
    # ELEMENT_SET_NO is 999 in every row of a space-track file: no other value for it to stand apart from.
    path = tmp_path / "sets.csv"
    path.write_text("NORAD_CAT_ID,ELEMENT_SET_NO,speed\n" + "".join(f"58214,999,{v}\n" for v in (1, 2, 3, 9999)))
    columns = {c.name: c for c in profile_path(path, Limits()).tables[0].columns}
    assert columns["ELEMENT_SET_NO"].fill is None and columns["ELEMENT_SET_NO"].min == 999
    assert columns["speed"].fill == 9999  # a 9s value apart from the others is still a fill value


def test_money_text_names_its_separators_and_scale(tmp_path):
    path = tmp_path / "pay.csv"
    path.write_text('Method,Loss\nCards,$275M\nBank,"$2,089M"\nCrypto,"$1,417M"\nCash,$308M\n')
    loss = profile_path(path, Limits()).tables[0].columns[1]
    assert loss.dtype.startswith("text (money or percent")
    assert "'$2,089M'" in loss.dtype and "'M' (millions)" in loss.dtype


def test_a_short_table_under_note_lines_counts_its_data_rows_only(tmp_path):
    path = tmp_path / "Vermont.csv"
    path.write_text('Metropolitan Areas: Identity Theft Reports,\n,\nMetropolitan Area,# of Reports\n'
                    '"Burlington-South Burlington, VT Metropolitan Statistical Area",258\n'
                    '"Lebanon-Claremont, NH-VT Micropolitan Statistical Area",242\n,\n'
                    '"Metropolitan Areas are defined by the Office of Management and Budget.",\n,\n'
                    '"Source: Consumer Sentinel Network Data Book 2024, Federal Trade Commission",\n')
    profile = profile_path(path, Limits())
    table = profile.tables[0]
    assert table.n_rows == 2 and "nrows=2" in table.read_hint
    area = table.columns[0]
    assert [k[1] for k in area.kinds] == ["Metropolitan Statistical Area", "Micropolitan Statistical Area"]
    text = describe(profile, "Vermont.csv")
    assert "2 kinds of rows by the words at the end" in text
    # Names are shown whole (or cut after a whole word), so a question's name can be matched.
    assert "'Lebanon-Claremont, NH-VT Micropolitan Statistical Area'" in text


def test_numbered_columns_in_a_note_are_runs_never_cut():
    from dslake_index.profilers.stats import column_list

    assert column_list([str(i) for i in [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23]]) == "8-21, 23"
    assert column_list([f"c{i}" for i in range(14)]).endswith("c11 and 2 more")


def test_sampled_statistics_say_their_share(tmp_path):
    from dslake_index.cards import stats_share
    from dslake_index.profilers.base import Column, Table

    table = Table(n_rows=8360, n_rows_exact=False, n_cols=1, columns=[Column("Age", "float", 2666, 0)])
    assert stats_share(table).startswith(" (statistics, ranges and counts of 2,666 of about 8,360 rows, 32%")
    from dsstar_lake.agent.brief import brief

    lines = ["File: data/w.xlsx", "Table: 8,360 (approximate) rows x 1 columns", f"  columns{stats_share(table)}:",
             "    - 'Age': float; range 0 .. 9"]
    assert "  columns: 'Age' float" in brief("\n".join(lines))  # the brief still reads the column block
    table.columns[0].non_null = 8360
    assert stats_share(table) == ""


def test_a_small_aligned_text_table_is_described_whole_not_from_its_head(tmp_path):
    path = tmp_path / "omni.dat"
    path.write_text("".join(f"2024 {day:4d} {hour:3d} {day * 0.5:8.1f}\n" for day in range(1, 367) for hour in (0, 12)))
    profile = profile_path(path, Limits(head_bytes=4096))  # the head holds about 40 days of 366
    table = profile.tables[0]
    assert (table.n_rows, table.n_rows_exact) == (732, True)
    assert (table.columns[1].min, table.columns[1].max) == (1, 366)


def test_shares_that_imply_another_total_than_the_rows_sum_are_said():
    from dslake_index.profilers.stats import share_totals

    df = pd.DataFrame({"Report Type": ["Fraud", "Identity Theft", "Other"],
                       "# of Reports": [2600678, 1135291, 2759963],
                       "share": ["40.2% of total reports", "17.5% of total reports", "42.6% of total reports"]})
    (note,) = share_totals(df)
    assert "imply a total of 6,471,191 .. 6,477,405" in note and "rows sum to 6,495,932" in note
    df["# of Reports"] = [2594330, 1132520, 2749190]  # shares of their own sum: nothing to say
    df["share"] = ["40.0%", "17.5%", "42.5%"]
    assert share_totals(df) == []
