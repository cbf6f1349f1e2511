"""What the settings are read from, as one string: the packaged defaults' and each config file's stat, and every
DSLAKE_* variable.

While it is the same, Settings.load() resolves the same values: a no-change `dslake index` trusts the values the
last index recorded with it (index/no_change.py) instead of importing and resolving the settings. Standard
library only, for that reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

ENV_PREFIX = "DSLAKE_"  # what names a setting's environment variable (settings.py)
# Inside the package, so that a wheel install (not only an editable one) finds every setting's default.
DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "default.toml")


def user_config_path() -> str:
    """Return where the user's config is read from, as this environment says (settings.USER_CONFIG_PATH)."""
    return os.path.join(os.environ.get("XDG_CONFIG_HOME", os.path.join(os.path.expanduser("~"), ".config")),
                        "dslake", "config.toml")


def settings_inputs(config_files: Sequence[str], environ: Mapping[str, str] | None = None) -> str:
    """Return the inputs of Settings.load(config_files=...): path, size, modification time and inode of the
    defaults and of each config file (or that it is missing), then the DSLAKE_* variables, sorted."""
    parts = []
    for path in (DEFAULTS_FILE, *config_files):
        try:
            st = os.stat(path)
        except OSError:
            parts.append(f"{path}\0missing")
            continue
        parts.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}")
    env = os.environ if environ is None else environ
    parts.extend(sorted(f"{key}={value}" for key, value in env.items() if key.startswith(ENV_PREFIX)))
    return "\n".join(parts)


def same_but_for(before: str, after: str, path: str) -> bool:
    """Tell whether two settings_inputs() differ at most in one file's line (the catalog's config, which an index
    writes with the values it resolved: read again, they resolve the same)."""
    def others(inputs: str) -> list[str]:
        return [line for line in inputs.split("\n") if not line.startswith(path + "\0")]

    return others(before) == others(after)
