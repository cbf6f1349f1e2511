"""A family described as the dataset it is: statistics over every member, and how members relate."""

from __future__ import annotations

import glob
import re
from datetime import datetime, timedelta

import pandas as pd
from dslake_index.entries import family_entry
from dslake_index.families import Member, group_files
from dslake_index.family_stats import MemberFacts, family_view
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path


def _family(root, names):
    """Profile files as the indexer would and return (group, first profile, member facts)."""
    profiles = {name: profile_path(root / name, Limits()) for name in names}
    members = [Member(name, name, profiles[name].signature(), (root / name).stat().st_size,
                      [(t.n_rows, t.n_rows_exact, t.read_hint) for t in profiles[name].tables]) for name in names]
    (group,) = group_files(members, 2)
    facts = [MemberFacts(m.path, [t for t in profiles[m.path].to_dict()["tables"]], profiles[m.path].notes)
             for m in group.members]
    return group, profiles[group.members[0].path], facts


def _windows(root, start, days, every, count, value=lambda t: t.hour * 0.5):
    names = []
    for i in range(count):
        first = start + timedelta(days=every * i)
        hours = [first + timedelta(hours=h) for h in range(days * 24)]
        name = f"win-{i:03d}-{first:%Y%m%d}.csv"
        (root / name).write_text("Timestamp,speed\n" + "".join(f"{t:%Y-%m-%d %H:%M:%S},{value(t)}\n" for t in hours))
        names.append(name)
    return names


def test_rolling_windows_are_one_dataset_and_their_load_line_drops_the_copies(tmp_path, monkeypatch):
    names = _windows(tmp_path, datetime(2014, 1, 1), days=10, every=2, count=6)
    group, first, facts = _family(tmp_path, names)
    view = family_view(first, facts)
    text = "\n".join(view.lines)
    assert "Members overlap: each spans about 10 days and the next starts about 2 days later" in text
    assert "Rows repeated across members" in text and view.dedup == ".drop_duplicates()"
    stamp = view.profile.tables[0].columns[0]
    assert (stamp.min[:10], stamp.max[:10]) == ("2014-01-01", "2014-01-20")  # the family's, not the first file's
    # The family's load line, run as a coder's script would, gives each hour once.
    entry = family_entry(group, first, 40, facts=facts)
    code = re.search(r"Load them all with glob, e.g. `(.+?)`", entry.description).group(1)
    (tmp_path / "data").mkdir()
    for name in names:
        (tmp_path / "data" / name).write_bytes((tmp_path / name).read_bytes())
    monkeypatch.chdir(tmp_path)
    frame = eval(code, {"pd": pd, "glob": glob})
    assert len(frame) == 20 * 24 - 24 + 24 and frame["Timestamp"].is_unique


def test_state_files_count_data_rows_share_rows_and_add_up_kinds(tmp_path):
    area = '"{}, {} {} Statistical Area",{}\n'
    notes = ',\n"Metropolitan Areas are defined by the Office of Management and Budget.",\n,\n"Source: Consumer Sentinel Network Data Book 2024, Federal Trade Commission",\n'
    files = {"NewHampshire.csv": [("Manchester-Nashua", "NH", "Metropolitan", 900),
                                  ("Lebanon-Claremont", "NH-VT", "Micropolitan", 242)],
             "Vermont.csv": [("Burlington-South Burlington", "VT", "Metropolitan", 258),
                             ("Lebanon-Claremont", "NH-VT", "Micropolitan", 242)],
             "Maine.csv": [("Portland-South Portland", "ME", "Metropolitan", 700)]}
    for name, rows in files.items():
        (tmp_path / name).write_text("Metropolitan Areas: Identity Theft Reports,\n,\nMetropolitan Area,# of Reports\n"
                                     + "".join(area.format(*r) for r in rows) + notes)
    group, first, facts = _family(tmp_path, sorted(files))
    assert sum(m.tables[0][0] for m in group.members) == 5  # data rows only, not the note lines under them
    view = family_view(first, facts)
    text = "\n".join(view.lines)
    assert "1 of the 5 rows are copies of a row in another member (2 of the 3 members share rows" in text
    assert view.dedup == "" and "a member's own counts need its copy" in text  # said, not done
    # the per-part share: a repeated row is the whole area's count in each state's file
    assert "(a repeated row stands in 2 members, e.g. one in NewHampshire.csv, Vermont.csv)" in text
    assert "its share can pass 100%" in text
    kinds = view.profile.tables[0].columns[0].kinds
    assert [(k[1], k[2]) for k in kinds] == [("Metropolitan Statistical Area", 3), ("Micropolitan Statistical Area", 2)]
    reports = view.profile.tables[0].columns[1]
    assert (reports.min, reports.max, reports.non_null) == (242, 900, 5)


def test_series_over_one_period_are_not_copies_and_fills_of_any_member_are_said(tmp_path):
    names = []
    for station, fill_at, base in (("a", None, 0), ("b", 5, 100)):
        rows = [f"2024-01-0{d} 00:00:00,{9999 if d == fill_at else base + d * 1.5}\n" for d in range(1, 10)]
        (tmp_path / f"station_{station}.csv").write_text("Timestamp,level\n" + "".join(rows))
        names.append(f"station_{station}.csv")
    group, first, facts = _family(tmp_path, names)
    view = family_view(first, facts)
    text = "\n".join(view.lines)
    assert "parallel series" in text and view.dedup == ""
    level = view.profile.tables[0].columns[1]
    assert (level.fill, level.fill_count, level.max) == (9999, 1, 113.5)  # the second member's fill, its range


def test_windows_sharing_most_of_their_span_are_windows_of_one_series_not_parallel_series(tmp_path):
    # 60-day windows starting 3 days apart (OMNI2's): a few of them span less than two windows, yet each starts a
    # step after the one before, so they are windows of one series
    names = _windows(tmp_path, datetime(2013, 11, 29), days=60, every=3, count=8)
    group, first, facts = _family(tmp_path, names)
    view = family_view(first, facts)
    text = "\n".join(view.lines)
    assert "parallel series" not in text
    assert "Members overlap: each spans about 60 days and the next starts about 3 days later" in text
    assert view.dedup == ".drop_duplicates()"
