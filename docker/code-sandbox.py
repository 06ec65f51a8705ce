"""`docker` in the training image: the sandbox a code verifier asks for, without a Docker daemon.

The trainer's code verifiers (HumanEval, MBPP) run model-written code. Their executor probes
`docker version`, then runs each snippet as

    timeout T docker run --rm --network=none --read-only --tmpfs=/tmp:size=S,mode=1777 --memory=M
      --cpus=C --pids-limit=P --cap-drop=ALL --security-opt=no-new-privileges --user=U:G
      [--name NAME] [-v FILE:/code.py:ro] IMAGE timeout T python (/code.py | -c CODE)

and, on a timeout, `docker kill NAME` and `docker inspect NAME` until the container is gone. Without a
`docker` on PATH it falls back to running the code as root in the job itself, beside the checkpoints.
A SageMaker training container has no daemon and may not make namespaces: Docker's default seccomp
profile refuses unshare() and clone() of every namespace to a container without CAP_SYS_ADMIN (user,
mount, pid and network alike), and the container has no cgroup it may write. It keeps CAP_SETUID,
CAP_SETGID, CAP_SYS_CHROOT and CAP_MKNOD, and seccomp filters and rlimits need no privilege. So each
`docker run` here is honoured by what those allow:

- a user of its own: an unprivileged uid from a private range, a different one for each sandbox running
  at once, so it can signal nothing of the job's (root) and nothing of another sandbox's;
- its own root: chroot into a tree that holds only the interpreter, its standard library and the
  libraries they load, all owned by root (`--read-only`); /tmp is the one writable folder, bounded by
  the tmpfs size; the job's files, /proc and the checkpoints are not in it;
- `--network=none`: a seccomp filter refuses socket() (EACCES), so no connection to the job's own
  services on loopback (Ray's dashboard, its object store) is possible either;
- `--memory`: RLIMIT_AS per process, and the anonymous memory of all its processes together watched;
- `--pids-limit`: RLIMIT_NPROC (per uid, so per sandbox); `--cpus`: its processes are stopped whenever
  they have used more than that rate (as cpulimit does), and RLIMIT_CPU bounds each at cpus × T seconds;
  they run at the job's own priority, as Docker runs a container (a lower one would starve them on a
  busy host until their timeout, and turn correct code into a failed verification);
- `--cap-drop=ALL`, `no-new-privileges`: no capability after the uid change, an empty bounding set and
  PR_SET_NO_NEW_PRIVS;
- when it ends, times out or is killed, every process of its uid is killed and its files removed.

Its stdout and stderr reach the caller, each cut at 1 MiB: the verifier keeps them in memory. Any other
use of `docker` (another command, a flag not listed, a mount other than the code file, a command other
than python) is refused with exit 125, as the Docker CLI refuses a bad flag. The IMAGE is not pulled:
the code runs on the job's own Python, with its standard library only (what python:*-slim holds).
"""

import ctypes
import errno
import fcntl
import json
import math
import os
import re
import resource
import secrets
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time

STATE = "/run/rlvr-sandbox"
ROOT = "/var/lib/rlvr-sandbox/root"
# Sandbox users: far above any account an image defines, one per slot (a sandbox running at once).
UID_BASE = 1_500_000_000
SLOTS = 512
OUTPUT_CAP = 1 << 20
CODE_CAP = 16 << 20
POLL = 0.05
TEMPLATE_VERSION = "1"
USAGE = 125


def refuse(message):
    sys.stderr.write("docker: %s\n" % message)
    sys.stderr.write(
        "This `docker` is the rlvr job's code sandbox: it runs `docker run` as a code verifier asks"
        " (see its header), and `docker version`, `kill` and `inspect`; nothing else.\n"
    )
    sys.exit(USAGE)


# ---- the request ---------------------------------------------------------------------------------

UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size(text, flag, low, high):
    m = re.fullmatch(r"(\d{1,12})([bkmg]?)", text.strip().lower())
    if not m:
        refuse("%s: %r is not a size (a number with b, k, m or g)" % (flag, text))
    value = int(m.group(1)) * UNITS[m.group(2)]
    if not low <= value <= high:
        refuse("%s: %s is outside %d..%d bytes" % (flag, text, low, high))
    return value


def number(text, flag, low, high):
    if not re.fullmatch(r"\d{1,6}(\.\d{1,6})?", text):
        refuse("%s: %r is not a number" % (flag, text))
    value = float(text)
    if not low <= value <= high:
        refuse("%s: %s is outside %g..%g" % (flag, text, low, high))
    return value


VALUE_FLAGS = {
    "--network": "network", "--net": "network", "--tmpfs": "tmpfs", "--memory": "memory", "-m": "memory",
    "--cpus": "cpus", "--pids-limit": "pids", "--cap-drop": "cap_drop", "--security-opt": "security",
    "--user": "user", "-u": "user", "--name": "name", "-v": "volume", "--volume": "volume",
}
BOOL_FLAGS = {"--rm": "rm", "--read-only": "read_only"}


def parse_run(args):
    seen = {"security": [], "volume": []}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        flag, eq, value = arg.partition("=")
        if flag in BOOL_FLAGS and (not eq or value == "true"):
            seen[BOOL_FLAGS[flag]] = True
        elif flag in VALUE_FLAGS:
            if not eq:
                i += 1
                if i >= len(args):
                    refuse("%s needs a value" % flag)
                value = args[i]
            key = VALUE_FLAGS[flag]
            if key in ("security", "volume"):
                seen[key].append(value)
            elif key in seen:
                refuse("%s given twice" % flag)
            else:
                seen[key] = value
        else:
            refuse("unknown flag %r" % arg)
        i += 1
    if i >= len(args):
        refuse("`docker run` needs an image")
    image, command = args[i], args[i + 1:]
    if not re.fullmatch(r"[a-z0-9][a-z0-9._/:@-]{0,254}", image):
        refuse("%r is not an image reference" % image)

    # What the sandbox always does, asked for explicitly: a run that asks for less is not what a
    # verifier sends, so it is refused rather than silently given more than it asked.
    for key, want, flag in (
        ("network", "none", "--network=none"),
        ("cap_drop", "ALL", "--cap-drop=ALL"),
    ):
        if seen.get(key) != want:
            refuse("a sandboxed run needs %s" % flag)
    if not seen.get("read_only"):
        refuse("a sandboxed run needs --read-only")
    if seen["security"] != ["no-new-privileges"] and seen["security"] != ["no-new-privileges:true"]:
        refuse("a sandboxed run needs --security-opt=no-new-privileges and no other --security-opt")
    user = seen.get("user", "")
    if not re.fullmatch(r"[1-9]\d{0,9}(:[1-9]\d{0,9})?", user):
        refuse("a sandboxed run needs --user=UID:GID with a non-root numeric user, not %r" % user)

    request = {
        "name": seen.get("name"),
        "memory": size(seen.get("memory", "256m"), "--memory", 16 << 20, 64 << 30),
        "cpus": number(seen.get("cpus", "1"), "--cpus", 0.01, 256),
        "pids": int(number(seen.get("pids", "64"), "--pids-limit", 1, 4096)),
        "tmpfs": 64 << 20,
        "code_file": None,
    }
    if request["name"] is not None and not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}", request["name"]):
        refuse("--name %r is not a container name" % request["name"])
    tmpfs = seen.get("tmpfs")
    if tmpfs is not None:
        target, _, options = tmpfs.partition(":")
        if target != "/tmp":
            refuse("--tmpfs: only /tmp is writable in the sandbox, not %r" % target)
        for option in filter(None, options.split(",")):
            key, _, value = option.partition("=")
            if key == "size":
                request["tmpfs"] = size(value, "--tmpfs size", 1 << 20, 4 << 30)
            elif key != "mode":
                refuse("--tmpfs: unknown option %r" % option)
    for volume in seen["volume"]:
        parts = volume.split(":")
        if len(parts) != 3 or parts[1] != "/code.py" or parts[2] != "ro" or not parts[0].startswith("/"):
            refuse("-v: only FILE:/code.py:ro (the code to run) is mounted, not %r" % volume)
        if request["code_file"] is not None:
            refuse("-v: one code file only")
        request["code_file"] = parts[0]

    timeout = None
    if command[:1] == ["timeout"]:
        if len(command) < 2:
            refuse("timeout needs a duration")
        timeout = number(command[1].rstrip("s"), "timeout", 0.01, 86_400)
        command = command[2:]
    if command[:1] not in (["python"], ["python3"]):
        refuse("the sandbox runs python, not %r" % " ".join(command[:1]))
    if command[1:] == ["/code.py"]:
        if request["code_file"] is None:
            refuse("/code.py is not mounted (-v FILE:/code.py:ro)")
        request["mode"] = "file"
        request["code"] = read_code(request["code_file"])
    elif len(command) == 3 and command[1] == "-c":
        request["mode"] = "inline"
        request["code"] = command[2]
    else:
        refuse("the sandbox runs `python /code.py` or `python -c CODE`, not %r" % " ".join(command))
    request["timeout"] = timeout
    return request


# ---- the root the code sees ------------------------------------------------------------------------


def loader_list(path):
    """The shared objects `path` loads, as the dynamic loader resolves them (what ldd prints)."""
    loaders = [p for p in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1") if os.path.exists(p)]
    found = set(loaders)
    for loader in loaders[:1]:
        out = subprocess.run([loader, "--list", path], capture_output=True, text=True).stdout
        found.update(m for m in re.findall(r"=> (/\S+)", out))
    return found


def build_root():
    """The tree the code is chrooted into: the interpreter at its own path (so it finds its standard
    library without help), the standard library without site-packages, the libraries they load, /dev's
    harmless devices and a /tmp. Built once per job, under a lock, into a fresh folder then renamed."""
    done = os.path.join(ROOT, ".complete")
    if os.path.exists(done):
        return
    os.makedirs(STATE, mode=0o700, exist_ok=True)
    with open(os.path.join(STATE, "root.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(done):
            return
        parent = os.path.dirname(ROOT)
        os.makedirs(parent, mode=0o755, exist_ok=True)
        shutil.rmtree(ROOT, ignore_errors=True)
        work = "%s.%s" % (ROOT, secrets.token_hex(8))
        interpreter = os.path.realpath(sys.executable)
        stdlib = os.path.dirname(os.__file__)

        def put(src):
            dest = work + src
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(src, dest, follow_symlinks=True)

        put(interpreter)
        objects = [interpreter]
        skip = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip"}
        for top, dirs, files in os.walk(stdlib):
            dirs[:] = [d for d in dirs if not (top == stdlib and (d in skip or d.startswith("config-")))]
            for f in files:
                put(os.path.join(top, f))
                if f.endswith(".so"):
                    objects.append(os.path.join(top, f))
        libraries = set()
        for obj in objects:
            libraries |= loader_list(obj)
        for lib in libraries:
            put(lib)
        for d in ("tmp", "dev", "etc", "usr/local/bin", ".code"):
            os.makedirs(os.path.join(work, d), exist_ok=True)
        for name in ("python", "python3"):
            os.symlink(interpreter, os.path.join(work, "usr/local/bin", name))
        for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
            try:
                os.mknod(os.path.join(work, "dev", name), 0o666 | stat.S_IFCHR, os.makedev(1, minor))
            except OSError:
                pass  # no CAP_MKNOD: the code runs without these devices
        os.symlink("../tmp", os.path.join(work, "dev/shm"))
        with open(os.path.join(work, "etc/passwd"), "w") as f:
            f.write("root:x:0:0:root:/root:/bin/false\n")
        with open(os.path.join(work, ".libraries"), "w") as f:
            f.write(":".join(sorted({os.path.dirname(lib) for lib in libraries})))
        for top, dirs, files in os.walk(work):
            for name in dirs + files:
                p = os.path.join(top, name)
                os.lchown(p, 0, 0)
                if not os.path.islink(p):
                    mode = os.lstat(p).st_mode
                    os.chmod(p, (mode & 0o555) | (0o111 if stat.S_ISDIR(mode) else 0))
        os.chmod(os.path.join(work, "tmp"), 0o1777)
        os.chmod(os.path.join(work, ".code"), 0o711)
        os.chmod(work, 0o755)
        with open(os.path.join(work, ".complete"), "w") as f:
            f.write(TEMPLATE_VERSION)
        os.rename(work, ROOT)


# ---- slots, processes and files of a sandbox user ------------------------------------------------


def take_slot():
    os.makedirs(os.path.join(STATE, "slots"), mode=0o700, exist_ok=True)
    for slot in range(SLOTS):
        fd = os.open(os.path.join(STATE, "slots", str(slot)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return slot, fd
        except BlockingIOError:
            os.close(fd)
    sys.stderr.write("docker: %d sandboxes already running\n" % SLOTS)
    sys.exit(USAGE)


def sweep(uid):
    """Kill every process of `uid`, wherever it was forked from, reaping what comes back to us. (kill(-1)
    succeeds whenever the container has any other process, so /proc is what says when it is done.)"""
    for _ in range(200):
        reap_all()
        if not [pid for pid in processes_of(uid) if not zombie(pid)]:
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        while os.waitpid(-1, 0)[0] != pid:
            pass
        time.sleep(0.002)


def zombie(pid):
    try:
        with open("/proc/%s/stat" % pid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True


def reap_all(child=None):
    """Reaps every process that has ended: orphans of the sandbox come to us (the subreaper). The
    sandboxed child's status, when reaped here, is given to its Popen."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if child is not None and pid == child.pid:
            child.returncode = os.waitstatus_to_exitcode(status)


def processes_of(uid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat("/proc/" + entry).st_uid == uid:
                    pids.append(entry)
            except OSError:
                pass
    return pids


def resident_bytes(pids):
    """Anonymous memory the processes hold (resident minus file-backed, from statm: smaps would count
    shared pages once, but reading it for another user needs CAP_SYS_PTRACE, which a container lacks).
    A page shared after fork counts in each process that holds it."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            with open("/proc/%s/statm" % pid, "rb") as f:
                fields = f.read().split()
            total += (int(fields[1]) - int(fields[2])) * page
        except (OSError, IndexError, ValueError):
            pass
    return total


def files_of(uid, top, limit=20_000):
    """Bytes the sandbox user owns under `top`, and whether the walk stayed within `limit` entries."""
    used, seen = 0, 0
    stack = [top]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for e in entries:
                seen += 1
                if seen > limit:
                    return used, False
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_uid == uid:
                    used += st.st_blocks * 512
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return used, True


def remove_files_of(uid, top):
    for e in os.scandir(top):
        try:
            if e.stat(follow_symlinks=False).st_uid != uid:
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                os.unlink(e.path)
        except OSError:
            pass


# ---- the sandboxed process -----------------------------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_CHILD_SUBREAPER = 38, 24, 22, 36
SECCOMP_MODE_FILTER = 2
ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}  # (AUDIT_ARCH_*, __NR_socket)


def deny_sockets():
    """A seccomp filter: socket() fails with EACCES; a call from another ABI (x32, i386) is refused too."""
    arch, socket_nr = ARCHES[os.uname().machine]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EACCES
    program = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, deny),
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, 1, 0, 0x40000000),  # x32 system calls
        (jeq, 0, 1, socket_nr),
        (ret, 0, 0, deny),
        (ret, 0, 0, allow),
    ]
    raw = b"".join(struct.pack("HBBI", *insn) for insn in program)
    buf = ctypes.create_string_buffer(raw)
    prog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(buf))
    prog_buf = ctypes.create_string_buffer(prog)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog_buf), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter")


def confine(uid, limits):
    """Runs in the child between fork and exec: the order matters (chroot and the bounding set need the
    capabilities the uid change then drops)."""

    def run():
        os.setsid()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        os.chroot(ROOT)
        os.chdir("/")
        for cap in range(64):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
                break
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs")
        deny_sockets()
        # Last: the memory limit may be below what this (forked) process already maps.
        for name, value in limits:
            resource.setrlimit(getattr(resource, name), value)
        os.umask(0o077)

    return run


def run(request):
    build_root()
    slot, slot_fd = take_slot()
    uid = UID_BASE + slot
    name_file = None
    code_path = None
    sweep(uid)
    remove_files_of(uid, os.path.join(ROOT, "tmp"))
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    stopping = {"signal": None}

    def stop(signum, _frame):
        stopping["signal"] = signum

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    try:
        if request["name"]:
            names = os.path.join(STATE, "names")
            os.makedirs(names, mode=0o700, exist_ok=True)
            path = os.path.join(names, request["name"])
            earlier = named(request["name"])
            if earlier is not None and earlier[0] is not None:
                sys.stderr.write("docker: Conflict. The container name %r is already in use.\n" % request["name"])
                return USAGE
            if earlier is not None:
                kill(request["name"])  # a supervisor killed outright left its name: what it left goes now
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.write(fd, ("%d %d" % (os.getpid(), uid)).encode())
            os.close(fd)
            name_file = path
        argv_python = ["/usr/local/bin/python", "-s"]
        if request["mode"] == "file":
            code = request["code"]
            code_path = "/.code/%s.py" % secrets.token_hex(16)
            fd = os.open(ROOT + code_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
            os.write(fd, code)
            os.close(fd)
            argv = argv_python + [code_path]
        else:
            argv = argv_python + ["-c", request["code"]]
        timeout = request["timeout"]
        # CPU time a little past what --cpus allows in the time given: the timeout, not SIGXCPU, ends
        # a snippet that spins, so it is reported as timed out.
        cpu_seconds = math.ceil(request["cpus"] * (timeout if timeout else 3600)) + 2
        limits = [
            ("RLIMIT_AS", (request["memory"], request["memory"])),
            ("RLIMIT_NPROC", (request["pids"], request["pids"])),
            ("RLIMIT_CPU", (cpu_seconds, cpu_seconds + 1)),
            ("RLIMIT_FSIZE", (request["tmpfs"], request["tmpfs"])),
            ("RLIMIT_NOFILE", (256, 256)),
            ("RLIMIT_CORE", (0, 0)),
        ]
        with open(os.path.join(ROOT, ".libraries")) as f:
            library_path = f.read()
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONUTF8": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "LD_LIBRARY_PATH": library_path,
        }
        try:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                close_fds=True,
                preexec_fn=confine(uid, limits),
            )
        except (OSError, subprocess.SubprocessError) as e:
            sys.stderr.write("docker: the sandbox could not start: %s\n" % e)
            return USAGE
        return supervise(child, uid, request, stopping)
    finally:
        sweep(uid)
        remove_files_of(uid, os.path.join(ROOT, "tmp"))
        if code_path:
            try:
                os.unlink(ROOT + code_path)
            except OSError:
                pass
        if name_file:
            try:
                os.unlink(name_file)
            except OSError:
                pass
        os.close(slot_fd)


def read_code(path):
    """The mounted code file: a regular file, never through a link, within CODE_CAP."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        refuse("-v %s: %s" % (path, e.strerror))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            refuse("-v %s: not a regular file" % path)
        if st.st_size > CODE_CAP:
            refuse("-v %s: %d bytes, over the %d-byte limit for code" % (path, st.st_size, CODE_CAP))
        chunks, left = [], CODE_CAP
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class Throttle:
    """--cpus as a rate: when the sandbox's processes used more CPU than `cpus` per second since the
    last look, all of them are stopped (SIGSTOP) for the excess, as cpulimit does without a cgroup. So a
    fork bomb takes one core, not every core from the sandboxes beside it."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, cpus, now):
        self.cpus, self.last, self.seen = cpus, now, {}

    def hold(self, pids, now):
        used, current = 0, {}
        for pid in pids:
            try:
                with open("/proc/%s/stat" % pid, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                ticks = int(fields[11]) + int(fields[12])  # utime, stime
            except (OSError, IndexError, ValueError):
                continue
            current[pid] = ticks
            used += max(0, ticks - self.seen.get(pid, 0))
        self.seen = current
        excess = used / self.TICK / self.cpus - (now - self.last)
        self.last = now
        if excess <= 0.01:
            return
        for pid in current:
            try:
                os.kill(int(pid), signal.SIGSTOP)
            except OSError:
                pass
        time.sleep(min(excess, 1.0))
        for pid in current:
            try:
                os.kill(int(pid), signal.SIGCONT)
            except OSError:
                pass
        self.last = time.monotonic()


def supervise(child, uid, request, stopping):
    """Relays the output (each stream cut at OUTPUT_CAP), enforces the time, the memory of all the
    sandbox's processes and its /tmp, and returns the exit code `docker run` gives."""
    streams = {child.stdout.fileno(): [sys.stdout.buffer, 0], child.stderr.fileno(): [sys.stderr.buffer, 0]}
    for fd in streams:
        os.set_blocking(fd, False)
    started = time.monotonic()
    timeout = request["timeout"]
    verdict = None
    last_check = 0.0
    tmp = os.path.join(ROOT, "tmp")
    throttle = Throttle(request["cpus"], started)
    while streams or child.poll() is None:
        if stopping["signal"] is not None:
            verdict = 128 + stopping["signal"]
            break
        readable, _, _ = select.select(list(streams), [], [], POLL) if streams else ([], [], [])
        if not streams:
            time.sleep(POLL)
        for fd in readable:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                del streams[fd]
                continue
            out, written = streams[fd]
            room = OUTPUT_CAP - written
            if room > 0:
                out.write(data[:room])
                out.flush()
                if len(data) > room:
                    out.write(b"\n[sandbox: output cut at 1 MiB]\n")
                    out.flush()
            streams[fd][1] = written + len(data)
        reap_all(child)
        now = time.monotonic()
        if timeout is not None and now - started > timeout:
            verdict = 124
            break
        if now - last_check >= 0.1:
            last_check = now
            pids = processes_of(uid)
            throttle.hold(pids, now)
            if resident_bytes(pids) > request["memory"]:
                sys.stderr.write("[sandbox: killed: over --memory=%d bytes]\n" % request["memory"])
                verdict = 137
                break
            used, bounded = files_of(uid, tmp)
            if used > request["tmpfs"] or not bounded:
                sys.stderr.write("[sandbox: killed: /tmp over its size]\n")
                verdict = 137
                break
    sys.stderr.flush()
    if verdict is not None:
        sweep(uid)
        return verdict
    code = child.returncode
    return 128 - code if code < 0 else code



# ---- the commands --------------------------------------------------------------------------------


def named(name):
    """The sandbox a --name names: (its supervisor's pid, or None when that is gone; its uid), or None."""
    if not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}", name):
        return None
    try:
        fd = os.open(os.path.join(STATE, "names", name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd) as f:
            pid, uid = (int(x) for x in f.read(64).split())
    except (OSError, ValueError):
        return None
    if not UID_BASE <= uid < UID_BASE + SLOTS:
        return None
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            supervising = b"code-sandbox.py\0run\0" in f.read()
    except OSError:
        supervising = False
    return (pid if supervising else None), uid


def orphans(uid, then):
    """With the slot of `uid` free (held while `then` runs), the processes its supervisor, killed
    outright, left: `then(pids)`; None when the slot is another run's now (which swept it at its start)."""
    fd = os.open(os.path.join(STATE, "slots", str(uid - UID_BASE)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        return then([p for p in processes_of(uid) if not zombie(p)])
    finally:
        os.close(fd)


def kill(name):
    """`docker kill`: the supervisor is told to stop (it kills its processes and removes its files); if
    it was killed outright, what it left is killed here."""
    found = named(name)
    if found is None:
        return False
    pid, uid = found
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        return True

    def clear(pids):
        sweep(uid)
        remove_files_of(uid, os.path.join(ROOT, "tmp"))
        try:
            os.unlink(os.path.join(STATE, "names", name))
        except OSError:
            pass
        return bool(pids)

    return bool(orphans(uid, clear))


def running(name):
    found = named(name)
    if found is None:
        return None
    pid, uid = found
    return found if pid is not None or orphans(uid, bool) else None


def main(argv):
    if os.geteuid() != 0:
        refuse("the sandbox needs the job's root user to make an unprivileged one")
    if not argv:
        refuse("no command")
    command, args = argv[0], argv[1:]
    if command == "version" and not args:
        print("Client: rlvr code sandbox\n Version: %s\nServer: none (each run is a chroot, see `head %s`)"
              % (TEMPLATE_VERSION, sys.argv[0]))
        return 0
    if command == "run":
        return run(parse_run(args))
    if command in ("kill", "inspect") and len(args) == 1:
        found = running(args[0])
        alive = found is not None and (command != "kill" or kill(args[0]))
        if not alive:
            sys.stderr.write("Error: No such container: %s\n" % args[0])
            return 1
        if command == "kill":
            print(args[0])
        else:
            print(json.dumps([{"Name": "/" + args[0], "State": {"Running": True, "Pid": found[0]}}]))
        return 0
    refuse("%r is not a sandbox command" % " ".join(argv[:2]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
