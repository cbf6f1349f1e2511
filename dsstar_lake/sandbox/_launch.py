"""Inside bubblewrap: fill the work folder's tmpfs, run the script, then send what it wrote back out.

Runs as `python -I -S _launch.py FD IN_DIR GO_FD -- ARGV...` from the script's private, read-only folder, where
ARGV is the script's interpreter (_warm.py), started at once so that it imports ahead while dslake is busy
elsewhere. The launcher waits for the script's file name on GO_FD (dslake writes it when the script goes; end of
file: the sandbox was not needed, and everything ends), copies the work folder in, then hands the name on to the
interpreter through a pipe of its own. The work folder is a tmpfs of sandbox.disk_mb that exists only in the
sandbox's mount namespace, so the kernel bounds what a script writes there. The run's files live on the host between scripts: IN_DIR is that folder, bound
read-only; it is copied in first (regular files and folders only), and after the script ends every file it
added or changed is sent back through FD, then the list of what is left, so dslake can mirror the folder.
FD is closed in the script. A script that reopens it (/proc/PID/fd, same uid) can only send what it could
write in its own tmpfs anyway, and dslake reads at most the tmpfs's size and max_files entries. A script that
kills this process loses what it wrote, nothing more. Frames: a line "KIND SIZE HEXPATH" per entry (D a
folder, F a file whose SIZE bytes follow, K a file left as it was), and "E 0 -" last. Links and special files
are never carried. Standard library only, and few imports: this runs before every script.
"""

import os
import signal
import stat
import sys

SKIP = ("data",)  # the lake's mount point at the top of the work folder
CHUNK = 1 << 20


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
            rel = rel_dir + "/" + name if rel_dir else name
            try:
                st = os.lstat(os.path.join(top, rel))
            except OSError:
                continue
            yield rel, st
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel)


def stamp(st: os.stat_result) -> tuple:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns  # ctime: a script cannot set it back


def copy_file(src: str, dst: str) -> None:
    """Copy a regular file without following a link at src."""
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            while chunk := os.read(fin, CHUNK):
                os.write(fout, chunk)
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def copy_in(src: str) -> dict:
    """Copy the host's work folder into this one; return path -> stamp of each file as copied."""
    copied = {}
    for rel, st in walk(src):
        try:
            if stat.S_ISDIR(st.st_mode):
                os.makedirs(rel, exist_ok=True)
            elif stat.S_ISREG(st.st_mode):
                copy_file(os.path.join(src, rel), rel)
                os.utime(rel, ns=(st.st_atime_ns, st.st_mtime_ns))
                copied[rel] = stamp(os.lstat(rel))
        except OSError:
            continue
    return copied


def send(fd: int, data: bytes) -> None:
    """Write bytes to fd, all of them."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def header(kind: str, size: int, rel: str) -> bytes:
    return f"{kind} {size} {rel.encode('utf-8', 'surrogateescape').hex()}\n".encode()


def send_file(fd: int, rel: str) -> None:
    """Send a file's frame: exactly the size its header says (zeros if it shrank meanwhile), in chunks."""
    try:
        handle = os.open(rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        left = os.fstat(handle).st_size
        send(fd, header("F", left, rel))
        while left:
            chunk = os.read(handle, min(left, CHUNK)) or bytes(min(left, CHUNK))
            send(fd, chunk)
            left -= len(chunk)
    finally:
        os.close(handle)


def send_back(fd: int, copied: dict) -> None:
    """Send every folder, every file added or changed (with its bytes), and K for the files left as they were."""
    for rel, st in walk("."):
        if stat.S_ISDIR(st.st_mode):
            send(fd, header("D", 0, rel))
        elif stat.S_ISREG(st.st_mode):
            if copied.get(rel) == stamp(st):
                send(fd, header("K", 0, rel))
            else:
                send_file(fd, rel)
    send(fd, b"E 0 -\n")


def read_name(go: int) -> bytes:
    """Return the script's file name line from dslake (b"" when dslake closed the pipe without one)."""
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(go, 4096)
        if not chunk:
            return b""
        line += chunk
    return line


def main() -> None:
    """Start the interpreter, wait for the go, copy in, hand over the script, wait, send back, end as it ended."""
    fd, src, go = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    argv = sys.argv[sys.argv.index("--") + 1:]
    hand_read, hand_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(fd)
            os.close(go)
            os.close(hand_write)
            os.set_inheritable(hand_read, True)
            os.execv(argv[0], [*argv, str(hand_read)])
        finally:
            os._exit(127)
    os.close(hand_read)
    name = read_name(go)
    os.close(go)
    if not name:  # not needed after all: the interpreter sees end of file and leaves; nothing to send back
        os.close(hand_write)
        os.waitpid(pid, 0)
        os.close(fd)
        sys.exit(0)
    copied = copy_in(src)
    try:
        send(hand_write, name)
    except OSError:
        pass  # the interpreter is gone already: its status says how
    os.close(hand_write)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the script's group gets these; this process outlives it to send
    status = os.waitpid(pid, 0)[1]
    try:
        send_back(fd, copied)
    except OSError:
        pass
    os.close(fd)
    if os.WIFSIGNALED(status):
        end_as_killed(os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


def end_as_killed(sig: int) -> None:
    """End this process by the signal that ended the script, so the shim sees the script's own end (a memory
    cgroup's SIGKILL included) and the script's output holds nothing of the launcher's."""
    if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset: signal() refuses them
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal that did not end this process (it cannot, once it ended the script): the shell's code


if __name__ == "__main__":
    main()
