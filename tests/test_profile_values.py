"""Values a profile used to get wrong: units in column names, codes with leading zeros."""

from __future__ import annotations

import pandas as pd
from dslake_index.cards import describe
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.profilers.stats import unit_of


def test_units_over_units_and_number_densities_are_read_from_column_names():
    assert unit_of("SW_Plasma_Speed_km_s") == "km/s"
    assert unit_of("Flux_W_m2") == "W/m2"
    assert unit_of("N_cm3") == "per cm3" and unit_of("Proton_Density_N_cm3") == "per cm3"
    # A volume is still a volume, and single units are as before.
    assert unit_of("Volume_m3") == "m3" and unit_of("Scalar_B_nT") == "nT" and unit_of("Altitude (km)") == "km"
    assert unit_of("ELEMENT_SET_NO") is None


def test_codes_with_leading_zeros_are_loaded_as_text_and_the_load_line_says_so(tmp_path):
    path = tmp_path / "zips.csv"
    path.write_text("zip,city,population\n08123,Mount Laurel,41000\n10001,New York,21000\n02134,Boston,30000\n")
    profile = profile_path(path, Limits())
    table = profile.tables[0]
    assert table.read_hint == f"pd.read_csv({PATH_PLACEHOLDER}, dtype={{'zip': str}})"
    text = describe(profile, "zips.csv")
    assert "'08123'" in text and "dtype={'zip': str}" in text
    # The load line, run as written, keeps the zeros; the number column stays a number.
    df = eval(table.read_hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd})
    assert df["zip"].tolist() == ["08123", "10001", "02134"] and df["population"].dtype.kind == "i"


def test_numbers_without_leading_zeros_stay_numbers(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("id,value\n1,0.5\n2,10\n3,0\n")
    assert "dtype" not in profile_path(path, Limits()).tables[0].read_hint
