"""A header or format document beside a data file with the same stem is shown inside the data entry's block."""

from __future__ import annotations

from dslake_index.sidecars import sidecar_pairs

from dsstar_lake.lake import Lake


def test_a_sidecar_shares_its_data_entrys_slot_and_block(tmp_path):
    root = tmp_path / "lake"
    (root / "obs").mkdir(parents=True)
    (root / "obs" / "run_7.csv").write_text(
        "time,velocity_km_s,density\n" + "".join(f"{t},{400 + t % 50},{t % 7 + 1}\n" for t in range(60)))
    (root / "obs" / "run_7.txt").write_text(
        "Solar wind run 7 header\nInstrument: plasma analyser on the probe\nvelocity_km_s: bulk solar wind velocity\n"
        "density: proton density per cubic centimetre\nFill value: 9999\n")
    (root / "obs" / "stations.csv").write_text("station,lat,lon\nA,1.0,2.0\nB,3.0,4.0\n")
    lake = Lake.open(root)
    lake.index()
    hits = lake.search("solar wind velocity and proton density of run 7", k=3)
    paths = [h.path for h in hits]
    assert "obs/run_7.csv" in paths and "obs/run_7.txt" not in paths  # one slot for the pair
    data = hits[paths.index("obs/run_7.csv")]
    assert data.sidecars == ["obs/run_7.txt"]
    assert "Sidecar beside each data file, same stem: data/obs/run_7.txt" in data.description
    assert "Fill value: 9999" in data.description


def test_sidecar_pairs_need_the_same_stem_a_document_format_and_one_data_file():
    rows = [{"id": "1", "path": "pod/day_1/X_1.sp3", "format": "sp3", "kind": "file"},
            {"id": "2", "path": "pod/day_1/X_1.HDR", "format": "xml", "kind": "file"},
            {"id": "3", "path": "pod/day_1/Y_1.HDR", "format": "xml", "kind": "file"},
            {"id": "4", "path": "docs/readme.txt", "format": "text", "kind": "file"},
            {"id": "5", "path": "docs/readme.md", "format": "md", "kind": "file"}]
    # The header of X_1 joins its data; a header without data, and two documents side by side, stay apart.
    assert sidecar_pairs(rows) == {"2": "1"}
