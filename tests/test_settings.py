from pathlib import Path

import pytest

from dsstar_lake.base.errors import ConfigError
from dsstar_lake.base.settings import Settings


def test_resolution_order_defaults_file_env_flag(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[retrieve]\nk = 7\ncandidates = 30\n[llm.models]\ncoder = 'flash'\n")
    settings = Settings.load(config_files=[config], environ={"DSLAKE_RETRIEVE_CANDIDATES": "40"})
    assert settings["retrieve.k"] == 7 and settings.sources["retrieve.k"] == str(config)
    assert settings["retrieve.candidates"] == 40 and settings.sources["retrieve.candidates"].startswith("env")
    cheap = {"summarizer": "gemini-2.5-flash-lite", "selector": "gemini-2.5-flash"}  # the packaged per-role default stays beside the file's
    assert settings["llm.models"] == {**cheap, "coder": "flash"}
    flagged = settings.with_overrides({"retrieve.k": "12", "llm.models.writer": "pro"})
    assert flagged["retrieve.k"] == 12 and flagged.sources["retrieve.k"] == "flag"
    assert flagged["llm.models"] == {**cheap, "coder": "flash", "writer": "pro"}
    assert settings.section("retrieve")["k"] == 7


def test_bad_values_and_unknown_keys_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        Settings.load(config_files=[], environ={"DSLAKE_RETRIEVE_K": "ten"})
    config = tmp_path / "config.toml"
    config.write_text("[retrieve]\nkk = 1\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        Settings.load(config_files=[config], environ={})
    broken = tmp_path / "broken.toml"
    broken.write_text("[retrieve\n")
    with pytest.raises(ConfigError, match="cannot read config"):
        Settings.load(config_files=[broken], environ={})


def test_a_catalog_config_cannot_set_what_decides_safety(tmp_path):
    catalog_config = tmp_path / "catalog" / "config.toml"
    catalog_config.parent.mkdir()
    user = tmp_path / "user.toml"
    user.write_text('[sandbox]\nbackend = "subprocess"\n')
    for text in ('[sandbox]\nbackend = "subprocess"\n', '[llm]\nbase_url = "http://elsewhere/v1"\n',
                 '[sandbox]\nmemory_mb = 999999\n'):
        catalog_config.write_text(text)
        with pytest.raises(ConfigError, match="only your own config"):
            Settings.load(config_files=[catalog_config, user], environ={}, catalog_files=(catalog_config,))
    catalog_config.write_text('[catalog]\nchroma_url = ""\n[retrieve]\nk = 5\n')
    settings = Settings.load(config_files=[catalog_config, user], environ={}, catalog_files=(catalog_config,))
    assert settings["retrieve.k"] == 5 and settings["sandbox.backend"] == "subprocess"  # the user's own


def test_the_packaged_defaults_are_the_documented_copy():
    # The package reads dsstar_lake/default.toml (so a wheel install has it); configs/default.toml is what the
    # README points at. Edit the documented copy, then: cp configs/default.toml dsstar_lake/default.toml
    root = Path(__file__).resolve().parent.parent
    documented = (root / "configs" / "default.toml").read_bytes()
    packaged = (root / "dsstar_lake" / "default.toml").read_bytes()
    assert packaged == documented, "run: cp configs/default.toml dsstar_lake/default.toml"
    assert Settings.load(config_files=[], environ={})["catalog.dirname"] == ".dslake"
