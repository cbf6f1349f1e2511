"""What only a family's late members hold is still stated in its description (issue 46's guard for any cheaper
pass over members): a fill value, a gap in the series, -1 standing for missing data, the family's far end.

The lake is indexed end to end (the confined profile pool, whose workers take a known family's later members by
the fast path of profilers/family_layout.py), so a member that is not the first any worker meets is among those
checked.
"""

from __future__ import annotations

import glob
import re
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from dsstar_lake.lake import Lake

MEMBERS = 24
FILL_AT = 20  # the member with a fill value and a six-hour gap
MINUS_ONE_AT = 22  # the member whose counts hold -1 for missing


def _speed(i: int, hour: int) -> float:
    return round(400 + i + hour * 0.5, 1)


@pytest.fixture(scope="module")
def station_lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("late") / "lake"
    (root / "obs").mkdir(parents=True)
    for i in range(MEMBERS):
        start = datetime(2020, 1, 1) + timedelta(days=i)
        rows = []
        for hour in range(24):
            if i == FILL_AT and 6 <= hour < 12:
                continue
            speed = 9999.9 if (i == FILL_AT and hour == 15) else _speed(i, hour)
            count = -1 if (i == MINUS_ONE_AT and hour % 8 == 0) else 10 * i + hour
            rows.append(f"{start + timedelta(hours=hour):%Y-%m-%d %H:%M:%S},{speed},{count}\n")
        (root / "obs" / f"station-{i:03d}-{start:%Y%m%d}.csv").write_text(
            "Timestamp,speed_km_s,particle_count\n" + "".join(rows))
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


def _family_description(root: Path) -> str:
    lake = Lake.open(root)
    try:
        (description,) = [row[0] for row in lake.connection().execute(
            "SELECT description FROM entries WHERE kind = 'family'")]
    finally:
        lake.close()
    return description


def _column_line(description: str, name: str) -> str:
    return next(line for line in description.splitlines() if line.strip().startswith(f"- {name!r}"))


def test_a_late_members_fill_value_and_gap_are_stated(station_lake):
    description = _family_description(station_lake)
    speed = _column_line(description, "speed_km_s")
    assert "fill value 9999.9 in 1 rows" in speed
    top = max(_speed(i, 23) for i in range(MEMBERS))  # the last member's last hour, past the first member's range
    assert f"range 400 .. {top:g} without the fill value" in speed
    stamp = _column_line(description, "Timestamp")
    assert f"gaps inside 1 of {MEMBERS} members' own times" in stamp
    assert "missing 2020-01-21 06:00 .. 2020-01-21 11:00 (6)" in stamp
    assert "9999.9 in column(s) speed_km_s' (in 1 member, e.g. station-020-20200121.csv)" in description
    rows = MEMBERS * 24 - 6
    assert f"over all {MEMBERS} members' {rows} rows" in description


def test_a_late_members_minus_one_for_missing_is_stated(station_lake):
    count = _column_line(_family_description(station_lake), "particle_count")
    assert "-1 in 3 rows, likely missing" in count
    assert f"range 0 .. {10 * (MEMBERS - 1) + 23} without the fill value" in count


def test_the_load_line_reads_every_member_and_keeps_the_late_facts(station_lake, monkeypatch):
    description = _family_description(station_lake)
    loader = re.search(r"Load them all with glob, e.g. `([^`]+)`", description).group(1)
    monkeypatch.chdir(station_lake.parent)  # a script in the sandbox reads the lake as data/
    (station_lake.parent / "data").symlink_to(station_lake)
    frame = eval(loader, {"pd": pd, "glob": glob})
    assert len(frame) == MEMBERS * 24 - 6
    assert (frame["speed_km_s"] == 9999.9).sum() == 1 and (frame["particle_count"] == -1).sum() == 3
