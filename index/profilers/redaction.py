"""Secrets never leave the lake through the catalog: what a profile shows of a file has its credentials redacted.

A lake can hold a download script with a password in it, a `.env`-like config, a table with an `api_key`
column. Every word a profile keeps (text sample, title, headings, examples, first rows, top values, min/max,
JSON structure examples, notes) reaches the description, the card, the FTS5 text, the vectors, `dslake show`,
the serve page, MCP and every prompt of the domain, so the profile is cleaned once, where it is made
(`profilers.registry.profile_path`): each secret's value becomes `«redacted: KIND»` and the profile gets a note
saying how many were taken out. The file itself is untouched: scripts can still read it.

What counts as a secret, by where the text sits:
- text and code lines (a text sample, a title, a heading): detect-secrets' (Yelp) detectors: keyword
  assignments (password/secret/api_key = "…", the file type deciding whether quotes are needed), cloud keys
  (AWS, Azure, IBM, GCP API keys), known token formats (GitHub, GitLab, Slack, Stripe, OpenAI, JWT…),
  private-key blocks, credentials in URLs (https://user:pass@host) and high-entropy quoted strings; plus token
  and bearer assignments, and a user name assigned next to a password in the same text;
- values (cells, examples, JSON scalars, notes): the same detectors but the high-entropy ones, since a data
  column of hashes, ids or base64 is data, not a secret; and every value of a column, a JSON key or a mapping
  row whose name says it holds a secret (`password`, `api_key`, `client_secret`, `access_token`…).
detect-secrets' heuristic filters (templated values, `$VARS`, indirect references, UUIDs, sequences) drop
the obvious false positives. Nothing here touches the network: no detector's `verify` is called.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from dslake_index.profilers.base import Profile

MARKER = "«redacted: {kind}»"
# A value found once is replaced wherever it appears in the profile (an example repeated in the first rows, a
# text sample line echoed as the title); a shorter one only where it is a whole value, so a two-letter password
# does not eat every "ab" of the profile.
ECHO_MIN_CHARS = 4
MIN_SECRET_CHARS = 5  # the shortest a data value holding a secret can be (`pwd=x`); most cells are shorter
_NAME_HINT = re.compile(r"pass|pwd|secret|key|token|credential|contrase", re.I)  # before the word-by-word look
# What every value a detector can match has (a token format is long, letters and digits; anything else names a
# key, a password or a token, or is a URL): data values without it (names, dates, codes) skip the detectors.
_WORTH_A_LOOK = re.compile(r"(?=[^\n]{16})(?=[^\n]*\d)(?=[^\n]*[A-Za-z])|://|pass|pw|secret|key|token|auth|"
                           r"PRIVATE|PuTTY", re.I)

# detect-secrets' secret types that are not used as they come: the keyword and entropy detectors are run
# with the context this module decides, and a public IP address is data, not a credential.
_HANDLED_APART = {"Secret Keyword", "Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"}
# Detectors that match only after a word such as key, pwd, password, pass or token (cloudant_password = …), or in
# their service's URL.
_IN_CONTEXT = {"Cloudant Credentials", "IBM Cloud IAM Key", "IBM COS HMAC Credentials", "SoftLayer Credentials"}
_CONTEXT_WORDS = re.compile(r"key|pw|pass|token|secret|://", re.I)
_KIND_OF_TYPE = {"Basic Auth Credentials": "password", "Private Key": "private key", "JSON Web Token": "token",
                 "AWS Access Key": "AWS key", "Base64 High Entropy String": "high-entropy string",
                 "Hex High Entropy String": "high-entropy string"}

_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----.*?(-----END[ A-Z0-9]*-----|\Z)"
                                r"|PuTTY-User-Key-File-2.*", re.S)
_GCP_API_KEY = re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")
# Tokens detect-secrets' keyword list leaves out (it has no "token"): NAME_TOKEN = "…", token: …, Bearer …
_TOKEN_ASSIGNED = re.compile(r"\b[\w-]*token\b[\"'\]]{0,2}\s*(?::=|[:=]|=>)\s*([\"'`]?)([^\s\"'`,;]{8,})\1", re.I)
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9\-._~+/]{8,}=*)")
# A login written next to a password is half of the credential: redacted when the same text had a password.
_USER_ASSIGNED = re.compile(r"\b[\w-]*(?:user(?:_?name)?|login|e_?mail|identity|account)\b[\"'\]]{0,2}\s*"
                            r"(?::=|[:=]|=>)\s*([\"'`])([^\s\"'`]{2,})\1", re.I)

_PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "passwort", "contraseña", "contrasena"}
_TOKEN_QUALIFIERS = {"access", "auth", "api", "bearer", "refresh", "session", "oauth", "id", "csrf", "secret",
                     "github", "gitlab", "slack", "personal", "private", "client"}
_KEY_QUALIFIERS = {"api": "api key", "private": "private key", "secret": "secret key", "access": "access key",
                   "auth": "auth key", "client": "client key", "service": "service key", "account": "account key",
                   "encryption": "encryption key", "signing": "signing key"}


@dataclass(frozen=True)
class Secret:
    """One secret value found in what a profile shows, and its kind (password, api key, AWS key, token…)."""

    value: str
    kind: str


def secret_name_kind(name: Any) -> str | None:
    """Return the kind of secret a name (a column, a JSON key, a variable) says its value is, or None.

    Whole words only, so `passwordless`, `secretary` or a bare `token` column of a text corpus are not names
    of secrets; `db_password`, `apiKey`, `client_secret`, `access_token` are.
    """
    if not isinstance(name, str) or len(name) > 80 or not _NAME_HINT.search(name):
        return None
    words = re.findall(r"[a-zñ]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())
    if not words:
        return None
    if _PASSWORD_WORDS & set(words):
        return "password"
    for before, word in pairwise(["", *words]):
        if word in ("apikey", "privatekey", "secretkey", "accesskey"):
            return word[:-3] + " key"
        if word == "key" and before in _KEY_QUALIFIERS:
            return _KEY_QUALIFIERS[before]
        if word == "token" and before in _TOKEN_QUALIFIERS:
            return "token"
    if "secret" in words or "secrets" in words:
        return "secret"
    if "credential" in words or "credentials" in words:
        return "credentials"
    return None


@lru_cache(maxsize=1)
def _detectors() -> tuple[list[Any], Any, list[Any], Any]:
    """detect-secrets' pattern detectors, its keyword detector, its two entropy detectors and its filters."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
    from detect_secrets.plugins.keyword import KeywordDetector

    patterns = [cls() for kind, cls in sorted(get_mapping_from_secret_type_to_class().items())
                if kind not in _HANDLED_APART]
    return patterns, KeywordDetector(), [Base64HighEntropyString(), HexHighEntropyString()], heuristic


@lru_cache(maxsize=64)
def _keyword_rules(suffix: str) -> dict[Any, int]:
    """The keyword regexes for a file: its language's for code (quotes required), a config file's otherwise.

    A README or a `.env` writes `password: hunter2` without quotes, so text that is not code is read the way
    detect-secrets reads config files; an unquoted value with spaces in it is prose, not a secret (below).
    """
    from detect_secrets.plugins import keyword
    from detect_secrets.util.filetype import determine_file_type

    return keyword.REGEX_BY_FILETYPE.get(determine_file_type(f"file{suffix}"), keyword.CONFIG_DENYLIST_REGEX_TO_GROUP)


@lru_cache(maxsize=1)
def _keyword_anywhere() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """detect-secrets' keyword list as a quick test, and as the whole name it sits in (SPACETRACK_PASSWORD)."""
    from detect_secrets.plugins.keyword import DENYLIST_REGEX

    return re.compile(DENYLIST_REGEX, re.I), re.compile(r"[\w-]*(?:" + DENYLIST_REGEX + r")", re.I)


def _plausible(value: str, line: str, heuristic: Any) -> bool:
    """detect-secrets' heuristic filters, and an unquoted value with spaces being prose."""
    value = value.strip()
    if len(value) < 2 or heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value):
        return False
    if heuristic.is_indirect_reference(line) or set(value) <= set("*xX.-_#"):
        return False
    quoted = any(f"{q}{value}{q}" in line for q in "\"'`")
    return quoted or not any(ch.isspace() for ch in value)


def _private_keys(text: str) -> list[Secret]:
    """Private-key blocks, BEGIN to END (or to the end of a cut sample)."""
    if "PRIVATE KEY" not in text and "PuTTY" not in text:
        return []
    return [Secret(m.group(0), "private key") for m in _PRIVATE_KEY_BLOCK.finditer(text)]


def _pattern_secrets(text: str) -> list[Secret]:
    """Cloud keys, known token formats and URL credentials in any text (one pass of each detector over it)."""
    patterns, _, _, _ = _detectors()
    found = [Secret(m.group(0), "GCP API key") for m in _GCP_API_KEY.finditer(text)]
    in_context = None
    for detector in patterns:
        if detector.secret_type == "Private Key":
            continue  # the block above, not just its BEGIN line
        subject = text
        if detector.secret_type in _IN_CONTEXT:  # their slow regexes look only at lines that can match them
            if in_context is None:
                in_context = "\n".join(line for line in text.split("\n") if _CONTEXT_WORDS.search(line))
            subject = in_context
        for value in _detected(detector, subject):
            if isinstance(value, str) and value.strip():
                found.append(Secret(value, _kind_of_type(detector.secret_type)))
    return found


def _kind_of_type(secret_type: str) -> str:
    """The kind a marker names for a detect-secrets type: "Slack Token" -> "Slack token", as the others read."""
    if secret_type in _KIND_OF_TYPE:
        return _KIND_OF_TYPE[secret_type]
    first, *rest = secret_type.split()
    return " ".join([first, *(w if w.isupper() else w.lower() for w in rest)])


def _detected(detector: Any, text: str) -> Iterable[str]:
    """The values a detector finds, whole: its regexes' own values cut a GitHub token to its `ghp` prefix group.

    A regex's group is the secret when it is long or closes the match (the password of `://user:PASS@`, an AWS
    secret before its quote); otherwise (a prefix group) the whole match is. Detectors with checks of their own
    (a JWT's form) are asked as they are.
    """
    from detect_secrets.plugins.base import RegexBasedDetector

    if type(detector).analyze_string is not RegexBasedDetector.analyze_string:
        yield from detector.analyze_string(text)
        return
    for regex in detector.denylist:
        for match in regex.finditer(text):
            group = match.group(1) if regex.groups else None
            whole = group is None or not (len(group) >= 8 or match.end(1) >= match.end() - 1)
            yield match.group(0) if whole else group


def _keyword_secrets(line: str, rules: dict[Any, int]) -> list[Secret]:
    """Keyword assignments (detect-secrets' list, plus tokens and bearer headers), each with its kind."""
    _, keywords, _, heuristic = _detectors()
    found = []
    quick, named = _keyword_anywhere()
    if quick.search(line):
        for value in keywords.analyze_string(line, denylist_regex_to_group=rules):
            if value and _plausible(value, line, heuristic):
                names = named.findall(line[:max(line.find(value), 0)])
                found.append(Secret(value.strip(), (secret_name_kind(names[-1]) if names else None) or "secret"))
    if "oken" in line or "OKEN" in line or "earer" in line:
        found += [Secret(m.group(2), "token") for m in _TOKEN_ASSIGNED.finditer(line)
                  if _plausible(m.group(2), line, heuristic)]
        found += [Secret(m.group(1), "token") for m in _BEARER.finditer(line)]
    return found


def _entropy_secrets(line: str) -> list[Secret]:
    """Quoted strings random enough to be keys (detect-secrets' limits), minus ids, UUIDs and sequences."""
    _, _, detectors, heuristic = _detectors()
    found = []
    for detector in detectors:
        for value in detector.analyze_string(line):
            if (detector.calculate_shannon_entropy(value) > detector.entropy_limit
                    and not heuristic.is_sequential_string(value) and not heuristic.is_potential_uuid(value)
                    and not heuristic.is_likely_id_string(value, line, detector)):
                found.append(Secret(value, "high-entropy string"))
    return found


def text_secrets(text: str, name: str = "") -> list[Secret]:
    """Return the secrets in text or code (name: the file's name, whose extension picks the keyword rules)."""
    rules = _keyword_rules(_suffix(name))
    found = _private_keys(text) + _pattern_secrets(text)
    lines = text.splitlines()
    for line in lines:
        found += _keyword_secrets(line, rules) + _entropy_secrets(line)
    if any(s.kind == "password" for s in found):
        found += [Secret(m.group(2), "user name") for line in lines for m in _USER_ASSIGNED.finditer(line)
                  if "{" not in m.group(2)]
    return found


def value_secrets(values: Iterable[str]) -> list[Secret]:
    """Return the secrets in data values: formats and keyword assignments, no entropy guessing.

    The values are checked together, one per line of one text: each detector's regexes cost a call per text, and
    a CSV's profile holds hundreds of short values (none of its regexes crosses a line)."""
    lines = sorted({v for v in values if len(v) >= MIN_SECRET_CHARS and _WORTH_A_LOOK.search(v)})
    if not lines:
        return []
    text = "\n".join(lines)
    found = _pattern_secrets(text)
    for line in lines:
        found += _private_keys(line)
        if len(line) < 2000:
            found += _keyword_secrets(line, _keyword_rules(".cfg"))
    return found


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > name.rfind("/") else ".txt"


def redact_string(text: str, secrets: Iterable[Secret]) -> str:
    """Return text with each secret's value replaced by its marker (a whole short value, or anywhere a long one)."""
    for secret in secrets:
        if text == secret.value:
            return MARKER.format(kind=secret.kind)
        if len(secret.value) >= ECHO_MIN_CHARS and secret.value in text:
            text = text.replace(secret.value, MARKER.format(kind=secret.kind))
    return text


def redact_text(text: str, name: str = "") -> tuple[str, int]:
    """Return free text (an analysis a script printed) redacted, and how many secrets were taken out."""
    found = _ordered(text_secrets(text, name))
    return (redact_string(text, found), len(found)) if found else (text, 0)


def redact_value(column: str, value: Any) -> Any:
    """Return a value shown under a column (a table's min/max) redacted when the column or the value says secret."""
    if not isinstance(value, str):
        return value
    kind = secret_name_kind(column)
    if kind:
        return MARKER.format(kind=kind)
    found = _ordered(value_secrets([value]))
    return redact_string(value, found) if found else value


def _ordered(found: Iterable[Secret]) -> list[Secret]:
    """One secret per value, longest first (a key inside a URL inside a line is replaced as the longest)."""
    seen: dict[str, Secret] = {}
    for s in found:
        seen.setdefault(s.value, s)
    return sorted(seen.values(), key=lambda s: -len(s.value))


def _strings(value: Any) -> list[str]:
    """Every string in nested lists and dicts' values."""
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return out


def _structure_secrets(node: Any, kind: str | None = None) -> Iterable[Secret]:
    """Every string under a JSON key named like a secret (the structure tree's examples)."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _structure_secrets(child, secret_name_kind(key) or kind)
    elif isinstance(node, list):
        for child in node:
            yield from _structure_secrets(child, kind)
    elif isinstance(node, str) and kind and node.strip() and node not in ("string", "object", "array"):
        yield Secret(node, kind)


def profile_secrets(profile: Profile, name: str) -> list[Secret]:
    """Return every secret a profile shows: in its text, its tables' values and names' contexts, its structure."""
    found: list[Secret] = []
    if profile.text_sample:
        found += text_secrets(profile.text_sample, name)
    for line in [profile.title or "", *profile.headings]:
        found += text_secrets(line, name) if line else []
    values: list[str] = [*profile.notes, *profile.keywords, *_strings(profile.structure)]
    for table in profile.tables:
        for index, column in enumerate(table.columns):
            kind = secret_name_kind(column.name)
            shown = [*column.examples, *column.top_values, column.min, column.max,
                     *(row[index] for row in table.sample_rows if index < len(row))]
            if kind:
                found += [Secret(v, kind) for v in shown if isinstance(v, str) and v.strip()]
            values += _strings([*shown, column.kinds])
        for row in table.sample_rows:  # a mapping's rows: ["api_key", "…"]
            for key, value in pairwise(row):
                kind = secret_name_kind(key)
                if kind and isinstance(value, str) and value.strip():
                    found.append(Secret(value, kind))
    found += list(_structure_secrets(profile.structure))
    found += value_secrets(values)
    return _ordered(found)


def redact_profile(profile: Profile, name: str) -> Profile:
    """Redact every secret the profile shows, in place, and note how many; the read hints are left as they are.

    name: the file's name (its extension picks the keyword rules for code). Returns the profile.
    """
    found = profile_secrets(profile, name)
    if not found:
        return profile
    clean: Callable[[Any], Any] = lambda v: _redacted(v, found)  # noqa: E731 - one closure, used field by field
    profile.text_sample = clean(profile.text_sample)
    profile.title = clean(profile.title)
    profile.headings = clean(profile.headings)
    profile.structure = clean(profile.structure)
    profile.keywords = clean(profile.keywords)
    profile.notes = clean(profile.notes)
    for table in profile.tables:
        table.sample_rows = clean(table.sample_rows)
        for column in table.columns:
            column.examples, column.top_values = clean(column.examples), clean(column.top_values)
            column.min, column.max, column.kinds = clean(column.min), clean(column.max), clean(column.kinds)
    kinds = sorted({s.kind for s in found})
    count = f"{len(found)} secret{'s' if len(found) != 1 else ''}"
    profile.notes.append(f"{count} redacted from what the catalog shows ({', '.join(kinds)}); "
                         "scripts can still read the file")
    return profile


def _redacted(value: Any, found: list[Secret]) -> Any:
    if isinstance(value, str):
        return redact_string(value, found)
    if isinstance(value, list):
        return [_redacted(v, found) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, found) for k, v in value.items()}
    return value
