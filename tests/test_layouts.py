"""A format document that lays out the words of header-less tables names their columns."""

from __future__ import annotations

from dslake_index.families import Member
from dslake_index.layouts import linked_layout, parse_layouts, with_layout

DOC = """                         OMNI2_YYYY.DAT FORMAT DESCRIPTION

WORD  FORMAT  Fill Value         MEANING                  UNITS/COMMENTS

 1      I4              Year                              1963, 1964, etc.
 2      I4              Decimal Day                       January 1 = Day 1
 3      I3              Hour                              0, 1,...,23
 4     F6.1  999.9     Field Magnitude Average |B|       1/N SUM |B|, nT
 5     F6 1  999.9     Bz GSM                            nT
                                                      see the Geopack notes
 6     F6.0  9999.     Plasma (Flow) speed               km/s

                         OMNI_MYYYY.DAT FORMAT DESCRIPTION
WORD  FORMAT FILL Value   MEANING                     UNITS/COMMENTS
1       I4                Year                              1963, 1964, 1965, etc.
2       I4                Decimal Day                       January 1 = Day 1
3       I3                Hour                              0,1,...,23
4       F6.1   999.9      Field magnitude                   nT
5       F6.1   999.9      Bz                                nT
"""


def test_a_format_document_names_the_columns_of_the_table_it_describes():
    layouts = parse_layouts(DOC.splitlines())
    assert [(lay["title"], len(lay["words"])) for lay in layouts] == [
        ("OMNI2_YYYY.DAT FORMAT DESCRIPTION", 6), ("OMNI_MYYYY.DAT FORMAT DESCRIPTION", 5)]
    # the comment line under a word goes on with that word's comment (test_column_meaning: Kp's coding)
    assert layouts[0]["words"][4] == [5, "F6.1", "999.9", "Bz GSM", "nT see the Geopack notes"]
    hint = "pd.read_csv({path}, sep='\\\\s+', header=None)"
    data = Member("omni/omni2_2024.dat", "omni2_2024.dat", "fixed-width\x1f:0|1|2|3|4|5", 100, [(8784, True, hint)])
    docs = [("omni/omni2.text", layouts)]
    doc, layout = linked_layout([data], docs)
    assert doc == "omni/omni2.text" and layout["title"].startswith("OMNI2_YYYY")
    description, card = with_layout("File: data/omni/omni2_2024.dat\nTable: 8,784 rows x 6 columns", "omni2 2024",
                                    doc, layout)
    assert "  - '5': Plasma (Flow) speed [km/s], fill 9999." in description
    assert description.index("'0': Year") < description.index("Table: 8,784 rows")
    assert card.endswith("columns named by omni2.text")
    # A table with a header, or of another width, or in another folder, is not linked.
    named = Member("omni/x.dat", "x.dat", "fixed-width\x1f:a|b|c|d|e|f", 1, [(1, True, "pd.read_csv({path})")])
    other = Member("other/omni2_2024.dat", "omni2_2024.dat", data.signature, 1, data.tables)
    assert linked_layout([named], docs) is None and linked_layout([other], docs) is None
