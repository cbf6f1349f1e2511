"""Random bytes behind a text extension are described as binary content with their size, never with a "text
sample" of the chance characters they hold; text in a one-byte code page stays text."""

from __future__ import annotations

import random
from pathlib import Path

from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.profilers.textio import looks_binary

from dsstar_lake.lake import Lake

CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))


def junk(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)  # the same bytes on every run


def test_a_junk_csv_is_binary_content_with_its_size_and_no_sample(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    (root / "export.csv").write_bytes(junk(2048))
    (root / "tiny.csv").write_bytes(junk(24))
    (root / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    lake = Lake.open(root)
    summary = lake.index()
    assert summary.failed == 0  # binary content is described, not a failure (data_samples/README.md)
    for name, size in (("export.csv", "2,048"), ("tiny.csv", "24")):
        shown = lake.show(name)
        description, card = shown["entry"]["description"], shown["entry"]["card"]
        assert shown["file"]["status"] == "ok" and shown["file"]["format"] == "binary"
        assert f"binary content, not text ({size} bytes)" in description, description
        assert "Text sample" not in description and "columns" not in description
        assert card.splitlines() == [name.replace(".csv", "").replace("_", " ") + " csv", f"{name} (binary)"]
    lake.close()


def test_a_small_random_file_with_few_control_bytes_is_binary():
    """24 random bytes with no NUL and only two control bytes: too few for the control-byte share, but they sit
    among bytes that are mostly not UTF-8."""
    data = junk(24)
    assert b"\x00" not in data and 1 <= sum(data.count(c) for c in CONTROL) <= 2
    assert looks_binary(data)


def test_text_in_a_one_byte_code_page_stays_text(tmp_path):
    cyrillic = "город,население\nМосква,13010112\nКазань,1308660\n".encode("cp1251")  # mostly not UTF-8
    french = ("ville,note\nBesançon,élevée\x0b\n" + "Orléans,très\n" * 5).encode("latin-1")  # one stray control
    assert not looks_binary(cyrillic) and not looks_binary(french)
    path = tmp_path / "villes.csv"
    path.write_bytes(cyrillic)
    assert profile_path(path, Limits()).format == "csv"


def test_a_new_profiler_version_renders_entries_again(monkeypatch):
    """Profiles made again by a new profiler keep their file's content hash, which alone keeps an entry's row: the
    render version includes PROFILER_VERSION's file, so such entries are written again from the new profiles."""
    from dslake_index import render_stamp

    before = render_stamp.render_version()
    read = Path.read_bytes

    def bumped(path: Path) -> bytes:
        data = read(path)
        if path.name == "base.py" and path.parent.name == "profilers":
            return data.replace(b"PROFILER_VERSION = ", b"PROFILER_VERSION = 1 + ")
        return data

    monkeypatch.setattr(Path, "read_bytes", bumped)
    assert render_stamp.render_version() != before
