"""Which analysis packages a script can import in the sandbox's interpreter, so prompts never make the model guess."""

from __future__ import annotations

import hashlib
import json
import os
import site
import subprocess
import sys
from functools import cache

from dsstar_lake.sandbox import kept_answers

# Import names worth telling the model about, in the order shown; anything missing is simply not listed.
CANDIDATES = (
    "pandas", "numpy", "pyarrow", "openpyxl", "scipy", "sklearn", "statsmodels", "matplotlib", "astropy",
    "skyfield", "sgp4", "cdflib", "lxml", "duckdb", "deltalake", "pyiceberg",
)
# Distribution names where they differ from the import name, for the version.
DISTRIBUTIONS = {"sklearn": "scikit-learn"}
KIND = "sandbox-packages"  # kept_answers' folder
PROBE = """
import importlib.metadata as md, importlib.util as iu, json, sys
found = {}
for name in json.loads(sys.argv[1]):
    if iu.find_spec(name) is None:
        continue
    try:
        found[name] = md.version(json.loads(sys.argv[2]).get(name, name))
    except md.PackageNotFoundError:
        found[name] = ""
print(json.dumps(found))
"""


@cache
def importable(python: str) -> dict[str, str]:
    """Return import name -> version for the candidates the interpreter has (found once per interpreter).

    Found by module spec, not by importing: importing scipy or astropy costs seconds, finding them none. For this
    very interpreter the answer is kept on disk (_remembered) until its packages change.
    """
    key = _stamp(python)
    if key is not None and (found := _remembered(key)) is not None:
        return found
    try:
        done = subprocess.run([python, "-I", "-c", PROBE, json.dumps(CANDIDATES), json.dumps(DISTRIBUTIONS)],
                              capture_output=True, text=True, timeout=60)
        found = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}
    if key is not None and found:
        _remember(key, found)
    return found


def _name(python: str) -> str:
    """Name one interpreter's kept answer (one per venv: they share a real binary, not packages)."""
    return hashlib.blake2b(python.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def _stamp(python: str) -> list | None:
    """Return what the probe's answer depends on, for this process's own interpreter; None for another one.

    The interpreter's binary and every site-packages folder it reads, with their modification times: installing,
    removing or upgrading a package adds or removes entries there (its dist-info folder), which changes the time.
    And the candidates asked about. A process costs ~0.2 CPU-s per run, on the path to the first script.
    """
    python = os.path.abspath(python)
    if python != os.path.abspath(sys.executable):  # not realpath: every venv of one Python shares its binary
        return None
    try:
        folders = [*site.getsitepackages(), python, os.path.realpath(python)]
        return [python, list(CANDIDATES), DISTRIBUTIONS,
                [[f, os.stat(f).st_mtime_ns] for f in folders if os.path.exists(f)]]
    except (OSError, AttributeError):
        return None


def _remembered(key: list) -> dict[str, str] | None:
    kept = kept_answers.kept(KIND, _name(key[0]), key)
    return kept.get("found") if kept is not None else None


def _remember(key: list, found: dict[str, str]) -> None:
    """Keep the answer; a failure only costs the next probe."""
    kept_answers.keep(KIND, _name(key[0]), key, {"found": found})


def packages_line(python: str, memory_mb: int = 0) -> str:
    """Return the sentence prompts use: the packages scripts can import here, with versions, and (memory_mb) how
    much memory a script has and which engine to use past it."""
    found = importable(python)
    if not found:
        return "Use only the Python standard library and the packages the code already imports."
    named = ", ".join(f"{name} {version}".strip() for name, version in found.items())
    line = f"Packages that import here: {named}, and the standard library; nothing else can be installed."
    if memory_mb:
        line += f" A script has {memory_mb:,} MB of memory for all its processes"
        line += (": data bigger than about half of that must not be loaded whole with pandas; query it with DuckDB "
                 "(duckdb.sql over read_parquet/read_csv, or over an Arrow dataset), which is preset to stay within "
                 "the limit and spill to the work folder." if "duckdb" in found else ".")
    return line
