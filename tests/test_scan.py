import os
from pathlib import Path

from dslake_index.scan import hash_file, scan_lake


def _write(path: Path, text: str = "a,b\n1,2\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_scan_skips_hidden_catalog_ignored_and_special_files(tmp_path):
    lake = tmp_path / "lake"
    _write(lake / "a.csv")
    _write(lake / "sub" / "b.csv")
    _write(lake / ".hidden.csv")
    _write(lake / ".dslake" / "manifest.sqlite")
    _write(lake / "tmp" / "scratch.csv")
    _write(lake / "notes.bak")
    (lake / ".dslakeignore").write_text("tmp/\n*.bak\n")
    os.mkfifo(lake / "pipe.csv")
    result = scan_lake(lake, lake / ".dslake")
    assert [f.path for f in result.files] == ["a.csv", "sub/b.csv"]
    assert ("pipe.csv", "not a regular file (fifo, socket or device)") in result.skipped


def test_symlinks_leaving_the_lake_are_not_followed_unless_asked(tmp_path):
    lake = tmp_path / "lake"
    outside = _write(tmp_path / "outside" / "secret.csv")
    _write(lake / "a.csv")
    (lake / "link.csv").symlink_to(outside)
    (lake / "etc").symlink_to("/etc")
    (lake / "loop").symlink_to(lake)
    result = scan_lake(lake)
    assert [f.path for f in result.files] == ["a.csv"]
    reasons = dict(result.skipped)
    assert "leaves the lake" in reasons["link.csv"]
    assert "leaves the lake" in reasons["etc"]
    assert "loop" in reasons["loop"]
    followed = scan_lake(lake, follow_symlinks=True)
    assert "link.csv" in [f.path for f in followed.files]


def test_awkward_names_and_a_symlink_loop_do_not_break_the_scan(tmp_path):
    lake = tmp_path / "lake"
    names = ["with space.csv", "ünïcødé.csv", "new\nline.csv", "x" * 200 + ".csv"]
    for name in names:
        _write(lake / name)
    (lake / "a").mkdir()
    (lake / "a" / "b").symlink_to("../a")
    result = scan_lake(lake, follow_symlinks=True)
    assert sorted(f.path for f in result.files) == sorted(names)
    assert any("loop" in reason for _, reason in result.skipped)


def test_hash_depends_on_content_only(tmp_path):
    a = _write(tmp_path / "a.csv", "same")
    b = _write(tmp_path / "b.txt", "same")
    c = _write(tmp_path / "c.csv", "other")
    assert hash_file(a) == hash_file(b) != hash_file(c)
