"""A family's members are profiled with the layout their first member's full search found (family_layout.py): the
fast path is taken for a plain member, the full search for one that differs, and every profile is the one the full
search gives."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from dslake_index.profile_task import profile_json
from dslake_index.profilers import delimited, family_layout
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.profilers.stats import _first_distinct, _first_distinct_hashable

HEADER = "Timestamp,YEAR,Speed_km_s,Station,Flag"


def member_text(seed: int, rows: int = 150, row: object = None) -> str:
    """A member of the family: a timestamp, a year, a float, a station code and a flag per line."""
    rng = random.Random(seed)
    lines = [HEADER]
    for i in range(rows):
        cells = [f"2018-09-{1 + i % 28:02d} {i % 24:02d}:00:00", "2018", f"{rng.uniform(300, 700):.1f}",
                 str(rng.choice([12, 45, 78])), rng.choice(["A", "B", "C"])]
        if callable(row):
            cells = row(i, cells)
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


@pytest.fixture
def family(tmp_path, monkeypatch):
    """A folder whose first member was profiled (its layout remembered); returns (write, profile) helpers."""
    family_layout.forget()
    taken: list[bool] = []
    known = family_layout.known_layout

    def spy(*args, **kwargs):
        lay = known(*args, **kwargs)
        taken.append(lay is not None)
        return lay

    monkeypatch.setattr(family_layout, "known_layout", spy)

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    def profile(path: Path) -> tuple[bool, str]:
        """Profile a member as a worker does; return (fast path taken, its profile's JSON)."""
        taken.clear()
        text = profile_json(profile_path(path, Limits()))
        assert len(taken) == 1  # one delimited table: one look-up of its family
        return taken[0], text

    first = write("sat-wu001.csv", member_text(1))
    assert profile(first)[0] is False  # the first member has no family yet: the full search
    yield write, profile
    family_layout.forget()


def full_profile(path: Path) -> str:
    """The profile the full search gives (no family remembered)."""
    saved = dict(family_layout._families)
    family_layout.forget()
    try:
        return profile_json(profile_path(path, Limits()))
    finally:
        family_layout._families.update(saved)


def test_a_plain_member_takes_the_fast_path_and_gets_the_full_profile(family):
    write, profile = family
    member = write("sat-wu002.csv", member_text(2, rows=300))
    fast, text = profile(member)
    assert fast
    assert text == full_profile(member)


def test_a_changed_header_is_searched_in_full(family):
    write, profile = family
    member = write("sat-wu003.csv", member_text(3).replace(HEADER, HEADER + ",Extra").replace(",A\n", ",A,1\n")
                   .replace(",B\n", ",B,2\n").replace(",C\n", ",C,3\n"))
    fast, text = profile(member)
    assert not fast
    assert text == full_profile(member)


def test_another_delimiter_is_searched_in_full(family):
    write, profile = family
    tabbed = write("sat-wu004.csv", member_text(4).replace(",", "\t"))  # its header is another line: no family
    quoted = write("sat-wu005.csv", member_text(5, row=lambda i, c: c if i != 7 else [c[0], c[1], f'"{c[2]}"',
                                                                                     *c[3:]]))
    semi = write("sat-wu006.csv", member_text(6, row=lambda i, c: c if i != 3 else [*c[:4], "A;B"]))
    for member in (tabbed, quoted, semi):
        fast, text = profile(member)
        assert not fast, member.name
        assert text == full_profile(member)
    assert "tab-delimited" in profile(tabbed)[1]


def test_a_column_turning_text(family):
    write, profile = family
    # the column the header vote rests on (YEAR, the first all-number column) turns text: the full search
    year = write("sat-wu007.csv", member_text(7, row=lambda i, c: [c[0], "n/a" if i < 12 else c[1], *c[2:]]))
    fast, text = profile(year)
    assert not fast
    assert text == full_profile(year)
    # another column turns text: the layout holds (types come from the parse, as for any file)
    speed = write("sat-wu008.csv", member_text(8, row=lambda i, c: [*c[:2], "fast" if i % 3 == 0 else c[2], *c[3:]]))
    fast, text = profile(speed)
    assert fast
    assert text == full_profile(speed)
    assert '"text' in text  # the speed column is described as text, as the full profile says


def test_a_zero_led_code_column_appearing(family):
    write, profile = family
    member = write("sat-wu009.csv", member_text(9, row=lambda i, c: [*c[:3], f"0{c[3]}", c[4]]))
    fast, text = profile(member)
    assert fast  # the layout is the family's; the codes are found by the same read as any file's
    assert text == full_profile(member)
    assert "dtype={'Station': str}" in text


def test_blank_lines_spaces_and_markers_in_a_member(family):
    write, profile = family
    blank = write("sat-wu010.csv", member_text(10).replace("\n", "\n\n", 5))
    spaced = write("sat-wu011.csv", member_text(11, row=lambda i, c: [c[0], *(" " + x for x in c[1:])]))
    # 'M' markers past the 100 cells the missing-value check looks at first
    marked = write("sat-wu012.csv", member_text(12, rows=400, row=lambda i, c: [*c[:2], "M" if i % 150 == 149
                                                                             else c[2], *c[3:]]))
    footer = write("sat-wu013.csv", member_text(13) + "Source: the operators archive as reprocessed in 2019\n")
    for member, expect_fast in ((blank, False), (spaced, False), (marked, True), (footer, True)):
        fast, text = profile(member)
        assert fast is expect_fast, member.name
        assert text == full_profile(member)
    assert "na_values=['M']" in profile(marked)[1]
    assert "nrows=150" in profile(footer)[1]


def test_known_layout_is_find_layouts_result_on_random_members(tmp_path):
    """Random edits of a member's lines: whenever the check lets a member through, the full search agrees."""
    family_layout.forget()
    rng = random.Random(31)
    first = member_text(0).splitlines()
    family_layout.remember(tmp_path / "m-1.csv", ".csv", first, delimited.find_layout(first, ".csv", True))
    edits = ["\t", ";", "|", '"', "#", " ", "", ",", "abc", "0123", "Total", HEADER, "  ", "1e5", "-"]
    through = 0
    for k in range(300):
        lines = member_text(k, rows=rng.choice([1, 2, 5, 19, 20, 25, 130])).splitlines()
        for _ in range(rng.randint(0, 3)):
            i = rng.randrange(1, len(lines))
            cells = lines[i].split(",")
            j = rng.randrange(len(cells))
            cells[j] = rng.choice(edits) + (cells[j] if rng.random() < 0.5 else "")
            lines[i] = ",".join(cells) if rng.random() < 0.8 else rng.choice(edits)
        whole = rng.random() < 0.8
        lay = family_layout.known_layout(tmp_path / f"m-{k + 2}.csv", ".csv", lines, whole)
        if lay is not None:
            through += 1
            assert lay == delimited.find_layout(lines, ".csv", whole)
    assert through > 50  # the check lets plain members through (not a test of an empty set)
    family_layout.forget()


def test_distinct_helpers_match_the_full_computations():
    values = [1.5, 1.5, 2.0, 2, 3.25, 2.0, 7.0, 8.0] + [float(i) for i in range(300)]
    for k in (0, 1, 5, 50, 400):
        assert _first_distinct_hashable(values, k) == _first_distinct(values, k)
    s = pd.Series([f" v{i % 37} " for i in range(500)] + [None] * 3, dtype="str")
    frame = pd.DataFrame({"a": s, "b": range(503)})
    distinct = delimited._DistinctText(frame)
    assert distinct.head("a") == delimited._distinct_text(s)[:20]
    assert distinct.head("b") == [] and distinct.values("b") == []
    few = pd.DataFrame({"a": pd.Series(["x", "y"] * 200, dtype="str")})
    assert delimited._DistinctText(few).head("a") == ["x", "y"]
