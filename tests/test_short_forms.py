"""Short forms of a description (one line, brief, kin line, gist, menu line) per table and cut between words; a
family's coverage per member and its gaps, in its description and its gist."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace

from dslake_index.cards import card, describe
from dslake_index.entries import family_entry
from dslake_index.family_stats import family_view
from dslake_index.gist import gist
from dslake_index.kin import kin_line
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.profilers.textio import printable
from test_family_stats import _family

from dsstar_lake.agent.brief import brief, one_line
from dsstar_lake.agent.menu import hit_line


def _stacked_tables(root):
    """A report file of three tables stacked under their own titles, each with the same header."""
    blocks = []
    for title in ("FTC", "Top Data Contributors", "Other Data Contributors"):
        rows = "".join(f"{year},{title} source {n},{1000 * n + year},{n}.5%\n" for year in (2022, 2023, 2024)
                       for n in range(1, 5))
        blocks.append(f"{title},,,\nYear,Data Contributor,# of Reports,%\n{rows}")
    path = root / "contributors.csv"
    path.write_text("Data Contributors,,,\n,,,\n" + ",,,\n".join(blocks))
    return describe(profile_path(path, Limits()), "contributors.csv")


def test_the_gist_counts_every_stacked_table_and_says_its_columns_are_theirs(tmp_path):
    _stacked_tables(tmp_path)
    head, columns = gist(card(profile_path(tmp_path / "contributors.csv", Limits()), "contributors.csv"))[:2]
    assert "12 rows × 4 columns (FTC) and 2 more tables" in head
    assert columns == "columns of the 3 tables: Year, Data Contributor, # of Reports, %"


def test_one_line_lists_the_first_tables_columns_once_and_counts_the_other_tables(tmp_path):
    description = _stacked_tables(tmp_path)
    assert description.count("Table ") >= 2  # the file is read as stacked tables
    line = one_line("contributors.csv", description)
    assert "columns 'Year', 'Data Contributor', '# of Reports', '%' ·" in line
    assert line.count("'Year'") == 1 and line.endswith("more tables")
    # The brief keeps one column line per table, never the tables' headers run together.
    lines = brief(description).splitlines()
    column_lines = [ln for ln in lines if ln.startswith("  columns: ")]
    assert len(column_lines) == description.count("Table ") and all(ln.count("'Year'") == 1 for ln in column_lines)


def _daily(root, start, days, skip=(), prefix="day"):
    names = []
    for i in range(days):
        if i in skip:
            continue
        day = start + timedelta(days=i)
        name = f"{prefix}-{day:%Y%m%d}.csv"
        (root / name).write_text("Timestamp,speed\n" + "".join(f"{day + timedelta(hours=h):%Y-%m-%d %H:%M:%S},{h}\n"
                                                                for h in range(24)))
        names.append(name)
    return names


def test_a_family_line_is_whole_words_without_its_glob(tmp_path):
    names = _daily(tmp_path, datetime(2024, 3, 1), 5)
    group, first, facts = _family(tmp_path, names)
    entry = family_entry(group, first, 40, facts=facts)
    line = one_line(entry.path, entry.description)
    assert "· Family of 5 files (one schema, one name pattern) ·" in line and "matching" not in line
    kin = kin_line(entry.path, entry.description)
    assert "· Family of 5 files (one schema, one name pattern) ·" in kin


def test_a_missing_day_is_a_gap_in_the_family_line_and_its_gist(tmp_path):
    names = _daily(tmp_path, datetime(2024, 3, 1), 8, skip={4})
    group, first, facts = _family(tmp_path, names)
    view = family_view(first, facts)
    text = "\n".join(view.lines)
    assert "'Timestamp' covers 2024-03-01 .. 2024-03-08 23:00:00 over all members" in text
    assert "Gaps no member covers: 2024-03-04 23:00:00 .. 2024-03-06 (1.0 days)." in text
    entry = family_entry(group, first, 40, facts=facts)
    head = gist(entry.card)[0]
    assert "7 files, 168 rows in all · 2 columns · Timestamp 2024-03-01 to 2024-03-08 (1 gap 2024-03-04 to 2024-03-06)" \
        in head
    # The one-line (named only) form carries the period and the gap, the menu line the period.
    assert ("'Timestamp' 2024-03-01 .. 2024-03-08 23:00:00 (gaps: 2024-03-04 23:00:00 .. 2024-03-06 (1.0 days))"
            in one_line(entry.path, entry.description))
    hit = SimpleNamespace(path=entry.path, kind="family", member_count=7, summary=gist(entry.card), card_line="")
    assert "Timestamp 2024-03-01 to 2024-03-08" in hit_line(hit)


def test_a_member_that_starts_later_is_named_with_its_first_time(tmp_path):
    names = []
    for station in "abcde":
        late = 1 if station == "d" else 0
        rows = [f"2024-01-{d:02d} 00:00:00,{d * 1.5}\n" for d in range(1 + late, 11)]
        (tmp_path / f"station_{station}.csv").write_text("Timestamp,level\n" + "".join(rows))
        names.append(f"station_{station}.csv")
    group, first, facts = _family(tmp_path, names)
    text = "\n".join(family_view(first, facts).lines)
    assert "1 of 5 members start after 2024-01-01: station_d.csv (2024-01-02)." in text
    assert "Gaps" not in text


def test_few_members_each_say_their_first_and_last_time(tmp_path):
    spans = {"orbit_a.csv": (1, 4), "orbit_b.csv": (2, 5), "orbit_c.csv": (9, 12)}
    for name, (lo, hi) in spans.items():
        rows = [f"2024-05-{d:02d} 12:00:00,{d}\n" for d in range(lo, hi + 1)]
        (tmp_path / name).write_text("EPOCH,value\n" + "".join(rows))
    group, first, facts = _family(tmp_path, list(spans))
    text = "\n".join(family_view(first, facts).lines)
    assert ("Per member: orbit_a.csv 2024-05-01 12:00:00 .. 2024-05-04 12:00:00; orbit_b.csv 2024-05-02 12:00:00 .. "
            "2024-05-05 12:00:00; orbit_c.csv 2024-05-09 12:00:00 .. 2024-05-12 12:00:00.") in text


def test_a_family_column_counts_every_members_value(tmp_path):
    names = []
    for n, satellite in enumerate(("STARLINK-31052", "STARLINK-30805")):
        rows = [f"{satellite},2024-05-0{d} 00:00:00,{n + d}\n" for d in range(1, 4 + n)]
        (tmp_path / f"sat_{n}.csv").write_text("OBJECT_NAME,EPOCH,value\n" + "".join(rows))
        names.append(f"sat_{n}.csv")
    group, first, facts = _family(tmp_path, names)
    entry = family_entry(group, first, 40, facts=facts)
    line = next(ln for ln in entry.description.splitlines() if ln.strip().startswith("- 'OBJECT_NAME'"))
    assert "2 distinct" in line and "'STARLINK-31052'" in line and "'STARLINK-30805'" in line


def test_text_samples_and_short_lines_end_at_a_word():
    sample = printable("Recipe for restoring raw accelerations.\nAcceleration estimates follow here.", 54)
    assert sample == "Recipe for restoring raw accelerations.\nAcceleration…"
    long_line = "Notes line: " + "acceleration " * 40
    clipped = brief("File: data/x.txt (1 bytes)\nTitle: " + long_line).splitlines()[1]
    assert clipped.endswith("acceleration…") and len(clipped) <= 240
    hit = SimpleNamespace(path="x.csv", kind="file", member_count=1, card_line="",
                          summary=["Solar wind " * 30, "columns: " + ", ".join(f"magnetic_{i}" for i in range(40))])
    line = hit_line(hit)
    words = set(" ".join(hit.summary).replace(",", " ").split())
    assert line.endswith("…") and line[:-1].split()[-1].rstrip(",") in words
