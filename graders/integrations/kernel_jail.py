"""Run nbgrader's notebook kernel so that it sees nothing of the instructor's and reaches nothing but nbgrader.

``python -m graders.integrations.kernel_jail --folder F --connection-file C -- KERNEL COMMAND...`` starts the kernel
command of nbgrader's autograde (``nbgrader_judge.JailedKernelManager`` puts it in front, and gives the kernel
zmq's ``ipc`` transport: its sockets are files in a fresh folder of its own, ``ipc_folder``, never a TCP port):

- as root, with bubblewrap: a filesystem that lists what the kernel may see, and nothing else: the system's
  libraries and the interpreter's folders read-only (``bubblewrap.interpreter_args``; the checkout's folders and
  the graders covered where they lie inside them), its socket folder, a private ``/tmp``, and the notebook's
  folder ``F`` as a private tmpfs holding copies of its files. No network (its own network namespace: nbgrader
  talks to it over the sockets' files), private pid, IPC and UTS namespaces, an environment of a few names; it runs
  as the unprivileged ``nobody``, with no capability;
- as root, without bubblewrap, where a mount namespace can be made: ``nobody`` again, no network, private IPC,
  in a mount namespace of its own where the course folder, every home folder (``/root``, ``/home``, the
  instructor's), the examples cache and the checkout are covered by empty folders (the interpreter and the
  kernel's own folders mounted back), a private ``/tmp``, ``/var/tmp`` and ``/dev/shm``, a ``/proc`` that shows
  only nobody's processes, the notebook's folder a private copy. Everything else any user can read, it can read;
- otherwise (not root, or no mount namespace): no kernel runs the notebook. A kernel that runs no code answers
  nbgrader instead: each cell it is sent gets a line saying why it did not run (``messages.KERNEL_REFUSED_CELL``),
  and nbgrader's log says why and what set-up lets the notebooks run (``refusal``).
  The judge grades the files all the same, so every score stands. A kernel run as the instructor's own uid
  could read everything the instructor can (the examples cache, ``~/.ssh``), in a sandbox or not.

The connection file (the sockets' names and the key, 0600) is read here and handed to the kernel as an in-memory
copy.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import stat
import sys
import tempfile
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.judge import bubblewrap, sandbox

UNPRIVILEGED = "nobody"
MAX_FILE_BYTES = 16 * 2**20
TMP_BYTES = 256 * 2**20  # the kernel's /tmp, and its copy of the notebook's folder: memory, so bounded
IPC_BASE = "/tmp"  # the sockets' folders: short paths (a socket's is at most 107 bytes), searchable by all
IPC_PREFIX = "agl-kernel-"
PATH = "/usr/local/bin:/usr/bin:/bin"
# What the kernel keeps of nbgrader's environment: the locale, the time zone, Jupyter's session names and
# thread counts; never a token, a path of the instructor's or a cache's (JPY_PARENT_PID: ipykernel would
# read pid 1, its jail's, as "nbgrader exited").
KEPT_ENV = re.compile(r"LANG|LANGUAGE|LC_\w+|TZ|JPY_(?!PARENT_PID$)\w+|PYDEVD_\w+|MPLBACKEND|\w+_NUM_THREADS")


def kernel_uid() -> int | None:
    """The uid the kernel runs as: ``nobody``'s where this process is root; None otherwise (no kernel runs)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(UNPRIVILEGED).pw_uid
    except KeyError:
        return 65534


def ipc_folder() -> str:
    """A fresh folder for one kernel's sockets (0700, the kernel's uid's): ``JailedKernelManager`` names the
    sockets ``<folder>/kernel-N`` in the connection file."""
    folder = tempfile.mkdtemp(prefix=IPC_PREFIX, dir=IPC_BASE)
    uid = kernel_uid()
    if uid is not None:
        os.chown(folder, uid, uid)
    return folder


def ipc_of(info: dict) -> str:
    """The sockets' folder named by connection info ``info``: one of ``ipc_folder``'s (a folder, not a link, right
    in IPC_BASE, 0700, owned by the kernel's uid or this process's). Anything else raises ValueError: with no
    network of its own, a kernel on TCP could never be reached."""
    if info.get("transport") != "ipc":
        raise ValueError(msg.KERNEL_NOT_IPC.format(transport=info.get("transport")))
    folder = os.path.dirname(str(info.get("ip", "")))
    try:
        mode = os.lstat(folder)
    except OSError as error:
        raise ValueError(msg.KERNEL_BAD_IPC.format(folder=folder, why=error.strerror)) from None
    ok = (os.path.dirname(folder) == IPC_BASE and os.path.basename(folder).startswith(IPC_PREFIX)
          and stat.S_ISDIR(mode.st_mode) and not mode.st_mode & 0o077
          and mode.st_uid in (os.geteuid(), kernel_uid()))
    if not ok:
        raise ValueError(msg.KERNEL_BAD_IPC.format(folder=folder, why="not a fresh folder of the kernel's own"))
    return folder


def course_root(folder: Path) -> Path:
    """The course folder around a notebook's folder (``autograded/<student>/<assignment>`` in it): the folder
    that holds ``gradebook.db`` or ``nbgrader_config.py``, else the folder three levels up."""
    for parent in folder.parents:
        if (parent / "gradebook.db").exists() or (parent / "nbgrader_config.py").exists():
            return parent
    return folder.parents[2] if len(folder.parents) > 2 else folder.parent


def homes() -> list[str]:
    """Every home folder: the instructor's (``$HOME`` and the password file's), root's, and ``/home``'s."""
    found = [str(Path.home()), "/root", "/home"]
    try:
        found.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    return found


def hidden(folder: Path) -> list[str]:
    """The instructor's folders the kernel must never see, that can lie inside the folders it does see: the course,
    the examples cache, the checkout's folders and the graders' code, but none that holds the interpreter
    (``sandbox.folders_to_cover``)."""
    extra = [course_root(folder), *([str(paths.examples_cache())] if paths.examples_cache() else [])]
    return sandbox.folders_to_cover(extra, keep=bubblewrap.interpreter_paths())


def own_files(folder: Path) -> list[tuple[str, int]]:
    """The regular files at the top of the notebook's folder, each opened (never followed through a link, and
    none larger than MAX_FILE_BYTES): (name, an inheritable descriptor)."""
    found = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= MAX_FILE_BYTES:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
            os.set_inheritable(fd, True)  # bubblewrap reads it
            found.append((entry.name, fd))
    return found


def environment() -> dict[str, str]:
    """The kernel's environment: KEPT_ENV's names of this one, a fixed PATH, and a home in its private /tmp."""
    env = {name: value for name, value in os.environ.items() if KEPT_ENV.fullmatch(name)}
    return {**env, "PATH": PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "IPYTHONDIR": "/tmp/ipython",
            "JUPYTER_RUNTIME_DIR": "/tmp/jupyter", "MPLCONFIGDIR": "/tmp/mpl"}


def bubblewrap_command(folder: Path, connection_fd: int, command: list[str], uid: int | None, ipc: str) -> list[str]:
    """bubblewrap's command line: what the kernel sees is listed here, and nothing else exists for it. The
    connection file is copied from ``connection_fd`` to /tmp/kernel.json."""
    argv = [bubblewrap.BWRAP, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--clearenv", "--proc", "/proc", "--dev", "/dev",
            "--size", str(TMP_BYTES), "--perms", "1777", "--tmpfs", "/tmp"]
    argv += bubblewrap.interpreter_args()
    bound = bubblewrap.interpreter_paths()
    for path in hidden(folder):  # the graders or a checkout inside the interpreter's folders
        if any(path.startswith(b + os.sep) for b in bound):
            argv += ["--size", "4096", "--perms", "0555", "--tmpfs", path]
    argv += ["--bind", ipc, ipc]  # its sockets: the one way in or out
    own = os.path.realpath(folder)
    # The notebook's folder is a private tmpfs holding copies of its files, readable whatever their modes:
    # what the kernel writes there is thrown away with it.
    argv += [*bubblewrap.searchable_parents(own), "--size", str(TMP_BYTES), "--perms", "1777", "--tmpfs", own]
    for name, fd in own_files(folder):
        argv += ["--perms", "0444", "--file", str(fd), os.path.join(own, name)]
    argv += ["--perms", "0444", "--file", str(connection_fd), "/tmp/kernel.json", "--chdir", own]
    for name, value in environment().items():
        argv += ["--setenv", name, value]
    return [*argv, "--", *command] if uid is None else [*argv, *bubblewrap.as_uid_inside(command, uid)]


def covering(folder: Path, ipc: str) -> sandbox.Hiding:
    """Without bubblewrap: the mount namespace's covers. Each home, the course, the examples cache, the checkout's
    folders and the graders are covered by an empty folder; where one holds what the kernel needs (the
    interpreter, its socket folder, the notebook's folder), that is mounted back into the cover, alone. So is
    each folder that keeps nobody from the interpreter (/root, 0700, above a pyenv)."""
    needed = bubblewrap.interpreter_paths()
    kept = [*needed, ipc, os.path.realpath(folder)]
    candidates = [os.path.realpath(p) for p in (*homes(), *hidden(folder), course_root(folder))]
    candidates += [cover for cover, _ in sandbox.reach(needed)]
    covers = sorted({c for c in candidates if os.path.isdir(c) and c != "/"})
    covers = [c for c in covers if not any(c.startswith(o + os.sep) for o in covers)]  # the outermost only
    inside = {c: tuple(k for k in kept if k.startswith(c + os.sep)) for c in covers}
    return sandbox.Hiding(folders=tuple(c for c in covers if not inside[c]),
                          reach=tuple((c, k) for c, k in inside.items() if k))


def drop(folder: Path, uid: int, connection_fd: int, ipc: str) -> None:
    """Without bubblewrap, as root: the covers of ``covering`` in mount, network and IPC namespaces of the
    kernel's own, then private /tmp, /var/tmp and /dev/shm (the socket folder mounted back), a /proc that shows
    nobody only nobody's processes, the notebook's folder a private copy, and last ``uid``."""
    import ctypes

    own = os.path.realpath(folder)
    files = own_files(folder)
    covering(folder, ipc).apply()
    libc = ctypes.CDLL(None, use_errno=True)

    def mount(source: str, target: str, kind: str | None, flags: int, options: str | None) -> None:
        if libc.mount(source.encode(), target.encode(), kind and kind.encode(), flags,
                      options and options.encode()) != 0:
            raise OSError(ctypes.get_errno(), f"the kernel's jail: mount {kind or source} on {target}")

    handle = os.open(ipc, os.O_PATH | os.O_DIRECTORY)
    for shared in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(shared):
            mount("tmpfs", shared, "tmpfs", sandbox._MS_NOSUID | sandbox._MS_NODEV, f"size={TMP_BYTES},mode=1777")
    os.mkdir(ipc, 0o700)
    mount(f"/proc/self/fd/{handle}", ipc, None, sandbox._MS_BIND, None)
    os.close(handle)
    mount("proc", "/proc", "proc", sandbox._MS_NOSUID | sandbox._MS_NODEV, "hidepid=invisible")
    os.umask(0o022)
    os.makedirs(own, exist_ok=True)  # under a private /tmp now, where the course lies in /tmp
    mount("tmpfs", own, "tmpfs", sandbox._MS_NOSUID | sandbox._MS_NODEV, f"size={TMP_BYTES},mode=1777")
    for name, fd in files:
        with open(os.path.join(own, name), "wb") as copy, os.fdopen(fd, "rb") as original:
            copy.write(original.read())
        os.chmod(os.path.join(own, name), 0o444)
    with open("/tmp/kernel.json", "wb") as copy:
        copy.write(os.pread(connection_fd, MAX_FILE_BYTES, 0))
    os.chown("/tmp/kernel.json", uid, -1)
    os.chmod("/tmp/kernel.json", 0o400)
    os.chdir(own)
    sandbox.drop_privileges(sandbox.Isolation(bubblewrap=False, drop=True), uid)()


def jailed_command(folder: Path, connection_file: str, command: list[str]) -> tuple[list[str], int | None, int, str]:
    """The command that runs the kernel ``command`` in its jail, the uid to become first (None: bubblewrap does),
    the connection file's in-memory copy (a memfd, inherited: never written to disk outside the jail) and the
    sockets' folder."""
    uid = kernel_uid()
    data = Path(connection_file).read_bytes()
    ipc = ipc_of(json.loads(data))
    fd = os.memfd_create("kernel.json", 0)
    os.set_inheritable(fd, True)  # read by bubblewrap
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    inside = [arg if arg != connection_file else "/tmp/kernel.json" for arg in command]
    if sandbox.bubblewrap_works():
        return bubblewrap_command(folder, fd, inside, uid, ipc), None, fd, ipc
    return inside, uid, fd, ipc


def refusal() -> tuple[str, str] | None:
    """Why no kernel may run the notebook here, and the one-time set-up that lets one (KERNEL_WHY); None: one may."""
    if os.geteuid() != 0:
        why, setup = msg.KERNEL_WHY["not-root"]
        return why.format(uid=os.geteuid()), setup
    if not (sandbox.bubblewrap_works() or sandbox.namespaces_work()):
        return msg.KERNEL_WHY["no-jail"]
    return None


def describe() -> str:
    """One line for doctor: how nbgrader's kernel runs here (nbgrader_config.py's JailedKernelManager)."""
    refused = refusal()
    if refused is not None:
        return msg.KERNEL_DESCRIBED["refused"].format(why=refused[0], setup=refused[1])
    return msg.KERNEL_DESCRIBED["bubblewrap" if sandbox.bubblewrap_works() else "namespace"]


def refuse(connection_file: str) -> None:
    """Serve nbgrader a kernel that runs nothing: every cell it is sent gets KERNEL_REFUSED_CELL as its output.
    Run from ``/`` with ``-I`` (never the notebook's folder on ``sys.path``), as this process's own user."""
    from ipykernel.kernelapp import IPKernelApp
    from ipykernel.kernelbase import Kernel

    class Refusing(Kernel):
        implementation, implementation_version, banner = "autograd-lab-refusing", "1", ""
        language_info = {"name": "python", "mimetype": "text/x-python", "file_extension": ".py"}

        async def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False,
                             **kwargs):
            if not silent:
                text = msg.KERNEL_REFUSED_CELL.format(uid=os.geteuid())
                self.send_response(self.iopub_socket, "stream", {"name": "stdout", "text": text})
            return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    os.chdir("/")
    IPKernelApp.launch_instance(argv=["-f", connection_file], kernel_class=Refusing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.integrations.kernel_jail")
    parser.add_argument("--folder", required=True, type=Path)
    parser.add_argument("--connection-file", required=True)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    connection_file = os.path.realpath(args.connection_file)
    refused = refusal()
    if refused is not None:
        print(msg.KERNEL_REFUSED.format(why=refused[0], setup=refused[1]), file=sys.stderr)
        refuse(connection_file)
        return 0
    try:
        command, uid, fd, ipc = jailed_command(args.folder, connection_file, args.command)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    if uid is not None:
        drop(args.folder, uid, fd, ipc)
        os.execvpe(command[0], command, environment())
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
