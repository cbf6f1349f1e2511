import sqlite3

import pytest
from dslake_index import catalog, fulltext


def test_split_words_splits_paths_snake_camel_and_digits():
    words = fulltext.split_words("STORM-AI/goes-wu334_noaaWildfires.csv")
    for word in ["storm", "ai", "goes", "wu", "334", "wu334", "noaa", "wildfires", "csv"]:
        assert word in words


@pytest.mark.parametrize("text", ['foo AND', "c++ sales-2024", 'unbalanced " quote', "NEAR(", "*"])
def test_hostile_query_text_never_breaks_fts(tmp_path, text):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    with catalog.transaction(conn):
        fulltext.replace_rows(conn, [("e1", "sales 2024 by region"), ("e2", "ozone by county")])
    hits = fulltext.search(conn, text, 10)
    assert all(entry_id in {"e1", "e2"} for entry_id, _ in hits)


def test_bm25_ranks_the_matching_card_first(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    with catalog.transaction(conn):
        fulltext.replace_rows(conn, [("a", "monthly precipitation per town"), ("b", "wildfire acres burned by state"),
                                     ("c", "beach water testing enterococcus")])
    hits = fulltext.search(conn, "Which state had the most acres burned by wildfires?", 3)
    assert hits[0][0] == "b"
    assert isinstance(conn, sqlite3.Connection)


def test_replacing_and_deleting_rows_touches_exactly_the_entries_named(tmp_path):
    conn = catalog.connect(tmp_path / "m.sqlite")
    catalog.migrate(conn)
    rows = [(f"e{i}", f"card number {i} about station {i % 7}") for i in range(300)]
    with catalog.transaction(conn):
        fulltext.replace_rows(conn, rows)
        fulltext.replace_rows(conn, [("e5", "ozone by county"), ("e7", "wildfire acres"), ("e'quote", "odd id")])
        fulltext.delete_rows(conn, [f"e{i}" for i in range(100, 200)] + ["not-there"])
    kept = dict(conn.execute("SELECT entry_id, body FROM entries_fts").fetchall())
    assert len(kept) == 201 and conn.execute("SELECT count(*) FROM entries_fts").fetchone()[0] == 201
    assert set(kept) == {f"e{i}" for i in range(300) if not 100 <= i < 200} | {"e'quote"}
    assert "ozone" in kept["e5"] and "wildfire" in kept["e7"] and "station 3" in kept["e10"]
    assert fulltext.search(conn, "ozone", 5)[0][0] == "e5"


def test_the_labels_of_a_tables_card_are_not_indexed_but_its_facts_are():
    card = ("sales parquet\nsales (hive)\ntable: 2000 rows x 5 columns\npartitions: region east, west\n"
            "versions: 3, the last 2024-05-01\nload: too big for memory, duckdb")
    words = fulltext.index_text(card).split()
    assert not {"partitions", "versions", "load", "table"} & set(words)
    for fact in ["region", "east", "west", "3", "2024", "memory", "duckdb", "2000", "rows"]:
        assert fact in words, fact
