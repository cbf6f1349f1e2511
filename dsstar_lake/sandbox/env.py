"""The environment a script sees: built from scratch, so no API key or credential can leak into it."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

# Names that look like credentials; refused even when a user asks to pass them through.
SECRET_PATTERNS = (
    "*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*AUTH*", "*COOKIE*",
    "*SESSION*",
    "GOOGLE_*", "GEMINI_*", "OPENAI_*", "ANTHROPIC_*", "AWS_*", "AZURE_*", "GCP_*", "GCLOUD_*", "HF_*",
    "HUGGING*", "GITHUB_*", "GH_*", "GITLAB_*", "DSLAKE_*", "SSH_*", "GPG_*", "KUBECONFIG", "DOCKER_*",
    "*_PROXY", "NETRC", "PGPASS*",
)
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS", "POLARS_MAX_THREADS", "RAYON_NUM_THREADS")


def is_secret(name: str) -> bool:
    """Return True when an environment variable name looks like it carries a credential."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def script_env(
    home: Path,
    tmp: Path,
    python: str,
    passthrough: Iterable[str] = (),
    parent: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Return the environment for a script: fixed values, plus allowed non-secret names from the parent."""
    parent = os.environ if parent is None else parent
    path_dirs = [str(Path(python).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path_dirs)),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(home / ".matplotlib"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",  # output printed before a kill still reaches us
        "PYTHONIOENCODING": "utf-8",
        "PYTHONNOUSERSITE": "1",
    }
    env.update({name: "1" for name in THREAD_VARS})
    for name in passthrough:
        if name in parent and not is_secret(name) and name not in env:
            env[name] = parent[name]
    return env


DUCKDB_SPILL = "duckdb_spill"  # DuckDB's temp folder, inside the work folder (its disk budget counts it)


def engine_env(memory_mb: int, disk_mb: int, work_tmpfs_mb: int = 0) -> dict[str, str]:
    """Return DuckDB's share of a script's limits, read by the sitecustomize (sandbox/_engines.py).

    DuckDB gets 40% of the memory bound (the script's Python, pandas frames and the interpreter need the rest),
    two threads at most (the machine's cores are shared; threads count against the process limit), and spill
    files in the work folder up to half its disk budget. Where the work folder is a tmpfs (bubblewrap), its files
    are memory too, so the spill is capped at a fifth of the memory bound as well.
    """
    spill = disk_mb // 2
    if work_tmpfs_mb:
        spill = min(spill, memory_mb // 5)
    return {"DSLAKE_DUCKDB_MEMORY": f"{max(64, memory_mb * 2 // 5)}MB",
            "DSLAKE_DUCKDB_THREADS": str(max(1, min(2, os.cpu_count() or 1))),
            "DSLAKE_DUCKDB_TEMP": DUCKDB_SPILL, "DSLAKE_DUCKDB_TEMP_MAX": f"{max(64, spill)}MB"}
