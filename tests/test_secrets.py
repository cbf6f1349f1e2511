"""Secrets in a lake's files never reach what the catalog shows (issue 40, item 5).

A lake the test writes holds a download script with a login and a password (as KramaBench's astronomy lake
does), an AWS key pair, a GitHub token, a GCP API key and database credentials in a URL, a private-key file, a
table with an `api_key` column and a JSON config with a password. Each raw value must be absent from every
surface: the catalog's files (manifest with its FTS5 rows, the Chroma store), `dslake show`, a search's hits,
the first planner prompt of a scripted run and the serve entry page; each shows `«redacted: KIND»` instead, and
the entry says how many were taken out. Scripts still read the file as it is. Ordinary data that looks random
(hashes, ids, hex colours, base64, UUIDs) and prose about passwords is left alone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from agent_helpers import FAST, fenced, prompts, scripted
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.lake import Lake

PASSWORD = "Zq!7vKp#2mWx9LrT"
USER = "orbit.fan@example.org"
AWS_KEY_ID = "AKIAZ3MQ7RVE5XK2PLQW"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt2Lm4N"
GITHUB_TOKEN = "ghp_4fT9kQ2mZ8vB1nR7xL3cW6yH0sD5gJ2pA9eU"
GCP_KEY = "AIzaSyD4kq9Xv2LmQ8rT4wZ1pN7bC3hF6jY0uEs"
DB_PASSWORD = "Tr0ub4dor-and-3"
KEY_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0"
API_KEYS = ["k9Xv2LmQ8rT4wZ1p", "Hq3Nn8YtR2bLx6Wm"]
CONFIG_PASSWORD = "s3cret-Horse-77"
RAW = [PASSWORD, USER, AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, GCP_KEY, DB_PASSWORD, KEY_BODY, CONFIG_PASSWORD,
       *API_KEYS]

DOWNLOAD = f'''import requests

# --- Configuration ---
SPACETRACK_USER = "{USER}"
SPACETRACK_PASSWORD = "{PASSWORD}"  # <-- insecure
AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"
aws_secret_access_key = "{AWS_SECRET}"
GITHUB_TOKEN = "{GITHUB_TOKEN}"
MAPS_KEY = "{GCP_KEY}"
DATABASE_URL = "postgresql://loader:{DB_PASSWORD}@db.internal.example:5432/lake"
NORAD_CAT_ID = "25544"
BASE_URL = "https://www.space-track.org"


def login(session):
    return session.post(BASE_URL + "/ajaxauth/login",
                        data={{"identity": SPACETRACK_USER, "password": SPACETRACK_PASSWORD}})
'''
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n{KEY_BODY[::-1]}\n-----END RSA PRIVATE KEY-----\n"
# Data that looks random and is not a secret: checksums, ids, colours, base64 payloads, UUIDs.
CHECKSUMS = ("file,md5,sha256,colour,payload,run_id\n" + "".join(
    f"part{i}.bin,{'%032x' % (0x9e3779b97f4a7c15 * (i + 7) ** 5)},{'%064x' % (0x2545f4914f6cdd1d * (i + 3) ** 9)},"
    f"#1f77b{i},SGVsbG8sIFdvcmxkIQ{'=' * (i % 3)},{'%08x' % (i * 2654435761 % 2**32)}-4b1c-8d2e-9f30-a1b2c3d4e5f6\n"
    for i in range(8)))
NOTES = ("# Station notes\n\nPassword: ask the data team for the station login.\n"
         "The token count per sentence is in tokens.csv; hashes are md5.\n")


def write_lake(root: Path) -> Path:
    """A lake with secrets in code, a key file, a table and a config, and data that only looks random."""
    root.mkdir(parents=True)
    (root / "download.py").write_text(DOWNLOAD)
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text(PEM)
    (root / "users.csv").write_text("name,api_key,visits\n" + "".join(
        f"{name},{key},{n}\n" for name, key, n in zip(["ada", "bob"], API_KEYS, [3, 5], strict=True)))
    (root / "config.json").write_text(json.dumps(
        {"host": "db.internal", "port": 5432, "password": CONFIG_PASSWORD, "timeout_s": 30}))
    (root / "checksums.csv").write_text(CHECKSUMS)
    (root / "notes.md").write_text(NOTES)
    (root / "orbits.csv").write_text("epoch,altitude_km\n2024-01-01,418.2\n2024-01-02,417.9\n2024-01-03,417.5\n")
    return root


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    opened = Lake.open(write_lake(tmp_path_factory.mktemp("secrets") / "lake"))
    opened.index()
    yield opened
    opened.close()


def _raw_in(text: str) -> list[str]:
    return [value for value in RAW if value in text]


def _shown(lake: Lake, path: str) -> tuple[str, str]:
    """Return an entry's description and card, as `dslake show` and every prompt get them."""
    entry = lake.show(path)["entry"]
    return entry["description"], entry["card"]


def test_no_catalog_file_holds_a_raw_secret(lake):
    """Manifest (descriptions, cards, profiles, FTS5 rows, its -wal), the vector store, and a run's records and
    cached model answers when the ask below ran first: the raw values were never written."""
    found = {}
    for path in Path(lake.catalog_dir).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits = [value for value in RAW if value.encode() in data]
            if hits:
                found[str(path.relative_to(lake.catalog_dir))] = hits
    assert not found


def test_dslake_show_says_what_was_redacted(lake):
    runner = CliRunner()
    result = runner.invoke(cli, ["show", "download.py", "--lake", str(lake.root)])
    assert result.exit_code == 0, result.output
    shown = result.output
    assert not _raw_in(shown)
    assert 'SPACETRACK_PASSWORD = "«redacted: password»"' in shown
    assert 'SPACETRACK_USER = "«redacted: user name»"' in shown
    assert "«redacted: AWS key»" in shown and "«redacted: GitHub token»" in shown
    assert "«redacted: GCP API key»" in shown and "postgresql://loader:«redacted: password»@db" in shown
    assert "7 secrets redacted from what the catalog shows" in shown and "scripts can still read the file" in shown
    assert 'NORAD_CAT_ID = "25544"' in shown and "https://www.space-track.org" in shown  # the rest stays
    description, card = _shown(lake, "keys/server.pem")
    assert not _raw_in(description + card) and "«redacted: private key»" in description


def test_tables_and_json_values_named_like_secrets_are_redacted(lake):
    description, card = _shown(lake, "users.csv")
    assert not _raw_in(description + card) and "«redacted: api key»" in description and "ada" in description
    description, card = _shown(lake, "config.json")
    assert not _raw_in(description + card) and "«redacted: password»" in description and "db.internal" in description


def test_data_that_only_looks_random_is_left_alone(lake):
    checksums = _shown(lake, "checksums.csv")[0]
    assert "redacted" not in checksums
    assert "SGVsbG8sIFdvcmxkIQ" in checksums and "#1f77b" in checksums and "%032x" % (0x9e3779b97f4a7c15 * 7**5) in \
        checksums
    notes = _shown(lake, "notes.md")[0]
    assert "redacted" not in notes and "ask the data team" in notes
    assert "redacted" not in _shown(lake, "orbits.csv")[0]


def test_search_hits_and_full_text_show_no_secret(lake):
    for question in ("space track login password download script", "api key users visits", PASSWORD, USER):
        for hit in lake.search(question, k=10):
            assert not _raw_in(json.dumps(vars(hit), default=str, ensure_ascii=False))
    rows = lake.catalog.connection().execute("SELECT body FROM entries_fts").fetchall()
    assert rows and not _raw_in("\n".join(r[0] for r in rows))
    assert any("redacted password" in " ".join(r[0].split()).replace("«", "").replace("»", "").replace(":", "")
               for r in rows)


def test_first_planner_prompt_shows_no_secret_and_scripts_still_read_the_file(lake):
    # the script proves it read the file as it is by its digest: the secret itself is in no prompt or answer
    check = "import hashlib\nprint(hashlib.sha256(open('data/download.py', 'rb').read()).hexdigest())"
    provider = scripted(("planner", "Count the password in the script."), ("verifier", "Yes"),
                        fallback={"coder": fenced(check), "finalyzer": fenced(check)})
    answer = lake.ask("What does the download script log in with?", files=["download.py", "users.csv"],
                      provider=provider, overrides=FAST)
    first = prompts(provider, "planner")[0]
    assert not _raw_in(first)
    assert "«redacted: password»" in first and "«redacted: api key»" in first
    assert answer.text.strip() == hashlib.sha256(DOWNLOAD.encode()).hexdigest()  # read as it is


def test_serve_entry_page_shows_no_secret(lake):
    from serve_helpers import Server, fetch

    with Server(lake) as server:
        code, page, _ = fetch(server.url("/entries/" + quote("download.py")))
        assert code == 200 and 'id="description"' in page
        assert not _raw_in(page) and "redacted: password" in page
        code, page, _ = fetch(server.url("/entries/users.csv"))
        assert code == 200 and not _raw_in(page) and "redacted: api key" in page


def test_detector_kinds_and_names():
    from dslake_index.profilers.redaction import redact_text, secret_name_kind

    assert [secret_name_kind(n) for n in ("db_password", "apiKey", "client_secret", "access_token", "API-KEY",
                                          "private_key", "passwordless", "secretary", "token", "tokens", "key",
                                          "pass_rate", "user_id")] == \
        ["password", "api key", "secret", "token", "api key", "private key", None, None, None, None, None, None, None]
    text, count = redact_text(f'print("logged in")\nAuthorization: Bearer {GITHUB_TOKEN[4:]}\nPASSWORD={PASSWORD}\n')
    assert count == 2 and not _raw_in(text) and "Bearer «redacted: token»" in text
    assert redact_text("password: see the wiki for the policy\nuuid = '6fa459ea-ee8a-3ca4-894e-db77e160355e'\n") == \
        ("password: see the wiki for the policy\nuuid = '6fa459ea-ee8a-3ca4-894e-db77e160355e'\n", 0)


def test_an_analysis_that_printed_a_secret_is_kept_and_rendered_redacted(tmp_path):
    """The analyzer's script reads the file itself: what it printed is stored and shown without the secret."""
    from dslake_index.entries import with_analysis

    printed = f'The script logs in with\nSPACETRACK_USER = "{USER}"\nSPACETRACK_PASSWORD = "{PASSWORD}"\n'
    shown = with_analysis("File: data/download.py", (printed, "llm"))
    assert PASSWORD not in shown and "«redacted: password»" in shown and "2 secrets redacted" in shown
    root = tmp_path / "lake"
    root.mkdir()
    (root / "download.py").write_text(DOWNLOAD)
    small = Lake.open(root)
    small.index()
    content_hash = small.show("download.py")["file"]["hash"]
    small.catalog.enrichment_store().store_analysis(content_hash, printed, "llm", ok=True)
    small.index()
    stored = small.catalog.connection().execute("SELECT text FROM analyses").fetchall()
    description = _shown(small, "download.py")[0]
    small.close()
    assert stored and not _raw_in(stored[0][0]) and not _raw_in(description)
    assert "Analysis (llm;" in description and description.count('SPACETRACK_PASSWORD = "«redacted: password»"') == 2
