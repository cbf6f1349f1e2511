"""The KramaBench data_sources resolver: every rule on a small synthetic domain, and the real lake if present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsstar_lake.eval.resolve import list_domain_files, read_missing, resolve_sources
from dsstar_lake.eval.tasks import load_tasks

FILES = [
    "dom/top.csv",
    "dom/notes.txt",
    "dom/metropolitan_statistics.html",
    "dom/data/sub/b.csv",
    "dom/data/sub/c.csv",
    "dom/data/other/b.csv",
    "dom/CSVs/State MSA Identity Theft data/Kansas.csv",
    "dom/CSVs/State MSA Identity Theft data/Texas.csv",
    "dom/series/omni2-wu001-20131129_to_20140128.csv",
    "dom/series/omni2-wu002-20131202_to_20140131.csv",
    "dom/series/omni2-wu003-20131205_to_20140203.csv",
    "dom/pod/SB_DNS_POD_2024_01_v02.txt",
    "dom/pod/SB_DNS_POD_2024_02_v02.txt",
]
MISSING = ["dom/gone.csv", "dom/pod/SB_DNS_POD_2024_03_v02.txt", "dom/GOES/goes-wu334.csv"]


def one(source: str):
    resolution = resolve_sources([source], FILES, root="dom", missing=MISSING)
    (match,) = resolution.sources
    return match


@pytest.mark.parametrize(
    ("source", "rule", "files", "nocase"),
    [
        ("top.csv", "exact", ["dom/top.csv"], False),
        ("./top.csv", "exact", ["dom/top.csv"], False),
        (" top.csv ", "exact", ["dom/top.csv"], False),
        ("dom/top.csv", "exact", ["dom/top.csv"], False),  # lake-relative also counts
        ("data/sub/b.csv", "exact", ["dom/data/sub/b.csv"], False),
        ("data\\sub\\b.csv", "exact", ["dom/data/sub/b.csv"], False),
        ("TOP.CSV", "exact", ["dom/top.csv"], True),
        ("c.csv", "basename", ["dom/data/sub/c.csv"], False),
        ("b.csv", "basename", ["dom/data/other/b.csv", "dom/data/sub/b.csv"], False),
        ("sub/b.csv", "basename", ["dom/data/sub/b.csv"], False),
        ("Kansas.CSV", "basename", ["dom/CSVs/State MSA Identity Theft data/Kansas.csv"], True),
        ("data/sub/", "folder", ["dom/data/sub/b.csv", "dom/data/sub/c.csv"], False),
        ("sub", "folder", ["dom/data/sub/b.csv", "dom/data/sub/c.csv"], False),
        (
            "State MSA Identity Theft Data/",
            "folder",
            [
                "dom/CSVs/State MSA Identity Theft data/Kansas.csv",
                "dom/CSVs/State MSA Identity Theft data/Texas.csv",
            ],
            True,
        ),
        (
            "State MSA Identity Theft data/*.csv",
            "glob",
            [
                "dom/CSVs/State MSA Identity Theft data/Kansas.csv",
                "dom/CSVs/State MSA Identity Theft data/Texas.csv",
            ],
            False,
        ),
        ("data/*/b.csv", "glob", ["dom/data/other/b.csv", "dom/data/sub/b.csv"], False),
        ("data/s[u]b/?.csv", "glob", ["dom/data/sub/b.csv", "dom/data/sub/c.csv"], False),
        ("**/c.csv", "glob", ["dom/data/sub/c.csv"], False),
        ("*.HTML", "glob", ["dom/metropolitan_statistics.html"], True),
        ("top.xlsx", "stem", ["dom/top.csv"], True),
        ("metropolitan_statistics", "stem", ["dom/metropolitan_statistics.html"], True),
        ("sub/C.json", "stem", ["dom/data/sub/c.csv"], True),
        (
            "omni2-wu002-20131203_to_20140201.csv",
            "date_range",
            ["dom/series/omni2-wu002-20131202_to_20140131.csv"],
            True,
        ),
        (
            "series/omni2-wu003-20991231_to_20991231.csv",
            "date_range",
            ["dom/series/omni2-wu003-20131205_to_20140203.csv"],
            True,
        ),
    ],
)
def test_rules(source: str, rule: str, files: list[str], nocase: bool) -> None:
    match = one(source)
    assert (match.rule, list(match.files), match.case_insensitive) == (rule, files, nocase)
    assert match.missing == ()
    assert match.resolved


def test_glob_with_too_few_marks_is_relaxed_and_keeps_missing_files() -> None:
    match = one("pod/SB_DNS_POD_2024_?_v02.txt")
    assert match.rule == "glob_relaxed"
    assert match.files == ("dom/pod/SB_DNS_POD_2024_01_v02.txt", "dom/pod/SB_DNS_POD_2024_02_v02.txt")
    assert match.missing == ("dom/pod/SB_DNS_POD_2024_03_v02.txt",)
    assert not match.resolved


def test_exact_glob_marks_are_not_relaxed() -> None:
    match = one("SB_DNS_POD_2024_??_v02.txt")
    assert match.rule == "glob" and len(match.files) == 2 and len(match.missing) == 1


@pytest.mark.parametrize(
    ("source", "via", "missing"),
    [
        ("gone.csv", "exact", ["dom/gone.csv"]),
        ("gone.xlsx", "stem", ["dom/gone.csv"]),
        ("GOES/", "folder", ["dom/GOES/goes-wu334.csv"]),
        ("goes-wu334.csv", "basename", ["dom/GOES/goes-wu334.csv"]),
    ],
)
def test_sources_among_missing_files(source: str, via: str, missing: list[str]) -> None:
    match = one(source)
    assert (match.rule, match.via, list(match.missing), match.files) == ("missing", via, missing, ())


@pytest.mark.parametrize(
    "source",
    [
        "ZHVI.csv",
        "WeatherEvents_Jan2016-Dec2022.csv",
        # same name shape, but no telling digit run agrees ("2" of "omni2" is in every file)
        "omni2-wu009-20200101_to_20200301.csv",
        "nosuchdir/",
        "*.parquet",
    ],
)
def test_unresolved(source: str) -> None:
    match = one(source)
    assert (match.rule, match.files, match.missing) == ("unresolved", (), ())


def test_dot_slash_means_the_whole_domain() -> None:
    match = one("./")
    assert match.rule == "folder"
    assert set(match.files) == set(FILES)
    assert set(match.missing) == set(MISSING)


def test_exact_beats_basename_in_a_subfolder() -> None:
    files = ["d/x.csv", "d/sub/x.csv"]
    assert resolve_sources(["x.csv"], files, root="d").sources[0].files == ("d/x.csv",)


def test_file_path_without_slash_is_not_a_folder() -> None:
    files = ["d/a", "d/a2/a"]  # "a" names a file at the root and a file in a subfolder
    match = resolve_sources(["a"], files, root="d").sources[0]
    assert (match.rule, match.files) == ("exact", ("d/a",))


def test_union_in_source_order_without_duplicates_and_complete() -> None:
    resolution = resolve_sources(["c.csv", "data/sub/", "top.csv"], FILES, root="dom", missing=MISSING)
    assert resolution.files == ("dom/data/sub/c.csv", "dom/data/sub/b.csv", "dom/top.csv")
    assert resolution.complete
    assert resolution.absent_sources == []
    assert resolution.rules() == {"c.csv": "basename", "data/sub/": "folder", "top.csv": "exact"}


def test_incomplete_when_a_source_is_missing_or_unresolved() -> None:
    resolution = resolve_sources(["top.csv", "gone.csv", "ZHVI.csv"], FILES, root="dom", missing=MISSING)
    assert resolution.files == ("dom/top.csv",)
    assert not resolution.complete
    assert resolution.absent_sources == ["gone.csv", "ZHVI.csv"]
    assert not resolve_sources([], FILES, root="dom").complete


def test_without_root_paths_are_domain_relative() -> None:
    files = ["a.csv", "sub/b.csv"]
    resolution = resolve_sources(["a.csv", "b.csv"], files)
    assert [m.rule for m in resolution.sources] == ["exact", "basename"]
    assert resolution.files == ("a.csv", "sub/b.csv")


def test_list_domain_files_and_read_missing(tmp_path: Path) -> None:
    for rel in [
        "dom/a.csv",
        "dom/sub dir/b.csv",
        "dom/.dslake/manifest.sqlite",
        "dom/.hidden",
        "other/c.csv",
    ]:
        path = tmp_path / "lake" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert list_domain_files(tmp_path / "lake", "dom") == ["dom/a.csv", "dom/sub dir/b.csv"]
    blobs = tmp_path / "missing.txt"
    blobs.write_text("dom/gone.csv\n\n  other/x.csv \n")
    assert read_missing(blobs) == ["dom/gone.csv", "other/x.csv"]


# ---------------------------------------------------------------- the real KramaBench lake (skipped without it)

KRAMABENCH = Path("/work/shared/kramabench")
DEV_DOMAINS = ("archeology", "biomedical", "environment", "wildfire")


@pytest.mark.skipif(not (KRAMABENCH / "lake").is_dir(), reason="the KramaBench lake is not unpacked here")
def test_reproduces_gt_resolved_on_the_real_lake() -> None:
    gt = json.loads((KRAMABENCH / "tasks" / "gt_resolved.json").read_text())
    missing = read_missing(KRAMABENCH / "missing_blobs.txt")
    checked = 0
    for domain in DEV_DOMAINS:
        files = list_domain_files(KRAMABENCH / "lake", domain)
        domain_missing = [m for m in missing if m.startswith(domain + "/")]
        for task in load_tasks(KRAMABENCH / "tasks" / f"{domain}.json"):
            want = gt[task.id]
            got = resolve_sources(task.data_sources, files, root=domain, missing=domain_missing)
            assert list(got.files) == want["files"], task.id
            assert got.complete == want["complete"], task.id
            assert got.absent_sources == want["absent_sources"], task.id
            assert [(m.source, m.rule, len(m.files)) for m in got.sources] == [
                (r["source"], r["rule"], r["count"]) for r in want["resolution"]
            ], task.id
            checked += 1
    assert checked == len(gt) == 62
