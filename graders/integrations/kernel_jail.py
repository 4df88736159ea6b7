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
- otherwise (not root, or no bubblewrap): no kernel runs the notebook (deny by default: a kernel runs only
  where its filesystem can be a list of what it sees). A kernel that runs no code answers
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
from graders.isolation import bubblewrap, sandbox

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
    argv += bubblewrap.covers(hidden(folder))  # the graders or a checkout inside the interpreter's folders
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


def jailed_command(folder: Path, connection_file: str, command: list[str]) -> list[str]:
    """The bubblewrap command that runs the kernel ``command`` in its jail as ``nobody``. The connection file goes
    in as an in-memory copy (a memfd bubblewrap reads: never written to disk outside the jail)."""
    data = Path(connection_file).read_bytes()
    ipc = ipc_of(json.loads(data))
    fd = os.memfd_create("kernel.json", 0)
    os.set_inheritable(fd, True)  # read by bubblewrap
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    inside = [arg if arg != connection_file else "/tmp/kernel.json" for arg in command]
    return bubblewrap_command(folder, fd, inside, kernel_uid(), ipc)


def refusal() -> tuple[str, str] | None:
    """Why no kernel may run the notebook here, and the one-time set-up that lets one (KERNEL_WHY); None: one may.
    Deny by default: the kernel runs only where its filesystem can be a list of what it sees (bubblewrap), as an
    unprivileged user (root's to switch to)."""
    if os.geteuid() != 0:
        why, setup = msg.KERNEL_WHY["not-root"]
        return why.format(uid=os.geteuid()), setup
    if not sandbox.bubblewrap_works():
        return msg.KERNEL_WHY["no-bubblewrap"]
    return None


def describe() -> str:
    """One line for doctor: how nbgrader's kernel runs here (nbgrader_config.py's JailedKernelManager)."""
    refused = refusal()
    if refused is not None:
        return msg.KERNEL_DESCRIBED["refused"].format(why=refused[0], setup=refused[1])
    return msg.KERNEL_DESCRIBED["bubblewrap"]


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
    """The kernel's jail as nbgrader starts it: run the kernel command in bubblewrap (exec, so nbgrader's signals reach
    it), or, where no kernel may run, serve the refusing kernel and say why on stderr; 2 for connection info that is not
    a fresh ipc folder."""
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
        command = jailed_command(args.folder, connection_file, args.command)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
