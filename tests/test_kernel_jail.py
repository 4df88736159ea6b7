"""nbgrader's kernel sees nothing of the instructor's: the real jail command (``python -I -m
graders.integrations.kernel_jail``, as ``JailedKernelManager`` starts it), with a probe in the kernel's place.

Each test plants an instructor's files of its own (a home with ``.ssh``, an examples cache, a course with a
gradebook and a classmate's files), points the jail's environment at them, and opens a TCP listener on
127.0.0.1: the probe must reach none of it, and must read its own notebook's copy. As root with bubblewrap, and
with bubblewrap out of PATH (a mount namespace); then as an instructor who is not root (a uid of its own, set
before the jail starts), where no notebook code may run at all.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graders import messages
from graders.integrations import kernel_jail
from graders.isolation import sandbox

SECRET = "instructor-secret-7f3a"
# The kernel's stand-in: tries everything an attacking notebook would, and prints what it got as JSON.
PROBE = r'''
import json, os, socket, sys
connection, port, *secrets = sys.argv[1:]
said = {"uid": os.getuid()}
def attempt(name, action):
    try:
        said[name] = ["done", action()]
    except Exception as error:
        said[name] = [type(error).__name__, str(error)]
for path in secrets:
    attempt(path, lambda path=path: open(path).read() if os.path.isfile(path) else sorted(os.listdir(path)))
attempt("/", lambda: sorted(os.listdir("/")))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=3).getpeername())
attempt("own", lambda: open("tensor.py").read())
attempt("own-write", lambda: open("tensor.py", "a").write("x") and "written")
attempt("connection", lambda: json.load(open(connection))["transport"])
attempt("environ", lambda: sorted(v for v in os.environ.values() if "instructor" in v))
print("PROBE " + json.dumps(said))
'''


@pytest.fixture
def instructor(tmp_path):
    """An instructor's world of the test's own: a home with ``.ssh``, an examples cache, a course with a gradebook,
    a classmate's file and the notebook's folder; the environment that points at them; a TCP listener."""
    world = Path(tempfile.mkdtemp(prefix="agl-jail-test-"))
    os.chmod(world, 0o755)  # as a course folder is: the kernel's user reaches its own folder
    home = world / "home" / "instructor"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    cache = world / "home" / "instructor" / ".cache" / "autograd-lab" / "examples"
    cache.mkdir(parents=True)
    (cache / "expected.pkl").write_text(SECRET)
    course = world / "course"
    own = course / "autograded" / "alice" / "lab"
    own.mkdir(parents=True)
    (course / "gradebook.db").write_text(SECRET)
    (course / "autograded" / "bob").mkdir()
    (course / "autograded" / "bob" / "tensor.py").write_text(SECRET)
    (own / "tensor.py").write_text("ALICE = 1\n")
    for folder in (course, course / "autograded", course / "autograded" / "alice", own):
        os.chmod(folder, 0o755)
    listener = socket.create_server(("127.0.0.1", 0))
    env = {**os.environ, "HOME": str(home), "AUTOGRAD_LAB_CACHE": str(cache), "SSH_AUTH_SOCK": str(home / "agent"),
           "INSTRUCTOR_TOKEN": f"instructor-{SECRET}"}
    secrets = [str(home / ".ssh" / "id_ed25519"), str(cache / "expected.pkl"), str(course / "gradebook.db"),
               str(course / "autograded" / "bob" / "tensor.py"), str(home), str(course / "autograded")]
    try:
        yield {"own": own, "env": env, "port": listener.getsockname()[1], "secrets": secrets}
    finally:
        listener.close()
        shutil.rmtree(world, ignore_errors=True)


def connection_file(folder: Path, ipc: str) -> Path:
    """A connection file as jupyter_client writes it for JailedKernelManager: ipc sockets in ``ipc``."""
    path = folder / "kernel-test.json"
    path.write_text(json.dumps({"transport": "ipc", "ip": os.path.join(ipc, "kernel"), "shell_port": 1,
                                "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5, "key": "k",
                                "signature_scheme": "hmac-sha256", "kernel_name": "python3"}))
    path.chmod(0o600)
    return path


def run_jail(instructor, tmp_path, env=None, preexec_fn=None, ipc=None):
    """Run the real jail command on the probe, as JailedKernelManager runs it (in the notebook's folder)."""
    ipc = ipc or kernel_jail.ipc_folder()
    try:
        connection = connection_file(tmp_path, ipc)
        probe = [sys.executable, "-I", "-c", PROBE, str(connection), str(instructor["port"]), *instructor["secrets"]]
        command = [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", str(instructor["own"]),
                   "--connection-file", str(connection), "--", *probe]
        return subprocess.run(command, cwd=instructor["own"], env=env or instructor["env"], capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=preexec_fn)
    finally:
        shutil.rmtree(ipc, ignore_errors=True)


def probed(run) -> dict:
    lines = [line for line in run.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, f"the probe did not run: {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return json.loads(lines[-1].removeprefix("PROBE "))


def assert_sees_nothing_of_the_instructors(said: dict, secrets: list[str]) -> None:
    assert said["uid"] != 0 and said["uid"] != os.getuid()
    *files, home, classmates = secrets
    for path in files:
        assert said[path][0] != "done", (path, said[path])
    assert said[home][0] != "done" or not said[home][1], said[home]
    # The folders above its own are there (empty but for the way to it): no classmate's.
    assert said[classmates][0] != "done" or said[classmates][1] in ([], ["alice"]), said[classmates]
    assert said["tcp"][0] != "done", said["tcp"]
    assert said["own"] == ["done", "ALICE = 1\n"], said["own"]
    assert said["connection"] == ["done", "ipc"], said["connection"]
    assert said["environ"] == ["done", []], said["environ"]


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the kernel runs only where autograde runs as root")


@needs_root
def test_in_bubblewrap_the_kernel_sees_only_the_interpreter_and_its_own_folder(instructor, tmp_path):
    """With bubblewrap: does the probe fail to read the instructor's ~/.ssh, examples cache, gradebook and a
    classmate's file, to reach a TCP listener on 127.0.0.1, and does `/` list only the system's folders and the
    interpreter's first folder, while its own notebook's copy reads (and a write to it changes no original)?"""
    if not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    said = probed(run_jail(instructor, tmp_path))
    assert_sees_nothing_of_the_instructors(said, instructor["secrets"])
    tops = {path.split(os.sep)[1] for path in kernel_jail.bubblewrap.interpreter_paths()}
    assert said["/"][0] == "done" and set(said["/"][1]) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "proc",
                                                            "tmp", "usr", *tops}, said["/"]
    assert (instructor["own"] / "tensor.py").read_text() == "ALICE = 1\n"


@needs_root
def test_without_bubblewrap_no_kernel_runs_the_notebook(instructor, tmp_path):
    """Without bubblewrap (out of PATH), as root: a mount namespace could only cover a list of folders, and the
    kernel would read whatever else any user can. Deny by default: does the probe never run, and does stderr say
    why and that installing bubblewrap lets the notebooks run?"""
    env = {**instructor["env"], "PATH": str(Path(sys.executable).parent)}
    ipc = kernel_jail.ipc_folder()
    connection = connection_file(tmp_path, ipc)
    probe = [sys.executable, "-I", "-c", PROBE, str(connection), str(instructor["port"]), *instructor["secrets"]]
    command = [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", str(instructor["own"]),
               "--connection-file", str(connection), "--", *probe]
    # The refusing kernel then waits for nbgrader: the line it says first is what is asked about.
    jail = subprocess.Popen(command, cwd=instructor["own"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        ready = select.select([jail.stderr], [], [], 60)[0]
        said = jail.stderr.readline() if ready else ""
    finally:
        jail.kill()
        out, err = jail.communicate()
        shutil.rmtree(ipc, ignore_errors=True)
    assert "PROBE" not in out
    why, setup = messages.KERNEL_WHY["no-bubblewrap"]
    assert said.strip() == messages.KERNEL_REFUSED.format(why=why, setup=setup), said + err[-3000:]
    assert "Traceback" not in said + err, err[-3000:]


@needs_root
def test_an_instructor_who_is_not_root_gets_a_kernel_that_runs_nothing(instructor, tmp_path):
    """Run by a uid that is not root (the jail's own process set to a uid of its own before it starts, keeping
    only the capability to read the interpreter under /root): does the probe never run, does stderr say why
    and what to do, and does every cell a client sends get the refusal's line, not its code's output?"""
    from jupyter_client.blocking import BlockingKernelClient

    uid = 60000 + os.getpid() % 900  # below the workers' leased uids (61000-64999): no grade's process has it
    ipc = tempfile.mkdtemp(prefix=kernel_jail.IPC_PREFIX, dir=kernel_jail.IPC_BASE)
    os.chown(ipc, uid, uid)
    connection = connection_file(tmp_path, ipc)
    os.chown(connection, uid, uid)
    drop = sandbox.drop_privileges(sandbox.Isolation(bubblewrap=False, drop=True, reads_all=True), uid)
    probe = [sys.executable, "-I", "-c", PROBE, str(connection), str(instructor["port"]), *instructor["secrets"]]
    command = [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", str(instructor["own"]),
               "--connection-file", str(connection), "--", *probe]
    jail = subprocess.Popen(command, cwd=instructor["own"], env=instructor["env"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, preexec_fn=drop)
    client = BlockingKernelClient()
    try:
        client.load_connection_file(str(connection))
        # No heartbeat: a kernel slow to start on a loaded machine (ipykernel's import) would read as dead to it.
        client.start_channels(hb=False)
        try:
            client.wait_for_ready(timeout=60)
        except RuntimeError as error:  # the jail died, or did not answer in time: say what it said
            jail.kill()
            raise AssertionError(f"{error}; the jail said:\n{jail.communicate()[1][-3000:]}") from None
        outputs = []
        client.execute_interactive("print('RAN', 6 * 7)", timeout=30,
                                   output_hook=lambda m: outputs.append(m["content"].get("text", "")))
        client.shutdown()
        try:
            out, err = jail.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # its shutdown is not what is asked about: what it said is
            jail.kill()
            out, err = jail.communicate()
    finally:
        client.stop_channels()
        if jail.poll() is None:
            jail.kill()
            jail.communicate()
        shutil.rmtree(ipc, ignore_errors=True)
    assert "PROBE" not in out and "RAN 42" not in "".join(outputs)
    assert "".join(outputs) == messages.KERNEL_REFUSED_CELL.format(uid=uid)
    why, setup = messages.KERNEL_WHY["not-root"]
    assert messages.KERNEL_REFUSED.format(why=why.format(uid=uid), setup=setup) in err, err[-3000:]
    assert "Traceback" not in err, err[-3000:]


@needs_root
def test_a_kernel_on_tcp_or_a_socket_folder_not_its_own_is_refused(instructor, tmp_path):
    """With no network of its own, a kernel on TCP could never be reached: does the jail say so and exit, and
    refuse a socket folder that is not a fresh one of its own (another user's, or mode 0755)?"""
    run = run_jail(instructor, tmp_path, ipc=str(tmp_path / "not-fresh"))
    assert run.returncode == 2 and "PROBE" not in run.stdout and "socket folder" in run.stderr, run.stderr
    connection = tmp_path / "tcp.json"
    connection.write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1", "shell_port": 1, "key": ""}))
    command = [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", str(instructor["own"]),
               "--connection-file", str(connection), "--", sys.executable, "-c", "print('PROBE')"]
    run = subprocess.run(command, cwd=instructor["own"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "PROBE" not in run.stdout
    assert run.stderr.strip() == messages.KERNEL_NOT_IPC.format(transport="tcp")


def test_doctor_says_how_the_kernel_runs_here():
    """Does describe() give doctor the line for this machine: refused (why, and the set-up) where not root or
    where nothing can jail it, else the jail it gets?"""
    said = kernel_jail.describe()
    if os.geteuid() != 0:
        why, setup = messages.KERNEL_WHY["not-root"]
        assert said == messages.KERNEL_DESCRIBED["refused"].format(why=why.format(uid=os.geteuid()), setup=setup)
    elif sandbox.bubblewrap_works():
        assert said == messages.KERNEL_DESCRIBED["bubblewrap"]
    elif sandbox.namespaces_work():
        assert said == messages.KERNEL_DESCRIBED["namespace"]
    else:
        why, setup = messages.KERNEL_WHY["no-jail"]
        assert said == messages.KERNEL_DESCRIBED["refused"].format(why=why, setup=setup)
