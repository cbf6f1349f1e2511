"""Descriptions the model can trust: for each case once described wrong or cut, the description says the right
thing and its load hints, executed by the check module, give the described shape and column names (issue 15)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from dslake_index.cards import describe
from dslake_index.entries import family_entry
from dslake_index.families import Group, Member
from dslake_index.hint_check import check_files, check_profile, run_hint
from dslake_index.profilers.base import Limits, Profile
from dslake_index.profilers.registry import profile_path


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode(encoding))
    return p


def profiled(path: Path, limits: Limits | None = None) -> tuple[Profile, str]:
    """Profile a file, assert every hint runs and matches its description, return the profile and description."""
    prof = profile_path(path, limits or Limits())
    result = check_profile(prof, path, path.name)
    assert result.ok, [(m.kind, m.where, m.detail) for m in result.mismatches]
    assert result.executed == result.hints >= 1
    return prof, describe(prof, path.name)


def test_tab_file_with_thousands_separators_is_tab_delimited(tmp_path):
    # nifc_wildfires.csv: '\t' between fields, ',' inside numbers; read as ',' it gave 4 columns of '2024\t64'
    rows = [f"{2024 - i}\t{50 + i},{100 + i * 7}\t{i % 3 + 1},{200 + i:03d},{300 + i}" for i in range(30)]
    rows += ["2001\t84,079\t953,911"]  # an acreage under a million: one ',' fewer
    prof, text = profiled(write(tmp_path, "fires.csv", "Year\tFires\tAcres\n" + "\n".join(rows) + "\n"))
    t = prof.tables[0]
    assert prof.format == "tsv" and "sep='\\t'" in t.read_hint and "thousands=','" in t.read_hint
    assert [c.name for c in t.columns] == ["Year", "Fires", "Acres"] and t.n_rows == 31
    assert "tab-delimited text, 3 columns" in text
    assert run_hint(t.read_hint, tmp_path / "fires.csv")["Acres"].iloc[-1] == 953911


def test_three_digit_groups_are_thousands_not_decimal_commas(tmp_path):
    # nifc_*_caused_*.csv: '2,911' is 2911; decimal=',' made 57,962 fires into 57.962
    head = "Year\tAlaska\tNorthwest\tTotal\n"
    rows = [f"{2024 - i}\t{170 + i}\t{2 + i % 2},{900 + i:03d}\t{50 + i},{962 - i:03d}" for i in range(12)]
    p = write(tmp_path, "caused.csv", head + "\n".join(rows) + "\n")
    prof, text = profiled(p)
    hint = prof.tables[0].read_hint
    assert "decimal" not in hint and "thousands=','" in hint and "decimal comma" not in text
    assert run_hint(hint, p)["Total"].iloc[0] == 50962
    # the check catches the old hint: thousands read as decimal commas
    prof.tables[0].read_hint = "pd.read_csv({path}, sep='\\t', decimal=',')"
    kinds = {m.kind for m in check_profile(prof, p, p.name).mismatches}
    assert "decimal-comma" in kinds


def test_a_real_decimal_comma_stays_a_decimal_comma(tmp_path):
    p = write(tmp_path, "de.csv", "Ort;Wert\nA;10,21\nB;96,3\nC;1.234,5\nD;7,25\n")
    prof, _ = profiled(p)
    assert "decimal=','" in prof.tables[0].read_hint
    assert run_hint(prof.tables[0].read_hint, p)["Wert"].tolist()[:2] == [10.21, 96.3]


STACKED = "\r\n".join([
    "Reports by Military Consumers,,,,,", ",,,,,",
    "Report Type,# of Reports,,,,", 'Fraud,"99,443",,,,', 'Identity Theft,"38,736",,,,', 'Other,"75,652",,,,',
    ",,,,,",
    '# of Fraud Reports,"99,443",,,,', '# of Reports with $ Loss,"31,833",32% of fraud reports,,,',
    "Median $ Loss,$700 ,,,,", ",,,,,",
    "Top Fraud Categories,,,,,",
    "Rank,Category, # of Reports  ,% Reporting $ Loss, Total $ Loss , Median $ Loss ",
    '1,Imposter Scams,"44,587",23%,$199.6M,"$1,110 "', '2,Online Shopping,"11,515",81%,$22.5M,$150 ',
    ",,,,,",
    "Identity Theft Types,,,,,",
    "Rank, Theft Type ,# of Reports,,,", '1,Credit Card,"14,088",,,', '2,Loan or Lease,"8,365",,,', ",,,,,",
    '"Consumers can report multiple types of identity theft, so the counts of the types add up to more than the number '
    'of identity theft reports; in 2024, 14% of reports included more than one type of identity theft.",,,,,',
    ",,,,,", '"Source: Consumer Sentinel Network Data Book 2024, Federal Trade Commission",,,,,',
]) + "\r\n"


def test_stacked_tables_get_one_hint_each_and_footnotes_stay_whole(tmp_path):
    # legal/ data books: one table with 'Unnamed: 2..5' columns and sub-table headers among the data
    p = write(tmp_path, "book.csv", STACKED)
    prof, text = profiled(p)
    shapes = [(t.name, t.n_rows, [c.name for c in t.columns]) for t in prof.tables]
    assert shapes == [
        (None, 3, ["Report Type", "# of Reports"]),
        (None, 3, ["0", "1", "2"]),
        ("Top Fraud Categories", 2, ["Rank", "Category", " # of Reports  ", "% Reporting $ Loss", " Total $ Loss ",
                                     " Median $ Loss "]),
        ("Identity Theft Types", 2, ["Rank", " Theft Type ", "# of Reports"]),
    ]
    assert "4 tables stacked" in text and "Unnamed" not in text
    assert "usecols=[0, 1]" in prof.tables[0].read_hint and "skiprows=12" in prof.tables[2].read_hint
    assert "more than one type of identity theft." in text  # the footnote whole, not cut at 160 characters
    assert "Median $ Loss: $700" in text  # label/value lines shown in full
    df = run_hint(prof.tables[3].read_hint, p)
    assert df[" Theft Type "].tolist() == ["Credit Card", "Loan or Lease"] and df["# of Reports"].sum() == 22453
    # the check catches the old single-table hint: sub-table headers inside the data
    prof.tables[0].read_hint = "pd.read_csv({path}, skiprows=2, thousands=',')"
    kinds = {m.kind for m in check_profile(prof, p, p.name).mismatches}
    assert {"rows", "columns", "header-in-data"} <= kinds


def test_a_blank_line_inside_one_table_does_not_split_it(tmp_path):
    p = write(tmp_path, "gap.csv", "region,value\nA,1\nB,2\n,\nC,3\nD,4\n")
    prof, _ = profiled(p)
    assert len(prof.tables) == 1


def test_invisible_characters_in_column_names_are_shown_escaped(tmp_path):
    p = write(tmp_path, "nbsp.csv", "State\xa0Name,Total\u200bLoss,count\nOhio,1.5,3\nUtah,2.5,4\nIowa,3.5,5\n")
    prof, text = profiled(p)
    assert [c.name for c in prof.tables[0].columns] == ["State\xa0Name", "Total\u200bLoss", "count"]
    assert "'State\\xa0Name'" in text and "'Total\\u200bLoss'" in text
    assert "invisible characters" in text and "no-break space" in text


def test_invisible_characters_in_html_headers_are_kept_as_pandas_reads_them(tmp_path):
    html = ("<html><body><table><tr><th colspan=3>Largest areas</th></tr>"
            "<tr><th>Metropolitan&nbsp;area</th><th>Rank</th><th></th></tr>"
            "<tr><td>Boston</td><td>1</td><td rowspan=3>img</td></tr><tr><td>Austin</td><td>2</td></tr>"
            "<tr><td>Tulsa</td><td>3</td></tr></table></body></html>")
    prof, text = profiled(write(tmp_path, "areas.html", html))
    t = prof.tables[0]
    assert [c.name for c in t.columns] == ["Metropolitan\xa0area", "Rank", "Unnamed: 2_level_1"]
    assert "droplevel" in t.read_hint and "'Metropolitan\\xa0area'" in text


def test_a_header_that_does_not_fit_its_values_is_pointed_out(tmp_path):
    text = "Theft Type,Year,# of Reports\n" + "".join(
        f'{y},{kind},"{n:,}"\n' for y in (2020, 2021) for kind, n in (("Bank Account", 89684), ("Credit Card", 393446)))
    _, desc = profiled(write(tmp_path, "top.csv", text))
    assert "column 'Year' holds words such as 'Bank Account'" in desc and "'Theft Type' holds years" in desc


def test_fill_values_are_named_and_left_out_of_ranges(tmp_path):
    rows = [f"2014-01-28 00:{i:02d}:00,{'9.99e+32' if i % 10 == 0 else f'{4.7 + i / 100:.3f}e-13'}" for i in range(40)]
    _, desc = profiled(write(tmp_path, "density.csv", "Timestamp,Orbit Mean Density (kg/m^3)\n" + "\n".join(rows)))
    assert "fill value 9.99e+32 in 4 rows (missing data)" in desc
    assert "without the fill value" in desc and "range 4.71e-13 .. 5.09e-13" in desc
    lines = [f"2024 {d:3d} {v:10.2f} {w:6.1f}" for d, v, w in
             [(1, 12.5, 3.0), (2, 999999.99, 4.0), (3, 14.25, 999.9), (4, 11.0, 2.5), (5, 13.0, 3.5)]]
    prof, desc = profiled(write(tmp_path, "omni.dat", "\n".join(lines) + "\n"))
    assert "fill values that stand for missing data" in desc
    assert "999999.99 in column(s) 2" in desc and "999.9 in column(s) 3" in desc
    assert prof.tables[0].columns[2].max == 14.25


def test_a_year_column_is_not_a_fill_value(tmp_path):
    rows = "".join(f"{i},{90 + i % 10}\n" for i in range(40))  # 99 among 90..98 is a value
    prof, _ = profiled(write(tmp_path, "pct.csv", "id,percent\n" + rows))
    assert prof.tables[0].columns[1].fill is None and prof.tables[0].columns[1].max == 99


def test_notes_are_whole_up_to_a_budget_per_entry_and_say_when_cut():
    long_note = "consumers can report multiple types " * 8  # 288 characters: once cut at 160
    prof = Profile(format="csv", notes=[long_note] + [f"note {i}: " + "x " * 150 for i in range(30)])
    text = describe(prof, "a.csv")
    assert long_note in text
    assert "more note(s) cut to keep this description short]" in text


def _document(n_intro: int = 80) -> str:
    intro = ["                 E X A M P L E   D A T A   S E T", ""] + [
        f"  The directory holds hourly means of field {i} measured near the Earth, and more prose text here."
        for i in range(n_intro)]
    layout = ["", "                OEXAMPLE_YYYY.DAT FORMAT DESCRIPTION", "",
              "WORD  FORMAT  Fill Value         MEANING                  UNITS/COMMENTS", ""]
    layout += [f"{w:2d}     F6.1  999.9     Field quantity number {w:<3d}        nT" for w in range(1, 41)]
    layout += ["43     F10.2 999999.99 Proton flux                 number/cmsq sec sr >1 Mev"]
    tail = ["", "                      C O M M E N T S", ""] + [f"  Comment line {i} explains things." for i in range(60)]
    tail += ["", "  TABLE", "  ISEE 1  11", "  ISEE 2  12", "  ISEE 3  13", "  IMP 8  50", ""]
    return "\n".join(intro + layout + tail) + "\n"


def test_a_document_is_described_by_its_text_not_an_incidental_table(tmp_path):
    # omni2.text: a 4-row table it happens to contain stood for the document; the record layout was lost
    prof, text = profiled(write(tmp_path, "example.text", _document()))
    assert prof.format == "text" and prof.tables == []
    assert "43  F10.2 999999.99 Proton flux" in text  # the record layout, from the middle of the file
    assert "FORMAT DESCRIPTION" in text and "Outline" in text and "open(" in text
    assert "part of the document" in text


def test_a_text_family_is_read_whole_not_with_read_csv(tmp_path):
    bulletin = ":Product: forecast\n:Issued: 2025 Mar 09\n\nNOAA Ap Index Forecast\nObserved Ap 08 Mar 021\n" \
               "Predicted Ap 10 Mar-12 Mar 025-020-012\n\nNOAA Kp index forecast\nActive 25/40/40\n"
    prof = profile_path(write(tmp_path, "0309forecast.txt", bulletin), Limits())
    members = [Member(f"f/{d}forecast.txt", f"{d}forecast.txt", prof.signature()) for d in ("0309", "0310", "0311")]
    entry = family_entry(Group("f", "*forecast.txt", prof.signature(), members), prof, max_listed=40)
    loader = entry.description.splitlines()[2]
    assert "open(p).read()" in loader and "read_csv" not in loader


def test_side_by_side_excel_tables_name_repeated_headers_as_pandas_does(tmp_path):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Age_ky", "PC1", None, None, "Age_ky", "Dust"])
    for i in range(6):
        ws.append([i * 1.5, i * 0.1, None, None, i * 2.0, i * 0.2])
    wb.save(tmp_path / "climate.xlsx")
    prof, _ = profiled(tmp_path / "climate.xlsx")
    assert [[c.name for c in t.columns] for t in prof.tables] == [["Age_ky", "PC1"], ["Age_ky.1", "Dust"]]


def test_one_text_cell_far_down_a_numeric_column_is_said(tmp_path):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Site", "Longitude"])
    for i in range(700):
        ws.append([f"S{i}", "44.86, 9.54" if i == 650 else 9.5 + i / 1000])
    wb.save(tmp_path / "sites.xlsx")
    prof, text = profiled(tmp_path / "sites.xlsx")
    assert "1 text cell(s), e.g. '44.86, 9.54'" in text


def test_rows_of_a_sampled_file_with_multiline_fields_are_estimated_from_rows_not_lines(tmp_path):
    body = "".join(f'{i},"site {i}\nnorth side",{i * 0.5}\n' for i in range(4000))
    p = write(tmp_path, "stations.csv", "id,description,value\n" + body)
    prof, _ = profiled(p, Limits(head_bytes=32 * 1024))
    assert 3000 < prof.tables[0].n_rows < 5000 and not prof.tables[0].n_rows_exact


def test_check_files_runs_hints_in_workers_and_stops_at_the_timeout(tmp_path):
    write(tmp_path, "a.csv", "x,y\n1,2\n3,4\n")
    write(tmp_path, "b.tsv", "x\ty\n1\t2\n")
    write(tmp_path, "big.csv", "id,city,value\n" + "".join(f"{i},c{i % 7},{i * 0.25}\n" for i in range(300_000)))
    results = {r.path: r for r in check_files(tmp_path, ["a.csv", "b.tsv"], workers=2, timeout_s=60)}
    assert all(r.ok and r.hints == 1 for r in results.values())
    slow = list(check_files(tmp_path, ["big.csv"], workers=1, timeout_s=0.05))
    assert [m.kind for m in slow[0].mismatches] == ["timeout"]


@pytest.mark.parametrize("hint, kind", [
    ("pd.read_csv({path})", "delimiter-in-values"),
    ("pd.read_csv({path}, sep='\\t', nrows=1)", "rows"),
    ("pd.read_csv({path}, sep='\\t', header=None)", "column-names"),
    ("pd.read_csv({path}, sep=';')", "error"),
])
def test_the_check_names_what_a_wrong_hint_gets_wrong(tmp_path, hint, kind):
    p = write(tmp_path, "t.csv", "Year\tName\n" + "".join(f"{2000 + i}\tn{i}\n" for i in range(5)))
    prof = profile_path(p, Limits())
    prof.tables[0].read_hint = hint.replace("sep=';'", "sep=';', usecols=['nope']")
    kinds = {m.kind for m in check_profile(prof, p, p.name).mismatches}
    assert kind in kinds


def test_dates_in_the_sample_do_not_trip_the_misfit_note(tmp_path):
    rows = "".join(f"{dt.date(2024, 1, 1) + dt.timedelta(days=i)},{i}\n" for i in range(10))
    _, desc = profiled(write(tmp_path, "d.csv", "Date,value\n" + rows))
    assert "holds words" not in desc
