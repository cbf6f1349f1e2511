"""The data context: how entries are shown to the roles, and which of them a script actually read."""

from __future__ import annotations

from dsstar_lake.agent.context import data_block, filenames
from dsstar_lake.agent.state import ContextEntry

SALES = ContextEntry("f1", "file", "shop/sales.csv", "A table of sales.")
DAILY = ContextEntry("fam", "family", "sensors/daily/readings_*.csv", "Daily readings.", member_count=3)


def test_paths_are_shown_under_data():
    assert filenames([SALES, DAILY]) == '"data/shop/sales.csv", "data/sensors/daily/readings_*.csv"'
    block = data_block([SALES, DAILY], max_chars=10)
    assert block.startswith('<data path="data/shop/sales.csv" tag=') and "\nA table of" in block
    assert '<data path="data/sensors/daily/readings_*.csv" family="3 files" tag=' in block
    assert "[... description cut at 10 characters ...]" in block
