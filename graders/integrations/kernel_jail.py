"""Run a notebook kernel so that what it runs can change nothing but its own outputs.

``python -m graders.integrations.kernel_jail --folder F --connection-file C -- KERNEL COMMAND...`` starts the kernel
command of nbgrader's autograde (``nbgrader_judge.JailedKernelManager`` puts it in front):

- with bubblewrap: the whole filesystem read-only, a private ``/tmp``, private pid and IPC namespaces,
  the network shared (the kernel talks to nbgrader over localhost); the course folder (the gradebook,
  source/, release/, every student's submission), the checkout this package runs from (solutions/) and
  the judge's own code covered by empty folders; the notebook's own folder ``F`` a private tmpfs with
  copies of its files (what the kernel writes there is thrown away); where it runs as root, the kernel
  runs as the unprivileged ``nobody`` and no capability;
- without bubblewrap, as root: the kernel runs as ``nobody``, who can write nothing of the course, in a
  mount namespace where the course folder (but the notebook's own folder) and the checkout are covered;
- otherwise the kernel runs as it is, as the instructor's user, and a line on stderr says so (``doctor``
  too).

The connection file (the kernel's ports and key, 0600) is read here and handed to the kernel as an
in-memory copy.
"""

from __future__ import annotations

import argparse
import os
import pwd
import sys
from pathlib import Path

from graders import messages as msg
from graders.judge import bubblewrap, sandbox

UNPRIVILEGED = "nobody"


def _uid() -> int:
    try:
        return pwd.getpwnam(UNPRIVILEGED).pw_uid
    except KeyError:
        return 65534


def course_root(folder: Path) -> Path:
    """The course folder around a notebook's folder (``autograded/<student>/<assignment>`` in it): the folder
    that holds ``gradebook.db`` or ``nbgrader_config.py``, else the folder three levels up."""
    for parent in folder.parents:
        if (parent / "gradebook.db").exists() or (parent / "nbgrader_config.py").exists():
            return parent
    return folder.parents[2] if len(folder.parents) > 2 else folder.parent


def hidden(folder: Path) -> list[str]:
    """The folders the kernel must not see: the course, the checkout's folders and the judge's code, but none
    that holds the interpreter (the notebook's own folder is mounted back where covered)."""
    return sandbox.folders_to_cover((course_root(folder),), keep=bubblewrap.interpreter_paths())


MAX_FILE_BYTES = 16 * 2**20


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


def bubblewrap_command(folder: Path, connection_fd: int, command: list[str], uid: int | None) -> list[str]:
    """bubblewrap's command line; the connection file is copied from ``connection_fd`` to /tmp/kernel.json."""
    argv = [bubblewrap.BWRAP, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
    for path in hidden(folder):
        argv += ["--perms", "0755", "--tmpfs", path]
    for cover, _ in sandbox.reach(bubblewrap.interpreter_paths()):  # /root (0700) above a pyenv: a searchable cover
        argv += ["--perms", "0755", "--tmpfs", cover]
    for path in bubblewrap.interpreter_paths():  # then the interpreter mounted back (a virtual environment in /tmp)
        for above in reversed(Path(path).parents[:-1]):  # each folder above it searchable
            argv += ["--perms", "0755", "--dir", str(above)]
        argv += ["--ro-bind", path, path]
    own = os.path.realpath(folder)
    # The notebook's folder is a private tmpfs holding copies of its files, readable whatever their modes:
    # what the kernel writes there is thrown away with it.
    argv += ["--perms", "1777", "--tmpfs", own]
    for name, fd in own_files(folder):
        argv += ["--perms", "0444", "--file", str(fd), os.path.join(own, name)]
    argv += ["--perms", "0444", "--file", str(connection_fd), "/tmp/kernel.json",
             # In its own pid namespace the kernel's parent is pid 1, which ipykernel reads as "nbgrader exited":
             # bubblewrap stops the kernel with its parent instead (--die-with-parent).
             "--unsetenv", "JPY_PARENT_PID", "--chdir", own, "--setenv", "HOME", "/tmp",
             "--setenv", "IPYTHONDIR", "/tmp/ipython", "--setenv", "JUPYTER_RUNTIME_DIR", "/tmp/jupyter",
             "--setenv", "MPLCONFIGDIR", "/tmp/mpl"]
    return [*argv, "--", *command] if uid is None else [*argv, *bubblewrap.as_uid_inside(command, uid)]


def jailed_command(folder: Path, connection_file: str, command: list[str]) -> tuple[list[str], int | None]:
    """The command that runs the kernel ``command`` in its jail, and the uid to become first (None: stay).
    The connection file is handed over as an in-memory copy (a memfd, inherited), never written to disk."""
    uid = _uid() if os.geteuid() == 0 else None
    fd = os.memfd_create("kernel.json", 0)
    os.set_inheritable(fd, True)  # read by bubblewrap, or by the kernel itself
    os.write(fd, Path(connection_file).read_bytes())
    os.lseek(fd, 0, os.SEEK_SET)
    if sandbox.bubblewrap_works():
        inside = [arg if arg != connection_file else "/tmp/kernel.json" for arg in command]
        return bubblewrap_command(folder, fd, inside, uid), None
    return [arg if arg != connection_file else f"/proc/self/fd/{fd}" for arg in command], uid


def describe() -> str:
    """One line for doctor: how nbgrader's kernel runs here (nbgrader_config.py's JailedKernelManager)."""
    user = f"as {UNPRIVILEGED}" if os.geteuid() == 0 else "as your own user"
    if sandbox.bubblewrap_works():
        return (f"in bubblewrap, {user}: read-only, the course folder and the graders hidden, its own folder a "
                "private copy")
    if os.geteuid() == 0:
        return f"{user}, in a mount namespace that hides the course folder and the graders (no bubblewrap)"
    return "in no jail: as your own user, it can write the gradebook (install bubblewrap, or autograde as root)"


def drop(folder: Path, uid: int) -> None:
    """Without bubblewrap, as root: a mount namespace of the kernel's own in which the course folder and the
    checkout are covered (the notebook's folder mounted back, the interpreter reachable), then ``uid``."""
    isolation = sandbox.choose("limits")
    course, own = os.path.realpath(course_root(folder)), os.path.realpath(folder)
    hiding = sandbox.Hiding(tuple(f for f in hidden(folder) if f != course), course, own,
                            sandbox.reach(bubblewrap.interpreter_paths()), network=True)
    hiding = hiding if sandbox.namespaces_work() else sandbox.Hiding()
    here = os.getcwd()
    sandbox.drop_privileges(isolation, uid, hiding)()
    os.chdir(here)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.integrations.kernel_jail")
    parser.add_argument("--folder", required=True, type=Path)
    parser.add_argument("--connection-file", required=True)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    command, uid = jailed_command(args.folder, os.path.realpath(args.connection_file), args.command)
    if uid is not None:
        drop(args.folder, uid)
    elif not sandbox.bubblewrap_works():
        print(msg.KERNEL_NOT_JAILED, file=sys.stderr)
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
