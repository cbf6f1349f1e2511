"""A bubblewrap trial that passed, remembered until the machine restarts, so later processes need not run it again.

Before its first script, every dslake process checks that bubblewrap works here (bwrap.probe: a trial script in a
sandbox with the real binds, and a trial of --disable-userns): two sandboxes started and waited for, ~0.1-0.25 s on
the way to an ask's first script. What the answer depends on is the key below: this boot, the user, the bwrap and
interpreter binaries, the kernel's settings for user namespaces, what is bound. None of it changes between two runs
unless an administrator changes it, and then the key changes with it.

Only a pass is kept: a failing trial is run again by the next process (so installing or fixing bubblewrap takes
effect at once), and a pass that no longer holds cannot weaken anything: scripts then fail under bubblewrap with its
error, they never run without it. `dslake doctor` always runs the trials afresh and forgets a pass that failed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from dsstar_lake.sandbox import kept_answers

KIND = "sandbox-trial"  # kept_answers' folder
BOOT_ID = "/proc/sys/kernel/random/boot_id"
# What lets an unprivileged user make the namespaces bwrap needs (Debian's switch, the count, Ubuntu's AppArmor).
USERNS_SETTINGS = ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
                   "/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def trial_key(bwrap: str, python: str, tmp_mb: int, binds: list[list[str]]) -> list[Any] | None:
    """Return what a trial's outcome depends on, or None where that cannot be told (no boot id: never kept)."""
    try:
        boot = Path(BOOT_ID).read_text(encoding="ascii").strip()
        stamps = []
        for path in dict.fromkeys((bwrap, python, os.path.realpath(python))):
            st = os.stat(path)
            stamps.append([path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid])
    except OSError:
        return None
    return [boot, os.getuid(), os.getgid(), tmp_mb, stamps, [[p, _read(p)] for p in USERNS_SETTINGS], binds]


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except OSError:
        return None


def _name(key: list[Any]) -> str:
    return hashlib.blake2b(json.dumps(key).encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def passed(key: list[Any]) -> dict[str, Any] | None:
    """Return what a pass under this very key kept (the userns flags that worked), or None."""
    return kept_answers.kept(KIND, _name(key), key)


def remember(key: list[Any], userns_flags: list[str]) -> None:
    """Keep a pass; a failure only costs the next trial."""
    kept_answers.keep(KIND, _name(key), key, {"userns_flags": userns_flags})


def forget(key: list[Any]) -> None:
    """Drop a kept pass: the trial failed when run again."""
    kept_answers.drop(KIND, _name(key))
