"""Sandbox: run one untrusted script with the lake read-only at data/, under limits; report what it did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from dslake_index.lakemask import Masks, skipped_names

from dsstar_lake.base.errors import ConfigError, LakeNotFound, UsageError
from dsstar_lake.base.settings_sections import SandboxSettings
from dsstar_lake.sandbox import bwrap as bw
from dsstar_lake.sandbox import limits, openwatch, workfolder
from dsstar_lake.sandbox.env import engine_env, script_env
from dsstar_lake.sandbox.fingerprint import catalog_stamps, changed, fingerprint, with_side_files
from dsstar_lake.sandbox.openwatch import OpenWatch
from dsstar_lake.sandbox.pump import Pump, killpg
from dsstar_lake.sandbox.result import ExecResult, classify
from dsstar_lake.sandbox.spares import Spares, Started
from dsstar_lake.sandbox.tracecheck import read_trace

SHIM = str(Path(__file__).with_name("_shim.py"))
READ_TRACER = Path(__file__).with_name("_readtrace.py")
ENGINE_LIMITS = Path(__file__).with_name("_engines.py")  # appended to the sitecustomize: DuckDB under the limits
LAUNCHER = Path(__file__).with_name("_launch.py")
WARM = Path(__file__).with_name("_warm.py")  # the script's interpreter under the launcher
BACKENDS = ("auto", "bwrap", "subprocess")


def _config(section: SandboxSettings | Mapping[str, Any]) -> dict[str, Any]:
    """Return the [sandbox] settings as a dict: the typed section whole, or a few keys (a test's, a benchmark's)
    over default.toml's, the one place their defaults are written."""
    if isinstance(section, SandboxSettings):
        return asdict(section)
    from dsstar_lake.base.settings import read_defaults

    return {**read_defaults()["sandbox"], **dict(section)}
DRAIN_S = 1.0  # time to read what is left in the pipes after the shim ended


class Sandbox:
    """Run model-written scripts in a child process with the lake read-only at `data/`.

    backend is "bwrap" (bubblewrap: read-only filesystem, no network, private /tmp, hidden homes) or
    "subprocess" (limits, scrubbed environment, lake change detection; `warning` says what is lost).
    """

    def __init__(
        self,
        settings_section: SandboxSettings | Mapping[str, Any],
        lake_root: Path,
        private: Iterable[Path] | None = None,
        volatile: Iterable[Path] = (),
        view: Any = None,
    ) -> None:
        """private: dslake's own folders (the catalog): hidden from scripts with bwrap, checked for changes
        without it. volatile: folders inside them that dslake itself writes while a script runs (runs/, the
        response cache), left out of that check. view: for a lake in object storage, the LakeView whose folder
        is lake_root (dsstar_lake/runs/lakeview.py); it fetches what each script needs before it runs.
        """
        self.cfg = _config(settings_section)
        self.lake = Path(lake_root).resolve()
        if not self.lake.is_dir():
            raise LakeNotFound(f"lake {lake_root} is not a folder")
        self.private = [Path(p).resolve() for p in (private if private is not None else [self.lake / ".dslake"])]
        self.volatile = [Path(p).resolve() for p in volatile]
        # Normalized: a path through a folder that is not bound (tests/../.venv) would not resolve inside bwrap.
        self.python = os.path.abspath(str(self.cfg["python"] or sys.executable))
        self.backend, self.warning = self._choose_backend(str(self.cfg["backend"]))
        self.bwrap = shutil.which("bwrap") if self.backend == "bwrap" else None
        self.max_procs = int(self.cfg["max_procs"])
        self.memory_mb = int(self.cfg["memory_mb"])
        self.cgroups, self.memory_cgroup = self._try_cgroup()
        self.net_unshare = self.backend == "subprocess" and _net_unshare_works(self.python)
        self.view = view
        if view is not None:
            view.link = self.backend == "bwrap"  # without a read-only mount, copies: see lakeview.py
        # keep_warm: keep one script's own sandbox started ahead while a script runs (a run sets it, and close()s).
        self.keep_warm = False
        self.prestart = max(0, int(self.cfg["prestart"]))
        self.preload = tuple(n.strip() for n in str(self.cfg["preload"]).split(",") if n.strip())
        self._spares = Spares()

    def _choose_backend(self, wanted: str) -> tuple[str, str | None]:
        if wanted not in BACKENDS:
            raise ConfigError(f"sandbox.backend must be one of {', '.join(BACKENDS)}, not {wanted!r}")
        if wanted == "subprocess":
            return "subprocess", "sandbox: bubblewrap disabled by sandbox.backend = subprocess; " + LOSS
        reason = bw.probe(self.python, 64)
        if reason is None:
            return "bwrap", None
        if wanted == "bwrap":
            raise ConfigError(f"sandbox.backend = bwrap, but {reason}",
                              hint="install it (apt-get install -y bubblewrap) or set sandbox.backend = auto")
        return "subprocess", f"sandbox: {reason}; " + LOSS

    def _try_cgroup(self) -> tuple[bool, str | None]:
        """Probe which cgroups this machine lets us make: (a pids cgroup?, the memory cgroup's version)."""
        return limits.probe_cgroups(self.max_procs, self.memory_mb)

    @cached_property
    def masks(self) -> Masks:
        """Return the lake paths the index skips (hidden, ignored), blanked under bubblewrap; walked once."""
        return skipped_names(self.lake, self.private)

    def packages(self) -> str:
        """Return one sentence naming the analysis packages scripts can import here, with versions."""
        from dsstar_lake.sandbox.packages import packages_line

        return packages_line(self.python, self.memory_mb)

    def versions(self) -> dict[str, str]:
        """Return the analysis packages scripts can import here: import name -> installed version."""
        from dsstar_lake.sandbox.packages import importable

        return dict(importable(self.python))

    @property
    def memory_limit(self) -> str:
        """Return the memory limit in force and how, for doctor, the run record and the safety table."""
        return limits.describe_memory(self.memory_mb, self.memory_cgroup)

    @property
    def protections(self) -> dict[str, str]:
        """Return each protection in force and how it is enforced, for reports and the safety table."""
        bwrap = self.backend == "bwrap"
        procs = ("pids cgroup" if self.cgroups else
                 "RLIMIT_NPROC" if os.getuid() != 0 else "process-tree watchdog")
        return {
            "timeout": "wall clock; the script's process group and every descendant killed",
            "memory": self.memory_limit,
            "cpu": f"RLIMIT_CPU {self.cfg['cpu_s']} s",
            "processes": f"{procs}, at most {self.max_procs}" if self.max_procs else "none",
            "output": f"{self.cfg['max_output_bytes']} bytes kept per stream; killed past "
                      f"{self.cfg['output_limit_mb']} MiB",
            "environment": "built from scratch; no keys or tokens",
            "lake": "read-only mount" if bwrap else "changes detected afterwards (size/mtime/ctime)",
            "network": "none (network namespace)" if bwrap or self.net_unshare else "NOT isolated",
            "home and credentials": "absent (only allow-listed paths are bound)" if bwrap else "NOT hidden",
            "filesystem": "an allow-list (`dslake doctor` prints it), read-only but the work folder and a "
                          "private /tmp" if bwrap else "NOT protected",
            "hidden lake files": ("blanked (hidden names and .dslakeignore)" if self.masks.complete else
                                  "blanked within the first entries walked") if bwrap else "hidden from data/'s "
                                  "top level only; readable by absolute path",
            "catalog": "hidden (empty read-only folder)" if bwrap
                       else "changes detected afterwards (size/mtime/ctime; SQLite's -wal by its bytes)",
            "script file": "written outside the work folder, read-only to the script"
                           if bwrap else "written outside the work folder",
            "disk": (f"work folder a {self.work_mb} MiB tmpfs (the kernel bounds it; {self.cfg['max_files']} entries "
                     f"counted every {workfolder.BUDGET_EVERY_S} s), mirrored to the run's folder after each script; "
                     f"/tmp {self.cfg['tmp_mb']} MiB, /dev/shm {self.cfg['memory_mb']} MiB (RAM-backed)"
                     if self.work_mb else
                     f"work folder {self.cfg['disk_mb']} MiB / {self.cfg['max_files']} entries, measured every "
                     f"{workfolder.BUDGET_EVERY_S} s (deleted files held open counted); /tmp a scratch folder on "
                     "disk and /dev/shm the host's, NOT sized"),
            "user namespaces": ("cannot be created" if bw.userns_flags(self.bwrap or "bwrap") else "allowed")
                               if bwrap else "allowed",
            "daemons": "killed when the script ends (subreaper sweep"
                       + (", pid namespace)" if bwrap else ")"),
            "read trace": "Python's opens (an audit hook in the script) and every open in the lake's folders ("
                          + ("fanotify, outside the script; other processes' opens left out by pid and cgroup)"
                             if openwatch.by_pid() and (self.cgroups or self.memory_cgroup) else
                             "inotify, outside the script; any process's)")
                          if openwatch.available() and self.view is None else
                          "Python's opens only (an audit hook in the script): "
                          + ("no inotify here" if self.view is None else "a lake in object storage")
                          + ", so files read in C (pyarrow, DuckDB, lxml) are not counted",
        }

    def run(
        self,
        code: str,
        workdir: Path,
        name: str = "script.py",
        timeout_s: float | None = None,
        watch: Iterable[str | Path] = (),
        context: Iterable[str] = (),
        last: bool = False,
    ) -> ExecResult:
        """Run code as `name` with workdir as its folder; watch = lake files to check for changes as well.

        context: the run's entries (paths and family patterns), which a view fetches before the script runs.
        last: no script follows this one, so with keep_warm no sandbox is started ahead for the next.

        The script file itself lives in a private scratch folder, never in workdir: workdir is the script's
        to write, and a name there may be a link planted by an earlier script.
        """
        if "/" in name or name in ("", ".", "..", "data", "sitecustomize.py", "_launch.py", "_warm.py"):
            raise UsageError(f"script name {name!r} must be a plain file name")
        workdir = Path(workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        fetched = self.view.prepare(code, list(context)) if self.view is not None else []
        result = self._run_scratch(code, name, workdir, watch, timeout_s, last)
        if self.view is not None and not (result.ok or result.lake_modified or result.catalog_modified
                                          or result.timed_out) and (more := self.view.fetch_missing(result.stderr)):
            # A path the code builds at run time (no literal names it): fetched now, the script runs once more.
            fetched += more
            result = self._run_scratch(code, name, workdir, watch, timeout_s, last)
        result.notes += fetched
        return result

    @property
    def warms(self) -> bool:
        """Tell whether scripts here are started ahead: bubblewrap with its tmpfs work folder and launcher, and
        sandbox.prestart above 0 (0: each script's sandbox starts when the script goes, as without bubblewrap)."""
        return self.backend == "bwrap" and self.work_mb > 0 and self.view is None and self.prestart > 0

    def warm(self, workdir: Path) -> None:
        """Start the sandbox of the next script to run in workdir now, so it is ready when the script goes.

        Its own bubblewrap, limits and cgroup, and an interpreter that imports pandas meanwhile; the work folder is
        copied in only when the script goes. A no-op where scripts cannot be started ahead. close() kills it if no
        script took it.
        """
        if self.warms:
            workdir = Path(workdir).resolve()
            workdir.mkdir(parents=True, exist_ok=True)
            self._spares.add(workdir, self._start_ahead)

    def _start_ahead(self, workdir: Path) -> Started:
        return self._start(workdir, preload=self.preload)

    @property
    def ahead(self) -> dict[str, int]:
        """Return how many sandboxes were started ahead so far, and how many of them a script took."""
        return {"started": self._spares.started, "taken": self._spares.taken}

    def close(self) -> None:
        """Kill the sandboxes started ahead that no script took (their whole process trees)."""
        self._spares.close()

    def _run_scratch(self, code: str, name: str, workdir: Path, watch: Iterable[str | Path],
                     timeout_s: float | None, last: bool = False) -> ExecResult:
        ahead = self._spares.take(workdir)
        if self.keep_warm and not last and not self._spares.waiting(workdir):
            self.warm(workdir)  # the next script's sandbox starts while this one runs
        return self._run_checked(code, name, workdir, watch, timeout_s, ahead)

    def _run_checked(self, code: str, name: str, workdir: Path, watch: Iterable[str | Path],
                     timeout_s: float | None, ahead: Started | None) -> ExecResult:
        try:
            notes = self._prepare_data(workdir)
            timeout = float(timeout_s if timeout_s is not None else self.cfg["timeout_s"])
            check = self.backend == "subprocess"
            watch = list(watch)
            before = self._fingerprints(workdir, watch) if check else ({}, {})
            opens = self._open_watch(workdir)  # last: nothing above it may open a lake file in its window
        except BaseException:
            if ahead is not None:
                ahead.kill()
            raise
        try:
            started = ahead or self._start(workdir, script=(name, code))
            if opens is not None and started.cgroup is not None:
                opens.own(started.cgroup.paths)
            try:
                result = self._execute(started, name, code, timeout, opens)
            finally:
                started.release()
        finally:
            opened, missing = opens.close() if opens is not None else ([], [])
        result.notes += notes
        # What the script's Python reported first, in its order; then what the open watch alone saw (C libraries).
        reported = self._lake_reads(result.reads, workdir)
        result.reads = list(dict.fromkeys(reported + opened))
        if result.killed_by is None:  # a killed script's reads are cut short anyway
            result.trace_problems += missing
        if opens is not None and opens.shared and not opens.attributed and len(result.reads) > len(reported):
            result.trace_problems.append(openwatch.SHARED)
        if opens is not None and opens.others:
            result.notes.append(f"read trace: {opens.others} opens of lake files by other processes meanwhile left out")
        if opens is not None and opens.unwatched:
            result.notes.append(f"read trace: {opens.unwatched}; files read in C in the others are not counted")
        if check:
            after = self._fingerprints(workdir, watch)
            result.lake_modified = changed(before[0], after[0])
            result.catalog_modified = changed(before[1], after[1])
        return result

    def _open_watch(self, workdir: Path) -> OpenWatch | None:
        """Start watching the lake's folders for opens (openwatch.py), where inotify works and the lake is a folder.

        A lake in object storage is a view of links into the blob cache (under bubblewrap): opens land there,
        outside the lake's folders, so only the audit hook counts its reads.
        """
        if not openwatch.available() or self.view is not None:
            return None
        try:
            return OpenWatch(self.lake, [*self.private, workdir], self.masks.folders, [workdir / "data"])
        except OSError:  # no inotify instance left (fs.inotify.max_user_instances): the audit hook alone
            return None

    def _fingerprints(self, workdir: Path, watch: list[str | Path]) -> tuple[dict, dict]:
        """Stamp the lake (less the catalog and workdir) and the catalog (less what dslake writes meanwhile)."""
        bound = int(self.cfg["fingerprint_files"])
        lake = fingerprint(self.lake, bound, [*self.private, workdir], watch)
        catalog: dict[str, Any] = {}
        for folder in self.private:
            stamps = fingerprint(folder, bound, [*with_side_files(self.volatile), workdir])
            catalog.update({f"{folder.name}/{k}": v for k, v in catalog_stamps(folder, stamps).items()})
        return lake, catalog

    def _lake_reads(self, opened: list[str], workdir: Path) -> list[str]:
        """Return the lake files among the paths a script opened, lake-relative, in first-read order.

        A path is seen as the script wrote it: under data/ in the work folder, or absolute into the lake
        (both mounts show the same files). The catalog and anything outside the lake are left out.
        """
        data = workdir / "data"
        out: dict[str, None] = {}
        # Only private folders inside the lake are left out: a view lies inside the catalog it is made from.
        private = [p for p in self.private if p.is_relative_to(self.lake)]
        hidden = {self.view.manifest} if self.view is not None else set()
        # Most opened paths are the interpreter's and the packages' own files (every module pandas imports):
        # a string test leaves them out before any Path is made (hundreds per script: ~0.15 s each under load).
        prefixes = tuple(f"{root}{os.sep}" for root in (data, self.lake))
        for raw in opened:
            normal = os.path.normpath(raw)
            if not normal.startswith(prefixes):
                continue
            path = Path(normal)
            for root in (data, self.lake):
                if path.is_relative_to(root):
                    rel = path.relative_to(root)
                    target = self.lake / rel
                    if (rel.parts and not any(target.is_relative_to(p) for p in private)
                            and rel.as_posix() not in hidden):
                        out.setdefault(rel.as_posix(), None)
                    break
        return list(out)

    def _private_in_lake(self) -> list[str]:
        """Return the private folders (the catalog) that lie inside the lake, lake-relative."""
        inside = []
        for path in self.private:
            try:
                inside.append(path.relative_to(self.lake).as_posix())
            except ValueError:
                continue
        return inside

    def _prepare_data(self, workdir: Path) -> list[str]:
        """Make workdir/data the lake: a folder of links to its top level without bwrap, a mount point with it.

        Without bwrap the links leave out hidden names and the catalog, so a script that wipes data/ removes
        links, not the catalog or the lake's files (writes through a link still reach the lake: the fingerprint
        check catches those).
        """
        data = workdir / "data"
        notes = []
        if data.is_dir() and not data.is_symlink():
            for child in data.iterdir():
                if child.is_symlink():
                    child.unlink()
        if data.is_symlink():
            data.unlink()
        elif data.is_dir() and any(data.iterdir()):
            # An earlier script replaced the link with a folder of its own: keep its files, out of the way.
            aside = next(p for i in range(1, 10**6) if not (p := workdir / f"data.moved-{i}").exists())
            data.rename(aside)
            notes.append(f"work folder had its own data/ folder; moved to {aside.name}")
        elif data.is_dir():
            if self.backend == "bwrap":
                return notes
            data.rmdir()
        elif data.exists():
            data.unlink()
        data.mkdir(exist_ok=True)
        if self.backend != "bwrap":
            hidden = set(self._private_in_lake())
            for child in sorted(self.lake.iterdir()):
                if not child.name.startswith(".") and child.name not in hidden:
                    (data / child.name).symlink_to(child, target_is_directory=child.is_dir())
        return notes

    @property
    def work_mb(self) -> int:
        """Return the size of the work folder's tmpfs under bubblewrap (sandbox.disk_mb), 0 where it is a folder."""
        return int(self.cfg["disk_mb"]) if self.backend == "bwrap" else 0

    def _start(self, workdir: Path, preload: tuple[str, ...] = (), script: tuple[str, str] | None = None) -> Started:
        """Start the shim for one script: under bubblewrap its sandbox, launcher and interpreter, waiting for the go.

        script: (name, code), written before the start; where there is no launcher (no bubblewrap, or no tmpfs work
        folder) the script needs it and runs at once. preload: modules the interpreter imports while it waits.
        """
        cfg = self.cfg
        scratch = Path(tempfile.mkdtemp(prefix="dslake-sbx-"))
        scripts = scratch / "scripts"
        launched = bool(self.work_mb)
        try:
            scripts.mkdir()
            (scripts / "sitecustomize.py").write_text(
                READ_TRACER.read_text(encoding="utf-8") + "\n\n" + ENGINE_LIMITS.read_text(encoding="utf-8"),
                encoding="utf-8")
            if script is not None:
                (scripts / script[0]).write_text(script[1], encoding="utf-8")
            if launched:
                shutil.copyfile(LAUNCHER, scripts / "_launch.py")
                shutil.copyfile(WARM, scripts / "_warm.py")
            if self.backend == "bwrap":
                home, tmp = Path(bw.SANDBOX_HOME), Path("/tmp")
                prefix = bw.bwrap_argv(self.bwrap, self.python, workdir, self.lake, int(cfg["tmp_mb"]),
                                       private=self.private, scripts=scripts, shm_mb=int(cfg["memory_mb"]),
                                       masks=self.masks, work_mb=self.work_mb)
                shown_dir = bw.SCRIPTS_MOUNT
            else:
                home, tmp = scratch / "home", scratch / "tmp"
                home.mkdir()
                tmp.mkdir()
                prefix, shown_dir = [], str(scripts)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        if launched:
            # The work folder is a tmpfs that dies with the sandbox: a launcher fills it from the host folder when the
            # script goes, and sends back what the script wrote (workfolder.mirror).
            figures, go = os.pipe(), os.pipe()
            target = prefix + [self.python, "-I", "-S", f"{shown_dir}/_launch.py", str(figures[1]), bw.WORK_IN_MOUNT,
                               str(go[0]), "--", self.python, f"{shown_dir}/_warm.py"]
        else:
            assert script is not None, "a script without a launcher is written before it starts"
            figures, go = (), ()
            target = prefix + [self.python, f"{shown_dir}/{script[0]}"]
        trace_read, trace_write = os.pipe()
        passthrough = [n.strip() for n in str(cfg["env_passthrough"]).split(",") if n.strip()]
        env = script_env(home, tmp, self.python, passthrough)
        env.update(PYTHONPATH=shown_dir, DSLAKE_TRACE_FD=str(trace_write), DSLAKE_TRACE_TOP="1")
        if launched:  # the interpreter traces reads from the go on (_warm.py)
            env.update(DSLAKE_TRACE_LATER="1", DSLAKE_PRELOAD=",".join(preload))
        env.update(engine_env(int(cfg["memory_mb"]), int(cfg["disk_mb"]), self.work_mb))
        cgroup = limits.ScriptCgroup.create(self.max_procs if self.cgroups else 0,
                                            self.memory_mb if self.memory_cgroup else 0)
        nproc = None
        if self.max_procs and os.getuid() != 0:
            nproc = limits.user_tasks(os.getuid()) + self.max_procs
        pids_bound = cgroup is not None and cgroup.pids_path is not None
        watchdog = self.max_procs if self.max_procs and not pids_bound and nproc is None else 0
        read_fd, write_fd = os.pipe()
        shim_cfg = {
            "argv": target,
            "rlimits": limits.rlimits(int(cfg["memory_mb"]), int(cfg["cpu_s"]), int(cfg["file_mb"]), nproc),
            "cgroup_procs": cgroup.procs_files if cgroup else [],
            "watch_procs": watchdog,
            "leader_depth": 1 if self.backend == "bwrap" else 0,  # bwrap's namespace init leads the group
            "unshare_net": self.net_unshare,
            "status_fd": write_fd,
            "parent_pid": os.getpid(),
        }
        child_ends = (write_fd, trace_write, *figures[1:], *go[:1])
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", SHIM, json.dumps(shim_cfg)],
                cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=child_ends, start_new_session=True,
            )
        except BaseException:
            for fd in (read_fd, trace_read, *figures[:1], *go[1:]):
                os.close(fd)
            if cgroup:
                cgroup.destroy()
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        return Started(proc=proc, scratch=scratch, scripts=scripts, shown_dir=shown_dir, workdir=workdir,
                       status=read_fd, trace=trace_read, work=figures[0] if figures else None,
                       go=go[1] if go else None, cgroup=cgroup)

    def _execute(self, started: Started, name: str, code: str, timeout: float,
                 opens: OpenWatch | None = None) -> ExecResult:
        """Let the started script go (if it waits) and see it through: output, limits, the work folder's mirror."""
        cfg, proc, cgroup, workdir = self.cfg, started.proc, started.cgroup, started.workdir
        shown = f"{started.shown_dir}/{name}"
        try:
            started.send(name, code)
            spool = tempfile.TemporaryFile(dir=started.scratch) if started.work is not None else None
        except BaseException:
            started.kill()
            raise
        begun = time.monotonic()
        pump = Pump(proc, started.status, int(cfg["max_output_bytes"]), int(cfg["output_limit_mb"]) * 1024 * 1024,
                    started.trace, (started.work, spool, self.work_mb * 2**20 + 512 * int(cfg["max_files"]) + 2**16)
                    if spool else None, opens)
        # A tmpfs work folder is measured (for max_files) where it lives, in the sandbox's mount namespace;
        # without one, files the script's processes hold open after deleting them count too.
        inside = (lambda: workfolder.inner_folder(pump.target_pid(), workdir)) if spool else None
        tree = (cgroup.pids if cgroup and cgroup.paths else lambda: limits.tree_pids(proc.pid))
        budget = workfolder.DiskBudget(workdir, int(cfg["disk_mb"]), int(cfg["max_files"]), inside=inside,
                                       pids=None if spool else tree)
        peak, oom = None, False
        try:
            stop_reason = pump.run(begun + timeout, budget.check)
        finally:
            if proc.poll() is None:
                pump.stop(cgroup)
            if cgroup:
                peak, oom = cgroup.peak(), cgroup.oom_killed()
                cgroup.destroy()
            if not pump.final_status() and pump.target_pid():
                # The shim died without sweeping (killed by the script): kill the script's group ourselves.
                killpg(pump.target_pid())
            pump.drain(time.monotonic() + DRAIN_S)
        duration = time.monotonic() - begun
        if stop_reason is None and budget.check(force=True):
            stop_reason = "disk"  # the script ended between two measurements, over budget
        if stop_reason is None and oom:
            stop_reason = "memory"  # the kernel killed a process of the tree at the cgroup's limit
        result = self._result(pump, stop_reason, name, duration, peak, shown)
        if spool:
            if result.killed_by != "disk":  # past the budget, what the script wrote goes, as without bwrap
                spool.seek(0)
                workfolder.mirror(spool, workdir, int(cfg["max_files"]))
            spool.close()
        if result.killed_by == "disk":
            result.stderr += budget.explain()
        elif stop_reason == "memory":
            result.stderr += (f"\nsandbox: the kernel killed a process of this script: its processes together "
                              f"held more than {self.memory_mb} MiB (sandbox.memory_mb, files in /dev/shm and /tmp "
                              "included). Use less memory: read in chunks, fewer or smaller workers.\n")
        return result

    def _result(self, pump: Pump, stop_reason: str | None, name: str, duration: float,
                peak: int | None, shown: str) -> ExecResult:
        status = pump.final_status()
        rc, sig = status.get("returncode"), status.get("signal")
        if self.backend == "bwrap" and rc is not None and 128 < rc < 160:
            sig, rc = rc - 128, -(rc - 128)  # bwrap reports a signalled child as 128 + signal
        # Tracebacks name the script as the run record keeps it, not by its private scratch path.
        stderr = pump.err.text().replace(shown, name)
        killed_by = stop_reason or status.get("killed_by") or classify(rc, sig, stderr)
        peak = peak if peak is not None else status.get("peak_procs")
        exited = rc is not None and rc >= 0 and not killed_by and not stop_reason
        reads, trace_problems = read_trace(pump.reads.text(), pump.reads.cut > 0, exited)
        return ExecResult(
            stdout=pump.out.text(), stderr=stderr, returncode=rc, timed_out=stop_reason == "timeout",
            killed_by=killed_by, duration_s=round(duration, 3), lake_modified=[], script_name=name,
            backend=self.backend, stdout_bytes=pump.out.total, stderr_bytes=pump.err.total, peak_procs=peak,
            maxrss_kb=status.get("maxrss_kb"), reads=reads, trace_problems=trace_problems,
        )


LOSS = ("scripts run as plain subprocesses: the lake is not write-protected (changes are detected and abort "
        "the run), and scripts can read your files and may reach the network")


@cache
def _net_unshare_works(python: str) -> bool:
    """Return whether the shim can put a script in its own network namespace here (once per process)."""
    read_fd, write_fd = os.pipe()
    cfg = {"argv": [python, "-I", "-S", "-c", "pass"], "unshare_net": True, "status_fd": write_fd,
           "parent_pid": os.getpid(), "rlimits": {}}
    try:
        done = subprocess.run([sys.executable, "-I", "-S", SHIM, json.dumps(cfg)], pass_fds=(write_fd,),
                              capture_output=True, timeout=30)
        ok = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    finally:
        os.close(write_fd)
        status = b""
        os.set_blocking(read_fd, False)
        try:
            status = os.read(read_fd, 65536)
        except BlockingIOError:
            pass
        os.close(read_fd)
    return ok and b'"returncode": 0' in status
