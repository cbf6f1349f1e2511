"""Tiny lakes of datasets and tables for the tests: Hive partitions, part files, a Delta table, an Iceberg table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_hive(root: Path, years: tuple[int, ...] = (2023, 2024), months: int = 2, rows: int = 3) -> int:
    """Write sales/year=Y/month=MM/part-0.parquet files; return the rows written."""
    n = 0
    for year in years:
        for month in range(1, months + 1):
            folder = root / f"year={year}" / f"month={month:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            frame = pd.DataFrame({"order_id": range(n, n + rows), "amount": [1.5 * (n + i) for i in range(rows)]})
            frame.to_parquet(folder / "part-0.parquet", index=False)
            n += rows
    return n


def write_parts(root: Path, parts: int = 3, rows: int = 4) -> int:
    """Write events/part-0000N.parquet files of one schema; return the rows written."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(parts):
        pd.DataFrame({"event": [f"e{i}-{j}" for j in range(rows)], "value": range(rows)}).to_parquet(
            root / f"part-{i:05d}.parquet", index=False)
    return parts * rows


def write_delta(root: Path) -> int:
    """Write a Delta table of 3 commits (two appends, one delete); return the rows of its current version."""
    from deltalake import DeltaTable, write_deltalake

    frame = pd.DataFrame({"trip_id": range(10), "city": ["a", "b"] * 5, "fare": [float(i) for i in range(10)]})
    write_deltalake(str(root), frame, partition_by=["city"])
    write_deltalake(str(root), frame.assign(trip_id=frame.trip_id + 10), mode="append", partition_by=["city"])
    DeltaTable(str(root)).delete("trip_id < 4")
    return 16


def write_iceberg(warehouse: Path) -> tuple[Path, int]:
    """Write an Iceberg table (two appends, one delete) under warehouse; return its folder and its rows."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("t", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("ns")
    data = pa.table({"id": pa.array(range(10), pa.int64()), "kind": ["x", "y"] * 5})
    table = catalog.create_table("ns.events", schema=data.schema)
    table.append(data)
    table.append(data)
    table.delete("id < 2")
    return warehouse / "ns" / "events", 16


class MarkerFileIO:
    """A FileIO class a hostile Iceberg table names in its metadata (`py-io-impl`): made with the table's properties,
    it appends its process id to the file the property `marker-file` names, then reads as pyiceberg's own does.
    Any line in that file means the metadata chose code that ran in dslake's process."""

    def __new__(cls, properties: dict[str, str]):  # noqa: D102 - pyiceberg calls class_(properties)
        import os

        from pyiceberg.io.pyarrow import PyArrowFileIO

        with open(properties["marker-file"], "a") as marker:  # noqa: PTH123
            marker.write(f"{os.getpid()}\n")
        return PyArrowFileIO(properties)


def name_file_io(table: Path, marker: Path) -> None:
    """Give every metadata file of an Iceberg table the properties that make pyiceberg load MarkerFileIO."""
    import json

    for metadata in (table / "metadata").glob("*.metadata.json"):
        data = json.loads(metadata.read_text())
        data["properties"] = {**data.get("properties", {}), "py-io-impl": "table_lakes.MarkerFileIO",
                              "marker-file": str(marker)}
        metadata.write_text(json.dumps(data))
