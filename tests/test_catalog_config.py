"""A catalog's config.toml is data (issue 40): it may tune retrieval and descriptions, never decide code, paths,
processes, servers or money, and the user's own config wins over it.

Each attack is what a lake that ships its own `.dslake/config.toml` (or a shared catalog) tried, through the real
command line; a listener on 127.0.0.1 stands for the other party's scheduler or server and records whether dslake
connected. The user's config is the isolated one conftest.py points XDG_CONFIG_HOME at.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli

SECRET = "HOST-KEY-7f3a9c2e51"


class Listener:
    """A TCP listener on 127.0.0.1 that accepts and closes every connection, counting them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def user_config() -> Path:
    """The user's own config file (conftest.py isolates it per test)."""
    return Path(os.environ["XDG_CONFIG_HOME"]) / "dslake" / "config.toml"


def lake_with_config(tmp_path: Path, text: str) -> Path:
    """A small lake that ships its own catalog folder with this config.toml."""
    lake = write_table_lake(tmp_path / "lake")
    (lake / ".dslake").mkdir()
    (lake / ".dslake" / "config.toml").write_text(text)
    return lake


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def catalog_bytes(catalog: Path) -> bytes:
    """Every byte the catalog holds (manifest, full text, vectors), to look for what must not be in it."""
    return b"".join(p.read_bytes() for p in sorted(catalog.rglob("*")) if p.is_file())


def test_a_catalog_config_cannot_point_the_index_at_a_scheduler(tmp_path, listener):
    lake = lake_with_config(tmp_path, f'[index]\ncluster = "tcp://127.0.0.1:{listener.port}"\n')
    code, output = run("index", str(lake))
    assert listener.connections == 0, "dslake connected to the scheduler a catalog's config named"
    assert code == 2 and "index.cluster" in output and "only your own config" in output, output
    assert "Traceback" not in output


def test_a_lakes_own_config_cannot_make_the_index_follow_links_out_of_the_lake(tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "keys.txt").write_text(f"api_key = {SECRET}\n")
    lake = lake_with_config(tmp_path, "[index]\nfollow_symlinks = true\n")
    (lake / "credentials.txt").symlink_to(host / "keys.txt")
    code, output = run("index", str(lake))
    assert SECRET.encode() not in catalog_bytes(lake / ".dslake"), "the host's key reached the catalog"
    assert code == 2 and "index.follow_symlinks" in output, output
    # The same lake indexes once the key is gone from its config, and the link out of the lake is left out.
    (lake / ".dslake" / "config.toml").write_text("[retrieve]\nk = 4\n")
    code, output = run("index", str(lake))
    assert code == 0, output
    assert SECRET.encode() not in catalog_bytes(lake / ".dslake")


def test_a_catalog_config_cannot_send_the_lake_to_a_chroma_server(tmp_path, listener):
    url = f"http://127.0.0.1:{listener.port}"
    lake = lake_with_config(tmp_path, f'[catalog]\nchroma_url = "{url}"\ncollection = "theirs"\n')
    code, output = run("index", str(lake))
    assert listener.connections == 0, "dslake connected to the Chroma server a catalog's config named"
    assert code == 2 and f"names the Chroma server {url}" in output and "trusted_servers" in output, output
    # Search with someone else's catalog folder (only its config) is refused the same way.
    code, output = run("search", "ozone", "--catalog", str(lake / ".dslake"))
    assert code == 2 and "not trusted" in output and listener.connections == 0, output


def test_a_catalog_config_cannot_lift_the_users_budget(tmp_path):
    user_config().parent.mkdir(parents=True, exist_ok=True)
    user_config().write_text("[llm]\nmax_llm_calls = 3\nmax_cost = 0.5\n[retrieve]\nk = 6\n")
    lake = lake_with_config(tmp_path, "[llm]\nmax_llm_calls = 1000\nmax_cost = 500.0\n")
    code, output = run("config", str(lake), "--json")
    assert code == 2 and "llm.max_llm_calls, llm.max_cost" in output and "1000" not in output, output
    assert "Traceback" not in output


def test_the_users_config_wins_over_what_a_catalog_may_set(tmp_path):
    user_config().parent.mkdir(parents=True, exist_ok=True)
    user_config().write_text("[retrieve]\nk = 6\n")
    lake = lake_with_config(tmp_path, "[retrieve]\nk = 25\ncandidates = 40\n[families]\nmin_members = 4\n")
    code, output = run("config", str(lake), "--json")
    assert code == 0, output
    rows = {row["key"]: row for row in json.loads(output)["settings"]}
    assert (rows["retrieve.k"]["value"], rows["retrieve.k"]["source"]) == (6, str(user_config()))
    catalog_config = str(lake / ".dslake" / "config.toml")
    assert (rows["retrieve.candidates"]["value"], rows["retrieve.candidates"]["source"]) == (40, catalog_config)
    assert rows["families.min_members"]["value"] == 4


def test_every_setting_a_catalog_may_set_is_declared():
    from dsstar_lake.base.catalog_config import CATALOG_MAY_SET
    from dsstar_lake.base.settings import Settings

    declared = dict(Settings.load(config_files=[], environ={}).values)
    assert CATALOG_MAY_SET <= set(declared)
    assert not {key for key in CATALOG_MAY_SET if key.split(".")[0] in ("llm", "sandbox", "serve", "profile")}


def test_a_server_the_user_indexed_with_stays_trusted_and_another_needs_their_word(tmp_path, listener, monkeypatch):
    import tomllib

    from chroma_harness import start_chroma_server

    lake = write_table_lake(tmp_path / "lake")
    with start_chroma_server(tmp_path / "chroma-data", port=0) as server:
        code, output = run("index", str(lake), "--chroma-url", server.url)
        assert code == 0, output
        assert tomllib.loads(user_config().read_text())["catalog"]["trusted_servers"] == [server.url]
        # The catalog's config remembers the server, and a search without the flag uses it.
        assert server.url in (lake / ".dslake" / "config.toml").read_text()
        code, output = run("search", "ozone unhealthy days by county", str(lake), "--json", "-k", "3")
        assert code == 0, output
        assert "ozone_by_county.csv" in [hit["path"] for hit in json.loads(output)["hits"]]
        # Another machine of the same user: only the catalog's config, the server trusted in their config.
        other = tmp_path / "copy"
        other.mkdir()
        (other / "config.toml").write_text((lake / ".dslake" / "config.toml").read_text())
        code, output = run("search", "ozone unhealthy days by county", "--catalog", str(other), "--json")
        assert code == 0, output

    # Someone else's catalog naming another server: refused until the user trusts it, then used.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    url = f"http://127.0.0.1:{listener.port}"
    (theirs / "config.toml").write_text(f'[catalog]\nchroma_url = "{url}"\n')
    code, output = run("search", "ozone", "--catalog", str(theirs))
    assert code == 2 and listener.connections == 0, output
    assert f'trusted_servers = ["{url}"]' in output
    monkeypatch.setenv("DSLAKE_CATALOG_TRUSTED_SERVERS", url)  # the user's word (their config would do as well)
    code, output = run("search", "ozone", "--catalog", str(theirs))
    assert listener.connections > 0 and code != 0 and "Traceback" not in output  # connected: no Chroma there


def test_a_catalog_config_cannot_lift_the_users_call_budget_for_a_run(tmp_path):
    from agent_helpers import SUM_WIDGETS, fenced, rules_file

    user_config().parent.mkdir(parents=True, exist_ok=True)
    user_config().write_text("[llm]\nmax_llm_calls = 3\nmax_cost = 0.5\n")
    lake = write_table_lake(tmp_path / "lake")
    assert run("index", str(lake))[0] == 0
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "planner", "response": "Sum the widget units."},
                       {"role": "coder", "response": fenced(SUM_WIDGETS)}, {"role": "*", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced(SUM_WIDGETS)})
    ask = ("ask", "How many widget units?", "--lake", str(lake), "--files", "sales.csv", "--llm", "scripted",
           "--scripted-file", rules)
    code, output = run(*ask)
    # The user's 3 calls: planner, coder, verifier; the finalyzer's would be the 4th.
    assert code == 6 and "LLM call budget reached: 3 of llm.max_llm_calls=3" in output, output  # BudgetExceeded
    assert "dslake runs resume" in output, output  # the spent run goes on from its last round with a new budget
    runs = set((lake / ".dslake" / "runs").iterdir())
    (lake / ".dslake" / "config.toml").write_text(
        (lake / ".dslake" / "config.toml").read_text() + "[llm]\nmax_llm_calls = 1000\nmax_cost = 500.0\n")
    code, output = run(*ask)
    assert code == 2 and "llm.max_llm_calls, llm.max_cost" in output, output
    assert set((lake / ".dslake" / "runs").iterdir()) == runs  # refused before a run (or a call) started
