"""Installed as the script's sitecustomize: report every file the script opens for reading, through an audit hook.

Copied next to the script (its private, read-only folder) and found through PYTHONPATH, so it runs before
the script in the script's own interpreter and in every Python process the script starts that keeps the
descriptor (forked workers do; subprocess closes it unless told close_fds=False). Each path is
written once, absolute, one per line, to the descriptor named by DSLAKE_TRACE_FD; dslake keeps those under
the lake. An audit hook sees Python-level opens (open, io, pandas' readers, numpy.load, zipfile); a native
library that opens a path in C (pyarrow.parquet.read_table given a path) is not seen here: the lake's open watch
(openwatch.py, outside the script) sees those.

The script runs in this same interpreter and can write to the descriptor or close it: the trace is what the
script's Python reported, never proof, and protects nothing. So that a closed channel shows, the script's own
interpreter (DSLAKE_TRACE_TOP, taken out of the environment here so children do not see it) ends the trace with
an END line at exit; dslake marks a run whose trace lacks it or carries lines that are not paths
(dsstar_lake/sandbox/tracecheck.py). Standard library only.
"""

import atexit
import os
import sys

END = "\0end"  # no path holds a NUL byte


def _install() -> None:
    try:
        fd = int(os.environ["DSLAKE_TRACE_FD"])  # left set: Python children the script starts report too
    except (KeyError, ValueError):
        return
    seen = set()
    write, abspath, fspath = os.write, os.path.abspath, os.fspath
    if os.environ.pop("DSLAKE_TRACE_TOP", None):
        top = os.getpid()  # a forked child inherits this handler: only the script's own process ends the trace

        def end() -> None:
            if os.getpid() == top:
                try:
                    write(fd, (END + "\n").encode())
                except OSError:
                    pass

        atexit.register(end)
    writing = os.O_WRONLY | os.O_RDWR

    def hook(event, args):
        if event != "open" or not args:
            return
        path = args[0]
        mode = args[1] if len(args) > 1 else "r"
        flags = args[2] if len(args) > 2 else 0
        if isinstance(path, int):
            return
        if mode is None:  # os.open: only the flags say whether it reads
            if not isinstance(flags, int) or flags & writing:
                return
        elif not isinstance(mode, str) or any(c in mode for c in "wax+"):
            return
        try:
            path = abspath(fspath(path))
            if isinstance(path, bytes):
                path = path.decode("utf-8", "surrogateescape")
        except (TypeError, ValueError):
            return
        if path in seen or len(seen) > 100000:
            return
        seen.add(path)
        try:
            write(fd, (path.replace("\n", "\\n") + "\n").encode("utf-8", "surrogateescape"))
        except OSError:
            pass

    sys.addaudithook(hook)


# A script's interpreter started ahead of its code (_warm.py) turns the trace on itself once the code arrives: the
# modules it imported meanwhile are not the script's reads.
if not os.environ.get("DSLAKE_TRACE_LATER"):
    _install()
