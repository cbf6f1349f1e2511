"""Inside bubblewrap: fill the work folder's tmpfs, run the script, then send what it wrote back out.

Runs as `python -I -S _launch.py FD IN_DIR -- ARGV...` from the script's private, read-only folder. The work
folder is a tmpfs of sandbox.disk_mb that exists only in the sandbox's mount namespace, so the kernel bounds
what a script writes there. The run's files live on the host between scripts: IN_DIR is that folder, bound
read-only; it is copied in first (regular files and folders only), and after the script ends every file it
added or changed is sent back through FD, then the list of what is left, so dslake can mirror the folder.
FD is a pipe to dslake, closed in the script: this process makes itself non-dumpable first, so the script
(same uid, no capabilities) cannot reopen it through /proc/PID/fd. A script that kills this process loses
what it wrote, nothing more. Frames: one JSON line per entry ({"kind": "dir"|"file"|"keep", "path", "size"}),
a file's bytes right after its line, and {"kind": "end"} last. Links and special files are never carried.
Standard library only.
"""

import ctypes
import json
import os
import shutil
import signal
import stat
import sys

PR_SET_DUMPABLE = 4
SKIP = ("data",)  # the lake's mount point at the top of the work folder


def walk(top: str):
    """Yield (relative path, lstat) for every entry below top, top-level SKIP names left out, links not followed."""
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            names = sorted(os.listdir(os.path.join(top, rel_dir) if rel_dir else top))
        except OSError:
            continue
        for name in names:
            if not rel_dir and name in SKIP:
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                st = os.lstat(os.path.join(top, rel))
            except OSError:
                continue
            yield rel, st
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel)


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns  # ctime: a script cannot set it back


def copy_in(src: str) -> dict[str, tuple[int, int, int]]:
    """Copy the host's work folder into this one; return path -> stamp of each file as copied."""
    copied = {}
    for rel, st in walk(src):
        if stat.S_ISDIR(st.st_mode):
            os.makedirs(rel, exist_ok=True)
        elif stat.S_ISREG(st.st_mode):
            try:
                shutil.copyfile(os.path.join(src, rel), rel, follow_symlinks=False)
                os.utime(rel, ns=(st.st_atime_ns, st.st_mtime_ns))
                copied[rel] = _stamp(os.lstat(rel))
            except OSError:
                continue
    return copied


def send(fd: int, header: dict) -> None:
    """Write one frame's JSON line."""
    send_raw(fd, (json.dumps(header) + "\n").encode())


def send_file(fd: int, rel: str) -> None:
    """Send a file's frame: exactly the size its header says (zeros if it shrank meanwhile), read in chunks."""
    try:
        handle = os.open(rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(handle, "rb") as fh:
        size = os.fstat(handle).st_size
        send(fd, {"kind": "file", "path": rel, "size": size})
        left = size
        while left:
            chunk = fh.read(min(left, 1 << 20)) or b"\0" * min(left, 1 << 20)
            send_raw(fd, chunk)
            left -= len(chunk)


def send_raw(fd: int, data: bytes) -> None:
    """Write bytes to fd, all of them."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def send_back(fd: int, copied: dict[str, tuple[int, int, int]]) -> None:
    """Send every folder, every file added or changed (with its bytes), and 'keep' for the files left as they were."""
    for rel, st in walk("."):
        if stat.S_ISDIR(st.st_mode):
            send(fd, {"kind": "dir", "path": rel})
        elif stat.S_ISREG(st.st_mode):
            if copied.get(rel) == _stamp(st):
                send(fd, {"kind": "keep", "path": rel})
            else:
                send_file(fd, rel)
    send(fd, {"kind": "end"})


def main() -> None:
    """Copy in, start the script, wait for it, send back, and end the way it ended."""
    fd, src = int(sys.argv[1]), sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    copied = copy_in(src)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(fd)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the script's group gets these; this process outlives it to send
    status = os.waitpid(pid, 0)[1]
    try:
        send_back(fd, copied)
    except OSError:
        pass
    os.close(fd)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
