"""Which analysis packages a script can import in the sandbox's interpreter, so prompts never make the model guess."""

from __future__ import annotations

import json
import subprocess
from functools import cache

# Import names worth telling the model about, in the order shown; anything missing is simply not listed.
CANDIDATES = (
    "pandas", "numpy", "pyarrow", "openpyxl", "scipy", "sklearn", "statsmodels", "matplotlib", "astropy",
    "skyfield", "sgp4", "cdflib", "lxml", "duckdb", "deltalake", "pyiceberg",
)
# Distribution names where they differ from the import name, for the version.
DISTRIBUTIONS = {"sklearn": "scikit-learn"}
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

    Found by module spec, not by importing: importing scipy or astropy costs seconds, finding them none.
    """
    try:
        done = subprocess.run([python, "-I", "-c", PROBE, json.dumps(CANDIDATES), json.dumps(DISTRIBUTIONS)],
                              capture_output=True, text=True, timeout=60)
        return json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}


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
