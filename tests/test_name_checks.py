"""Names that lie about content: a name's date on which none of the content falls (an SP3 orbit file, a dated CSV,
a family of them), ids shared by two families of one folder tree over other periods, and a 'grid' that holds only
its axes; each said in the entry, and nothing said where the name tells the truth."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from dsstar_lake.lake import Lake


def _sp3(start: datetime, epochs: int, step_s: int = 10) -> str:
    head = [f"#dV{start:%Y %m %d %H %M} {start.second:11.8f} {epochs:7d} U+u   IGS14 FIT TUD ",
            "## 2021 172800.00000000    10.00000000 58393 0.0000000000000",
            "+    1   L47  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0",
            "/* Created by: a test"]
    body = []
    for i in range(epochs):
        t = start + timedelta(seconds=step_s * i)
        body += [f"*  {t:%Y %m %d %H %M} {t.second:11.8f}",
                 f"PL47 {-5121.2 + i:13.7f} {1309.4:13.7f} {4294.2:13.7f} 999999.999999",
                 f"VL47 {-46920.6:13.7f} {11277.7:13.7f} {-59211.0:13.7f} 999999.999999"]
    return "\n".join(head + body + ["EOF"]) + "\n"


def _hourly(start: datetime, hours: int, column: str = "value") -> str:
    return f"Timestamp,{column}\n" + "".join(
        f"{start + timedelta(hours=h):%Y-%m-%d %H:%M:%S},{h * 0.5}\n" for h in range(hours))


def _description(lake: Lake, path: str) -> str:
    row = lake.connection().execute(
        "SELECT e.description, e.card FROM entries e JOIN files f ON f.entry_id = e.id WHERE f.path = ?",
        (path,)).fetchone()
    return row[0] + "\n" + row[1]


def test_a_names_date_that_holds_none_of_the_content_is_said_and_a_true_one_is_not(tmp_path):
    lake_dir = tmp_path / "lake"
    (lake_dir / "orbit").mkdir(parents=True)
    (lake_dir / "logs").mkdir()
    (lake_dir / "orbit" / "SAT_20181001T235942_20181002T235942.sp3").write_text(_sp3(datetime(2018, 10, 2), 300))
    (lake_dir / "logs" / "export_20200101.csv").write_text(_hourly(datetime(2020, 1, 2), 30))
    (lake_dir / "logs" / "readings_2020-03-05.csv").write_text(_hourly(datetime(2020, 3, 5), 24, "reading"))
    lake = Lake.open(lake_dir)
    lake.index()
    orbit = _description(lake, "orbit/SAT_20181001T235942_20181002T235942.sp3")
    assert ("The name states 2018-10-01 23:59:42 .. 2018-10-02 23:59:42 but the content's epochs cover 2018-10-02 "
            "00:00:00 .. 2018-10-02 00:49:50 (it starts 18 s after the name's start): none falls on 2018-10-01") in orbit
    assert "content dates 2018-10-02 to 2018-10-02, not the dates in the names (2018-10-01" in orbit  # the card
    export = _description(lake, "logs/export_20200101.csv")
    assert ("The name states 2020-01-01 but the content's 'Timestamp' times cover 2020-01-02 00:00:00 .. 2020-01-03 05:00:00 (it "
            "starts 24 h after the name's start): none falls on 2020-01-01") in export
    assert "The name states" not in _description(lake, "logs/readings_2020-03-05.csv")


def test_a_family_whose_member_names_state_other_days_says_how_many(tmp_path):
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    for day in range(1, 5):
        name = f"SAT_201810{day:02d}T235942_201810{day + 1:02d}T235942.sp3"
        (lake_dir / name).write_text(_sp3(datetime(2018, 10, day + 1), 50))
    lake = Lake.open(lake_dir)
    lake.index()
    family = _description(lake, "SAT_20181001T235942_20181002T235942.sp3")
    assert ("Dates in member names are not the content's: in 4 of 4 members no content time falls on the name's "
            "first date (e.g. SAT_20181001T235942_20181002T235942.sp3: the name states") in family
    assert "content dates 2018-10-02 to 2018-10-05, not the dates in the names" in family


def test_ids_shared_by_two_families_over_other_periods_are_said_in_both(tmp_path):
    lake_dir = tmp_path / "lake" / "v2"
    (lake_dir / "OMNI").mkdir(parents=True)
    (lake_dir / "Density").mkdir()
    (lake_dir / "Other").mkdir()
    for i in range(4):
        cut = datetime(2014, 1, 28) + timedelta(days=3 * i)
        before, after = cut - timedelta(days=10), cut
        (lake_dir / "OMNI" / f"omni-wu{i + 1:03d}-{before:%Y%m%d}_to_{cut:%Y%m%d}.csv").write_text(
            _hourly(before, 10 * 24 + 1, "Bz"))
        (lake_dir / "Density" / f"dens-wu{i + 1:03d}-{cut:%Y%m%d}_to_{cut + timedelta(days=3):%Y%m%d}.csv"
         ).write_text(_hourly(after, 3 * 24 + 1, "rho"))
        # the same ids over the same period: nothing to say
        (lake_dir / "Other" / f"goes-wu{i + 1:03d}-{before:%Y%m%d}_to_{cut:%Y%m%d}.csv").write_text(
            _hourly(before, 10 * 24 + 1, "flux"))
    lake = Lake.open(tmp_path / "lake")
    lake.index()
    omni = _description(lake, "v2/OMNI/omni-wu001-20140118_to_20140128.csv")
    assert ("Ids in member names are shared with `v2/Density/dens-wu*-*_to_*.csv` (4 shared ids) but not their "
            "periods: in 4 of 4 shared ids the two members' times do not overlap (4 share only their boundary time); "
            "there an id's member starts where this family's member of that id ends; each member here "
            "spans about 10 days, there about 3 days (e.g. wu001: here 2014-01-18 .. 2014-01-28, there 2014-01-28 "
            "..") in omni
    assert "ids shared with Density, other periods" in omni  # the card
    assert "Other/goes" not in omni
    density = _description(lake, "v2/Density/dens-wu002-20140131_to_20140203.csv")
    assert ("Ids in member names are shared with `v2/OMNI/omni-wu*-*_to_*.csv` (4 shared ids) but not their "
            "periods") in density and "there an id's member ends where this family's member of that id starts" in density


def test_a_grid_whose_arrays_are_all_axes_is_said_and_a_grid_with_values_is_not(tmp_path):
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    lat, lon = np.linspace(-87.5, 87.5, 36), np.arange(0, 360, 5)
    np.savez(lake_dir / "model_grid_sept2019.npz", lat_grid=lat, lon_grid=lon, alt_grid=np.linspace(100, 500, 15))
    np.savez(lake_dir / "density_grid.npz", lat=lat, lon=lon, density=np.ones((36, 72)))
    np.savez(lake_dir / "axes.npz", lat=lat, lon=lon)
    lake = Lake.open(lake_dir)
    lake.index()
    assert ("The name says 'grid' but every one of the 3 arrays is 1-D (lat_grid (36,), lon_grid (72,), alt_grid "
            "(15,)): axes of a 36 x 72 x 15 grid (38,880 points) at most, with no values on it"
            ) in _description(lake, "model_grid_sept2019.npz")
    assert "The name says" not in _description(lake, "density_grid.npz")
    assert "The name says" not in _description(lake, "axes.npz")
