"""A value only a family's late member holds, and a member whose schema differs (issue 46's guards for a cheaper
pass over members, beside tests/test_family_late_members.py): the late value is counted in the family's column
line, and the file with another header is described alone, never added into the family's statistics.

The lake is indexed end to end (the confined profile pool), so the late members are not the first any worker meets.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dsstar_lake.lake import Lake

MEMBERS = 11  # gauge files of one schema
MAINT_AT = MEMBERS - 1  # the last member: the only one whose status is ever 'maint'
OTHER = MEMBERS  # one more file of the same name pattern with a 'remark' column


def _level(i: int, hour: int) -> float:
    return 100 + i + hour * 0.25


@pytest.fixture(scope="module")
def gauge_lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("late_kinds") / "lake"
    (root / "obs").mkdir(parents=True)
    for i in range(MEMBERS + 1):
        start = datetime(2021, 3, 1) + timedelta(days=i)
        remark = ",checked" if i == OTHER else ""
        rows = "".join(
            f"{start + timedelta(hours=hour):%Y-%m-%d %H:%M:%S},{'maint' if i == MAINT_AT and hour in (3, 4) else 'ok'},"
            f"{_level(i, hour)}{remark}\n" for hour in range(24))
        header = "Timestamp,status,level_m" + (",remark" if i == OTHER else "")
        (root / "obs" / f"gauge-{i:03d}-{start:%Y%m%d}.csv").write_text(header + "\n" + rows)
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


def _descriptions(root: Path) -> dict[tuple[str, str], str]:
    lake = Lake.open(root)
    try:
        return {(kind, path): description for kind, path, description in lake.connection().execute(
            "SELECT kind, path, description FROM entries")}
    finally:
        lake.close()


def _column_line(description: str, name: str) -> str:
    return next(line for line in description.splitlines() if line.strip().startswith(f"- {name!r}"))


def test_a_value_only_the_last_member_holds_is_counted_in_the_family(gauge_lake):
    (family,) = [d for (kind, _), d in _descriptions(gauge_lake).items() if kind == "family"]
    status = _column_line(family, "status")
    assert f"top 'ok' ({MEMBERS * 24 - 2}), 'maint' (2)" in status
    level = _column_line(family, "level_m")
    assert f"range 100 .. {_level(MAINT_AT, 23):g}," in level  # the last member's end, not the other file's


def test_a_file_with_another_schema_is_described_alone_not_added_into_the_family(gauge_lake):
    descriptions = _descriptions(gauge_lake)
    (family,) = [d for (kind, _), d in descriptions.items() if kind == "family"]
    other = f"obs/gauge-{OTHER:03d}-20210312.csv"
    assert family.startswith(f"Family of {MEMBERS} files")
    assert f"over all {MEMBERS} members' {MEMBERS * 24} rows" in family
    assert f"'data/{other}'" in family  # the family's file list leaves it out by name
    assert "remark" not in family
    alone = descriptions[("file", other)]
    assert "'remark': text; 1 distinct; top 'checked' (24)" in alone
    assert f"range {_level(OTHER, 0):g} .. {_level(OTHER, 23):g}" in _column_line(alone, "level_m")
