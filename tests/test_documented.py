"""A format document and the header-less tables it names are found together: the data follow the document."""

from __future__ import annotations

from dslake_index.documented import MAX_DOCUMENTED, with_documented

from dsstar_lake.lake import Lake

DOC = """                         OMNI2_YYYY.DAT FORMAT DESCRIPTION

WORD  FORMAT  Fill Value         MEANING                  UNITS/COMMENTS

 1      I4              Year                              1963, 1964, etc.
 2      I4              Decimal Day                       January 1 = Day 1
 3      I3              Hour                              0, 1,...,23
 4     F6.1  999.9     Field Magnitude Average |B|       1/N SUM |B|, nT
 5     F6.1  999.9     Sunspot number R                  daily
 6     F6.1  9999.     F10.7 solar radio flux            sfu

                         C O M M E N T S
""" + "".join(f"Note {i}: hourly values are averages of the spacecraft measurements; a fill value marks an hour "
              "without data, and the archive is revised when new spacecraft data arrive.\n" for i in range(1, 16))


def _write_lake(root):
    (root / "omni").mkdir(parents=True)
    (root / "omni" / "omni2.text").write_text(DOC)
    (root / "omni" / "omni2_2024.dat").write_text("".join(
        f"2024 {d:4d} {h:3d} {4 + (d * h) % 9:6.1f} {50 + d % 40:6.1f} {140 + d % 30:6.1f}\n"
        for d in range(1, 40) for h in range(24)))
    # Other sources whose words are nearer the question than the table's own card (which names no measure).
    (root / "sun").mkdir()
    for i, name in enumerate(["sunspots_monthly", "radio_flux_daily", "solar_cycle_notes", "flux_calibration"]):
        (root / "sun" / f"{name}.csv").write_text(
            "date,sunspot_number,f10_7_flux,station\n" + "".join(f"2024-01-{d:02d},{d + i},{100 + d},S{i}\n"
                                                                 for d in range(1, 20)))
    return root


def test_a_ranked_format_document_brings_its_data_into_the_next_slot(tmp_path):
    lake = Lake.open(_write_lake(tmp_path / "lake"))
    lake.index()
    hits = lake.search("sunspot number and F10.7 solar radio flux format description", k=8)
    paths = [h.path for h in hits]
    doc = paths.index("omni/omni2.text")
    assert paths[doc + 1] == "omni/omni2_2024.dat"
    # It is there by the document's link, at the document's score, with the columns' names in its description.
    assert hits[doc + 1].score == hits[doc].score
    assert "Columns named by the format document `data/omni/omni2.text`" in hits[doc + 1].description
    assert "'4': Sunspot number R" in hits[doc + 1].description
    # Its hit line says so, apart from its shape.
    assert hits[doc + 1].summary[0] == "936 rows × 6 columns, no header row · columns named by omni2.text"


def test_data_ranked_above_its_document_stay_and_a_document_brings_at_most_a_few():
    fused = [("table", 3.0), ("doc", 2.0), ("other", 1.5), ("d2", 1.0)]
    assert with_documented(fused, {"doc": ["table", "d2"]}) == [("table", 3.0), ("doc", 2.0), ("d2", 2.0),
                                                              ("other", 1.5)]
    many = [f"d{i}" for i in range(MAX_DOCUMENTED + 2)]
    ranked = with_documented([("doc", 1.0), ("x", 0.5)], {"doc": many})
    assert [e for e, _ in ranked] == ["doc", *many[:MAX_DOCUMENTED], "x"]
    assert with_documented(fused, {}) == fused
