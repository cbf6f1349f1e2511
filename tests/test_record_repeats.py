"""Records that repeat inside one file, in formats other than a CSV family: a TLE's element sets issued again for
one epoch, JSON records and aligned text rows equal to an earlier one."""

from __future__ import annotations

import json

from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path


def _element_set(epoch: str, rev: int) -> str:
    return (f"1 48445U 21040T   {epoch}  .00000820  00000-0  73930-4 0  9994\n"
            f"2 48445  53.0537 165.0873 0001342  91.1262 268.9881 15.0639481{rev:06d}\n")


def test_element_sets_that_repeat_an_epoch_are_counted_with_or_without_the_rest(tmp_path):
    sets = [_element_set(f"24{day:03d}.44338999", day) for day in range(1, 11)]
    sets.append(_element_set("24003.44338999", 999))  # the same epoch again, another revolution number
    sets.append(sets[4])  # an element set repeated whole
    path = tmp_path / "48445.tle"
    path.write_text("".join(sets))
    prof = profile_path(path, Limits())
    assert prof.format == "tle" and prof.structure["element_sets"] == 12
    (note,) = [n for n in prof.notes if "repeat the epoch" in n]
    assert note.startswith("2 of the 12 element sets repeat the epoch of an earlier one (1 of them repeat the whole "
                           "record; 10 distinct epochs)")
    assert "keep one per (satellite, epoch)" in note


def test_a_tle_file_without_repeats_says_nothing_of_them(tmp_path):
    path = tmp_path / "ok.tle"
    path.write_text("".join(_element_set(f"24{day:03d}.5", day) for day in range(1, 6)))
    assert not [n for n in profile_path(path, Limits()).notes if "repeat" in n]


def test_json_records_and_aligned_rows_equal_to_an_earlier_one_are_counted(tmp_path):
    records = [{"id": i, "value": i * 1.5} for i in range(8)] + [{"id": 3, "value": 4.5}, {"id": 5, "value": 7.5}]
    (tmp_path / "records.json").write_text(json.dumps(records))
    prof = profile_path(tmp_path / "records.json", Limits())
    assert "2 of the 10 rows repeat an earlier row whole" in " ".join(prof.notes)
    lines = [f"{2000 + i:4d} {i * 3:6d} {i * 0.5:8.2f}" for i in range(12)] + ["2004     12     2.00"]
    (tmp_path / "table.dat").write_text("\n".join(lines) + "\n")
    prof = profile_path(tmp_path / "table.dat", Limits())
    assert prof.format == "fixed-width" and "1 of the 13 rows repeat an earlier row whole" in " ".join(prof.notes)
    (tmp_path / "clean.json").write_text(json.dumps(records[:8]))
    assert not [n for n in profile_path(tmp_path / "clean.json", Limits()).notes if "repeat" in n]
