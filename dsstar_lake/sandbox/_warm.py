"""Inside bubblewrap: the script's own interpreter, started before its code is known, so it can import ahead.

Runs as `python _warm.py GO_FD` from the script's private, read-only folder (its sitecustomize beside it), started
by _launch.py inside the script's own sandbox. It imports the modules named in DSLAKE_PRELOAD (pandas) while dslake
is still retrieving, or while the previous script runs, then waits on GO_FD. The launcher writes the script's file
name there once it has copied the work folder in; this process then turns the read trace on and runs the script as
`python SCRIPT` would: a fresh `__main__` module, `sys.argv == [SCRIPT]`, its folder first on `sys.path`, the
traceback of an uncaught error printed without this file's and runpy's frames, and exit status 1 for it. End of the line, no
name (the sandbox was not needed after all): exit at once. Standard library only.
"""

import gc
import importlib
import os
import runpy
import sys


def preload() -> None:
    """Import what the run's scripts nearly always import; a failure is left for the script's own import to show."""
    # The collector is off meanwhile: nearly everything an import makes lives on (modules, classes, functions),
    # so the collections it would trigger (dozens, one or two over every object) find almost nothing: ~0.1 CPU-s of a
    # pandas import. The few hundred cyclic leftovers of the imports stay, frozen with the rest, below.
    gc.disable()
    try:
        for name in filter(None, os.environ.pop("DSLAKE_PRELOAD", "").split(",")):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S110 - the script's own `import` reports it where it belongs
                pass
    finally:
        # What was imported stays for the life of the process: out of the collector's sight, the script's
        # collections and the interpreter's last one at exit skip it (about 0.35 s less at exit once pandas is in;
        # the script's own objects are collected as ever, the collector being on again when it runs).
        gc.freeze()
        gc.enable()


def wait_for_script(go: int) -> str | None:
    """Block until the launcher names the script; None when it closed the pipe instead."""
    with os.fdopen(go, "rb") as fh:
        name = fh.readline().decode("utf-8", "surrogateescape").strip()
    if not name or "/" in name or name in (".", ".."):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def trace_reads() -> None:
    """Turn on the read trace (_readtrace.py, in the sitecustomize) now: the preloaded modules are not the script's."""
    os.environ.pop("DSLAKE_TRACE_LATER", None)
    install = getattr(sys.modules.get("sitecustomize"), "_install", None)
    if install is not None:
        install()


def run(path: str) -> None:
    """Run the file at path as the __main__ module, the way `python path` does (runpy, as `python -m` does)."""
    sys.argv[:] = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - printed as Python prints an uncaught error, less our frames
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next  # this file's and runpy's frames; none is left for a syntax error, as with `python path`
        exc.__traceback__ = tb
        sys.excepthook(type(exc), exc, tb)
        sys.exit(1)


if __name__ == "__main__":
    go_fd = int(sys.argv[1])
    preload()
    script = wait_for_script(go_fd)
    if script is None:
        os._exit(0)
    trace_reads()
    run(script)
