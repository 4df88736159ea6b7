"""Workers forked from the judge's fork servers (graders.isolation.fork_servers): where the judge is root with
bubblewrap, is a forked worker the worker a fresh interpreter would be, in the same sandbox, and is a grade the same
grade byte for byte? And where a server cannot fork, do workers start as before?"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus import BY_NAME, make_submission

from graders.cli import main
from graders.isolation import fork_servers, sandbox
from graders.judge.grade import grade
from graders.paths import SOLUTIONS

pytestmark = pytest.mark.skipif(not (sandbox.bubblewrap_works() and fork_servers.usable(sandbox.choose("bubblewrap"))),
                                reason="workers are forked only where the judge is root with bubblewrap")
SOME = ("1.1", "1.3", "2.1", "3.2", "4.2", "5.1", "5.4", "6.1")

# What a worker can see of itself and its surroundings, each group a short digest (a message holds 300 characters).
# Left out, as they differ by design or from one grade to the next: the uid's number (each worker leases one), the
# inheritable capabilities (a cold worker inherits bubblewrap's, which no permitted set backs; a forked one has
# none), the hash seed (``-I`` ignores PYTHONHASHSEED: a cold worker draws its own, a forked one has its server's),
# the session (a forked worker leads its own, a cold one is in bubblewrap's), pids and fd numbers, the command line.
PROBE = '''

def _probe(where):
    import hashlib, json, os, resource, socket, sys
    def status(*keys):
        with open("/proc/self/status") as f:
            return [line.split()[1] for line in f if line.split(":")[0] in keys]
    def listing(path):
        try:
            return sorted(os.listdir(path))
        except OSError as error:
            return type(error).__name__
    try:
        import torch  # noqa: F401
        torch_import = "imported"
    except ImportError as error:
        torch_import = str(error)[:60]
    groups = {
        "who": [os.getuid() > 0, os.getresuid() == (os.getuid(),) * 3 == os.getresgid(), os.getgroups(),
                status("CapPrm", "CapEff", "CapAmb", "NoNewPrivs", "Seccomp"),
                os.stat("/proc/self/status").st_uid == os.getuid()],
        "files": [os.getcwd(), listing("/"), listing("/sandbox"), listing("/sandbox/pkgs"), listing("/tmp"),
                  listing("/root"), listing("/dev"), os.access("/usr", os.W_OK)],
        "env": sorted(os.environ.items()),
        "python": [sys.path, sys.flags.isolated, sys.flags.dont_write_bytecode, sys.flags.no_site,
                   sorted(m for m in sys.modules if m.partition(".")[0] in ("graders", "solutions", "exercises"))],
        "limits": [resource.getrlimit(r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE,
                                                  resource.RLIMIT_NPROC, resource.RLIMIT_CORE)],
        "spaces": [socket.if_nameindex(), len(os.listdir("/proc/self/fd")), os.getppid(),
                   sorted(p for p in os.listdir("/proc") if p.isdigit() and int(p) < os.getpid())],
        "torch": ["torch" in sys.modules, torch_import],
    }
    digests = {k: hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:8] for k, v in groups.items()}
    return RuntimeError(where + " " + " ".join(f"{k}={v}" for k, v in digests.items()))
'''
PROBES = [  # (file, the first line of a function's body, where the probe is raised)
    ("tensor.py", "def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:\n",
     "    raise _probe('unbroadcast')\n"),
    ("optim.py", "        ### BEGIN SOLUTION (Task 3.1: SGD step; Task 3.2: momentum and weight decay)\n",
     "        raise _probe('step')\n"),
    ("train.py", "clip_norm: float | None = None) -> float:\n", "    raise _probe('train_epoch')\n"),
    ("torch_loop.py", 'device="cpu", val_loader=None) -> dict:\n', "    raise _probe('fit_torch')\n"),
]
DIGESTS = re.compile(r"(unbroadcast|step|train_epoch|fit_torch)((?: \w+=[0-9a-f]{8})+)")


def probe_submission(tmp_path: Path) -> Path:
    folder = make_submission(tmp_path, "probe", [(file, head, head + body) for file, head, body in PROBES])
    for file in {file for file, _, _ in PROBES}:
        (folder / file).write_text((folder / file).read_text() + PROBE)
    return folder


def seen(report) -> dict[str, str]:
    """Each probe's digests, by the function that raised it."""
    found = {}
    for result in report.results:
        for where, digests in DIGESTS.findall(result.message):
            found[where] = digests.strip()
    return found


@pytest.fixture
def started_workers(monkeypatch):
    """Workers started cold in this test, as where no fork server can be had."""
    monkeypatch.setenv(fork_servers.SWITCH_ENV, "off")


@pytest.fixture
def spawns(monkeypatch) -> list[int]:
    """The pid of every worker a fork server makes in this test."""
    made = []
    spawn = fork_servers.Server.spawn

    def recording(server, spec, fds, into):
        forked = spawn(server, spec, fds, into)
        made.append(forked.pid)
        return forked

    monkeypatch.setattr(fork_servers.Server, "spawn", recording)
    return made


def test_a_forked_worker_sees_what_a_started_one_sees(tmp_path, monkeypatch, spawns):
    """Do a numpy task's, the loop's and the PyTorch loop's workers see the same identity, privileges, files,
    environment, interpreter, limits and namespaces, whether forked or started cold?"""
    folder = probe_submission(tmp_path)
    tasks = ("1.1", "3.1", "5.1", "6.1")
    forked = seen(grade(folder, task_ids=tasks, isolation="bubblewrap"))
    assert len(spawns) >= 4
    monkeypatch.setenv(fork_servers.SWITCH_ENV, "off")
    started = seen(grade(folder, task_ids=tasks, isolation="bubblewrap"))
    assert sorted(forked) == ["fit_torch", "step", "train_epoch", "unbroadcast"]
    assert forked == started


def test_a_forked_grade_writes_the_results_of_a_started_one_byte_for_byte(tmp_path, monkeypatch, spawns):
    """The reference and a wrong submission, graded with forked workers, then with workers started cold."""
    wrong = make_submission(tmp_path, "wrong", [BY_NAME["matmul_grads_swapped"]])
    outputs = {}
    for mode in ("forked", "started"):
        if mode == "started":
            monkeypatch.setenv(fork_servers.SWITCH_ENV, "off")
        for name, folder in (("reference", SOLUTIONS), ("wrong", wrong)):
            out = tmp_path / f"{name}-{mode}.json"
            assert main(["grade", str(folder), "--tasks", ",".join(SOME), "--results", str(out)]) == 0
            outputs[name, mode] = out.read_bytes()
        if mode == "forked":
            assert spawns, "no worker was forked"
            spawns.clear()
    assert not spawns
    assert outputs["reference", "forked"] == outputs["reference", "started"]
    assert outputs["wrong", "forked"] == outputs["wrong", "started"]


def test_a_fork_server_that_cannot_fork_leaves_the_grade_to_started_workers(monkeypatch):
    """A server that fails (a kernel that refuses setns, say): the grade goes on with workers started cold, the
    same score, and no later worker of this process is forked."""
    def refuse(server, spec, fds, into):
        raise fork_servers.Unavailable("setns into the sandbox's mnt namespace: refused")

    monkeypatch.setattr(fork_servers.Server, "spawn", refuse)
    monkeypatch.setattr(fork_servers, "_broken", [])
    report = grade(SOLUTIONS, task_ids=("1.1", "3.1", "5.1"), isolation="bubblewrap")
    assert [r.status for r in report.results] == ["passed"] * 3
    assert fork_servers._broken and "refused" in fork_servers._broken[0]
    assert not fork_servers.usable(sandbox.choose("bubblewrap"))


def test_a_forked_worker_that_exits_is_reported_as_died(tmp_path, spawns):
    """A forked worker is a child of its sandbox's first process, as a started one is: the judge still sees it end."""
    folder = make_submission(tmp_path, "quits", [("tensor.py", "def unbroadcast(grad: np.ndarray, shape: tuple[int, "
                                                 "...]) -> np.ndarray:\n", "def unbroadcast(grad: np.ndarray, shape"
                                                 ": tuple[int, ...]) -> np.ndarray:\n    import os; os._exit(3)\n")])
    report = grade(folder, task_ids=("1.1",), isolation="bubblewrap")
    assert spawns
    assert report.results[0].status == "failed"
    assert "died" in report.results[0].message
