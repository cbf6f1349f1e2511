"""Resolved settings have their declared types, whichever layer set them, so call sites need no casts."""

from __future__ import annotations

import dataclasses
import re

import pytest
from conftest import REPO

from dsstar_lake.base.errors import ConfigError
from dsstar_lake.base.settings import Settings, read_defaults

# A cast of a setting where it is read: int(settings["a.b"]), float(section.get("x", 1)), ...
CAST = re.compile(r"\b(?:int|float|str|bool)\(\s*[\w.]*(?:settings|section)(?:\(\))?(?:\[|\.get\()")
# A setting read by dotted key where it is used: settings["a.b"], lake.settings.get("a.b"), settings.section("a").
# Call sites read the typed sections (settings.retrieve.k); dotted keys stay for what names settings as data:
# overrides and run records, `dslake config`, the resume keys.
DOTTED_READ = re.compile(r"""settings(?:\(\))?(?:\[|\.get\()\s*f?["'][a-z_]+\.|\.section\(\s*["']""")
# A fallback number for a setting, which would drift from default.toml: section.get("batch_size", 64).
FALLBACK = re.compile(r"""(?:settings|section)\.get\(\s*["'][\w.]+["']\s*,\s*-?[\d.]+""")


def test_a_config_file_value_of_another_type_is_one_clear_error(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[retrieve]\ncandidates = "many"\n')
    with pytest.raises(ConfigError, match=r"retrieve.candidates .* expects int, got 'many'"):
        Settings.load(config_files=[config], environ={})
    config.write_text("[retrieve]\nfolder_weight = 1\n[index]\nfollow_symlinks = true\n")
    settings = Settings.load(config_files=[config], environ={"DSLAKE_RETRIEVE_K": "7"})
    assert settings["retrieve.folder_weight"] == 1.0 and isinstance(settings["retrieve.folder_weight"], float)
    assert settings["retrieve.k"] == 7 and settings["index.follow_symlinks"] is True
    assert dict((k, s) for k, _, s in settings.items())["retrieve.k"] == "env DSLAKE_RETRIEVE_K"


def _call_sites(pattern: re.Pattern[str]) -> dict[str, int]:
    found = {}
    for top in ("dsstar_lake", "index", "benchmarks"):
        for path in sorted((REPO / top).rglob("*.py")):
            if path.name == "settings.py" and path.parent.name == "base":
                continue  # where the sections are built
            hits = len(pattern.findall(path.read_text(encoding="utf-8")))
            if hits:
                found[path.relative_to(REPO).as_posix()] = hits
    return found


def test_no_setting_is_cast_where_it_is_read():
    found = _call_sites(CAST)
    assert not found, f"settings cast at a call site (the typed sections have their declared types): {found}"


def test_call_sites_read_typed_sections_without_fallback_numbers():
    assert not _call_sites(DOTTED_READ), "read the typed section (settings.retrieve.k), not a dotted key"
    assert not _call_sites(FALLBACK), "no fallback numbers in code: default.toml declares every setting"


def test_every_section_is_a_frozen_dataclass_with_exactly_its_keys():
    settings = Settings.load(config_files=[], environ={}, overrides={"retrieve.k": 7, "llm.models.coder": "m"})
    for name, declared in read_defaults().items():
        section = getattr(settings, name)
        assert dataclasses.is_dataclass(section) and section.__dataclass_params__.frozen, name
        names = {f.name for f in dataclasses.fields(section)}
        assert names == set(declared), f"[{name}] and {type(section).__name__} differ: {names ^ set(declared)}"
        assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(section)), "defaults live in default.toml"
        assert getattr(settings, name) is section, "built once"
    assert settings.retrieve.k == 7 and settings.origin("retrieve.k") == "flag" and settings.origin("agent.k_extra") == "default"
    assert settings.llm.models["coder"] == "m" and settings.llm.pricing["gpt-4o"] == [2.5, 10.0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.retrieve.k = 3  # type: ignore[misc]
