"""Every file of data_samples profiles; every read hint loads what the profile says; the generator is exact."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dslake_index.cards import card, describe
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits, ProfileError
from dslake_index.profilers.registry import profile_path

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
# Hidden names are not lake files: .dslakeignore, and the .dslake catalog the README's demo writes.
FILES = sorted(p for p in SAMPLES.rglob("*")
               if p.is_file() and not any(part.startswith(".") for part in p.relative_to(SAMPLES).parts))
BROKEN = {"broken/corrupt.xlsx"}


def run_hint(hint: str, path: Path):
    """Evaluate a read hint the way a coder's script would, with the real path in place."""
    return eval(hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd, "np": np, "json": json})


def rel(p: Path) -> str:
    return p.relative_to(SAMPLES).as_posix()


@pytest.fixture(scope="module")
def profiles():
    out = {}
    for p in FILES:
        if rel(p) not in BROKEN:
            out[rel(p)] = profile_path(p, Limits())
    return out


def test_sample_lake_is_small_and_complete():
    sizes = {rel(p): p.stat().st_size for p in FILES}
    assert sum(sizes.values()) < 2_000_000
    assert max(sizes.values()) < 500_000
    assert len([k for k in sizes if k.startswith("sensors/daily/")]) >= 5
    assert "europe/données météo 2024.csv" in sizes


def test_corrupt_xlsx_raises_profile_error():
    with pytest.raises(ProfileError) as err:
        profile_path(SAMPLES / "broken/corrupt.xlsx", Limits())
    assert "zip" in str(err.value)


def test_every_hint_loads_the_described_table(profiles):
    checked = 0
    for name, prof in profiles.items():
        for table in prof.tables:
            if not table.read_hint:
                continue
            df = run_hint(table.read_hint, SAMPLES / name)
            assert [str(c) for c in df.columns] == [c.name for c in table.columns], name
            if table.n_rows_exact:
                assert len(df) == table.n_rows, (name, table.location)
            checked += 1
    assert checked >= 20


def test_formats_by_content(profiles):
    fmt = {k: v.format for k, v in profiles.items()}
    assert fmt["sales.csv"] == "csv"
    assert fmt["lab/expression.tsv"] == "tsv"
    assert fmt["stations.xlsx"] == "xlsx"
    assert fmt["city/parks.json"] == "json"
    assert fmt["city/events.jsonl"] == "jsonl"
    assert fmt["city/trips.parquet"] == "parquet"
    assert fmt["docs/project_notes.md"] == "markdown"
    assert fmt["docs/library_stats.html"] == "html"
    assert fmt["instruments/magnetometer_hbk.dat"] == "fixed-width"
    assert fmt["instruments/iss.tle"] == "tle"
    assert fmt["grids/temperature_grid.npz"] == "npz"
    assert fmt["broken/empty.csv"] == "empty"
    assert fmt["broken/binary_disguised.csv"] == "binary"
    assert fmt["sensors/archive/readings_2023.csv.gz"] == "csv.gz"
    assert any("binary" in n for n in profiles["broken/binary_disguised.csv"].notes)


def test_awkward_csvs(profiles):
    log = profiles["weather/station_log.csv"].tables[0]
    assert (log.skip_rows, log.header_row, log.n_rows) == (4, 4, 72)
    assert [c.name for c in log.columns] == ["timestamp", "air_temp_c", "wind_speed_ms", "wind_dir"]
    assert log.columns[1].nulls == 2
    nohead = profiles["lab/plate_reads_noheader.csv"].tables[0]
    assert nohead.header_row is None and "header=None" in nohead.read_hint and nohead.n_rows == 40
    semi = profiles["europe/gemeinden_semicolon.csv"].tables[0]
    assert "sep=';'" in semi.read_hint and "decimal=','" in semi.read_hint
    assert semi.columns[2].dtype == "float" and semi.columns[2].name == "Fläche_km2"
    latin = profiles["europe/villes_latin1.csv"]
    assert latin.encoding == "latin-1" and latin.tables[0].columns[0].examples[0] == "Besançon"
    gz = profiles["sensors/archive/readings_2023.csv.gz"].tables[0]
    assert gz.n_rows == 24 and gz.columns[0].name == "sensor_id"


def test_workbooks(profiles):
    st = profiles["stations.xlsx"]
    sheets = {t.name: [c.name for c in t.columns] for t in st.tables}
    assert sheets["stations"] == ["station_id", "name", "city", "elevation_m", "opened"]
    assert "elevation_m" not in sheets["readings"]
    assert st.structure["sheet_names"] == ["stations", "readings", "about"]
    lay = profiles["layout.xlsx"]
    assert [t.location for t in lay.tables] == ["C4:G8", "A1:C5", "F4:H7", "A10:B13"]
    assert lay.tables[0].header_row == 3
    assert any("Suppliers" in n for n in lay.notes)


def test_other_formats(profiles):
    parks = profiles["city/parks.json"]
    assert parks.tables[0].name == "parks" and parks.tables[0].n_rows == 4
    assert "location.lat" in [c.name for c in parks.tables[0].columns]
    trips = profiles["city/trips.parquet"].tables[0]
    assert trips.n_rows == 400 and trips.columns[2].min >= 0.5
    grid = profiles["grids/temperature_grid.npz"].structure["arrays"]
    assert [(a["name"], a["shape"]) for a in grid] == [("lat", [9]), ("lon", [8]), ("temp", [9, 8])]
    html = profiles["docs/library_stats.html"]
    assert len(html.tables) == len(pd.read_html(SAMPLES / "docs/library_stats.html")) == 2
    md = profiles["docs/project_notes.md"]
    assert md.title == "Field campaign notes" and md.tables[0].n_rows == 3
    dat = profiles["instruments/magnetometer_hbk.dat"]
    assert dat.tables[0].skip_rows == 4 and dat.tables[0].columns[3].name == "bx_nT"
    assert any("9999.9" in n for n in dat.notes)


def test_descriptions_and_cards_are_deterministic_and_bounded(profiles):
    for name, prof in profiles.items():
        again = profile_path(SAMPLES / name, Limits())
        assert again.to_dict() == prof.to_dict(), name
        assert describe(again, name) == describe(prof, name)
        assert card(again, name) == card(prof, name)
        assert len(card(prof, name)) <= 1500
        assert len(describe(prof, name)) <= 8000


def test_generator_reproduces_the_committed_files(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    # No __pycache__ in data_samples/: the README's first command indexes that folder after the tests ran.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    made = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(rel(p) for p in FILES if p.name not in ("make_samples.py", "README.md"))
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name
