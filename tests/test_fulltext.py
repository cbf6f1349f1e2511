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
