"""Fuzz: random bytes and mutated sample files behind data extensions never raise anything but ProfileError."""

from __future__ import annotations

from pathlib import Path

from dslake_index.profilers.base import Limits, Profile, ProfileError
from dslake_index.profilers.registry import profile_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
EXTS = [".csv", ".tsv", ".xlsx", ".json", ".jsonl", ".parquet", ".html", ".npz", ".md", ".dat", ".txt", ".gz"]
SEEDS = [SAMPLES / p for p in ["sales.csv", "stations.xlsx", "layout.xlsx", "city/parks.json", "city/events.jsonl",
                               "city/trips.parquet", "docs/library_stats.html", "grids/temperature_grid.npz",
                               "instruments/magnetometer_hbk.dat", "weather/station_log.csv",
                               "sensors/archive/readings_2023.csv.gz"]]
LIMITS = Limits(head_bytes=16 * 1024, max_bytes_full_read=64 * 1024)
ERRORS: list[str] = []  # notes of profilers that tripped and were caught by the registry's generic fallback
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def _check(path: Path, outcomes: dict[str, int]) -> None:
    try:
        prof = profile_path(path, LIMITS)
    except ProfileError as exc:
        assert str(exc)
        outcomes["ProfileError"] = outcomes.get("ProfileError", 0) + 1
        return
    assert isinstance(prof, Profile)
    prof.to_dict()  # JSON-ready data only
    key = prof.format
    if any("profiler could not read it" in n for n in prof.notes):
        key += " (after a profiler error)"
        ERRORS.append(next(n for n in prof.notes if "profiler could not read it" in n))
    outcomes[key] = outcomes.get(key, 0) + 1


def _report(capsys, name: str, outcomes: dict[str, int]) -> None:
    total = sum(outcomes.values())
    with capsys.disabled():  # shown with or without -s
        print(f"\nfuzz {name}: {total} inputs tried; outcomes {dict(sorted(outcomes.items()))}")
        for note in sorted(set(ERRORS))[:10]:
            print("  caught:", note)
    assert total >= 100


def test_random_bytes_with_data_extensions(tmp_path, capsys):
    outcomes: dict[str, int] = {}

    @FUZZ
    @given(data=st.binary(max_size=4096), ext=st.sampled_from(EXTS))
    def run(data: bytes, ext: str) -> None:
        path = tmp_path / f"f{ext}"
        path.write_bytes(data)
        _check(path, outcomes)

    run()
    _report(capsys, "random bytes", outcomes)


def test_mutated_sample_files(tmp_path, capsys):
    outcomes: dict[str, int] = {}

    @FUZZ
    @given(
        seed=st.sampled_from(SEEDS),
        cut=st.floats(min_value=0.0, max_value=1.0),
        flips=st.lists(st.tuples(st.floats(min_value=0.0, max_value=1.0), st.integers(0, 255)), max_size=8),
        insert=st.binary(max_size=64),
    )
    def run(seed: Path, cut: float, flips: list[tuple[float, int]], insert: bytes) -> None:
        data = bytearray(seed.read_bytes())
        for where, value in flips:
            data[min(len(data) - 1, int(where * len(data)))] = value
        at = int(cut * len(data))
        data = data[:at] + insert + data[at:] if insert else data[: max(1, at)] if cut < 0.5 else data
        path = tmp_path / seed.name
        path.write_bytes(bytes(data))
        _check(path, outcomes)

    run()
    _report(capsys, "mutated samples", outcomes)
