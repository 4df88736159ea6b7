"""Does the Slurm array job that `autograd-lab examples cluster` writes grade a class on a real Slurm cluster, and
is the gradebook its merge job writes the one that grade-all writes on one machine?

The cluster is this machine alone: munged, slurmctld and slurmd from Debian's munge and slurm-wlm (.ci/run
installs them), run in the foreground as root with a configuration, state, logs and munge socket of their own in
a private folder, and stopped when the test ends. Where they cannot start, the test is skipped and says why.

The example is edited only where a user of this cluster edits it: two array tasks of one core each, no memory
request (the node has no memory configured), the line that activates the environment, and the grading of two
fast tasks only (1.1 and 5.4, as tests/test_batch.py grades), so that the class costs seconds, not minutes.
It is then submitted with the commands of its header, run as they are written there.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus import BY_NAME, make_submission

from graders.course import course_file

REPO = Path(__file__).resolve().parent.parent
TASKS = "1.1,5.4"
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel")
START_SECONDS = 60  # for each daemon to answer
JOB_SECONDS = 300  # for the array and the merge to finish
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
         "PREEMPTED"}

pytestmark = pytest.mark.long

SLURM_CONF = """\
ClusterName=agl-test
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def free_ports(count: int) -> list[int]:
    """``count`` different TCP ports that nothing listens on (a Slurm already on this machine holds 6817 and 6818)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path.name} was not written)"


@dataclass
class Cluster:
    """A one-node Slurm cluster in ``folder``; ``env`` points Slurm's commands at it."""

    folder: Path
    env: dict[str, str]
    node: str

    @property
    def slurmd_log(self) -> Path:
        return self.folder / "slurmd.log"

    def run(self, *command: str, cwd: Path | None = None) -> str:
        done = subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}"
        return done.stdout

    def states(self, job: str) -> list[str]:
        """The state of each of the job's tasks (one for a plain job, one a task for an array)."""
        return job_states(self.run("scontrol", "--oneliner", "show", "job", job))

    def wait(self, job: str, seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        while not set(states := self.states(job)) <= ENDED:
            assert time.monotonic() < deadline, f"job {job} still {states} after {seconds} s"
            time.sleep(1)
        return states


def job_states(shown: str) -> list[str]:
    """The JobState of each job in what `scontrol --oneliner show job` printed."""
    return [field.removeprefix("JobState=") for line in shown.splitlines() for field in line.split()
            if field.startswith("JobState=")]


def configure(folder: Path) -> Cluster:
    """slurm.conf and a munge key in ``folder``, and the environment that points Slurm's commands at them."""
    host = socket.gethostname().split(".")[0]  # what `hostname -s` says, and the node's name for slurmd
    for name in ("state", "spool", "munge"):
        (folder / name).mkdir(mode=0o700)
    key = folder / "munge" / "munge.key"
    key.touch(mode=0o600)
    key.write_bytes(os.urandom(128))
    conf = folder / "slurm.conf"
    ctld_port, slurmd_port = free_ports(2)
    conf.write_text(SLURM_CONF.format(host=host, ctld_port=ctld_port, slurmd_port=slurmd_port, cpus=os.cpu_count(),
                                      munge_socket=folder / "munge" / "munge.socket", folder=folder))
    scripts = sysconfig.get_path("scripts")  # where autograd-lab is, as for a user who activated the environment
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_", "SLURM_"))}
    env |= {"SLURM_CONF": str(conf), "PATH": f"{scripts}{os.pathsep}{env.get('PATH', os.defpath)}"}
    return Cluster(folder, env, host)


def start(cluster: Cluster, daemons: list[subprocess.Popen]) -> None:
    """Start munged, slurmctld and slurmd, each once the one before it answers; skip the test where one cannot."""
    folder, conf = cluster.folder, cluster.env["SLURM_CONF"]
    munge = folder / "munge"
    commands = {
        # --force: munged wants every folder above its socket open to all, and this one is private.
        "munged": ["munged", "--foreground", "--force", f"--key-file={munge / 'munge.key'}",
                   f"--socket={munge / 'munge.socket'}", f"--pid-file={munge / 'munged.pid'}",
                   f"--seed-file={munge / 'munged.seed'}"],
        "slurmctld": ["slurmctld", "-D", "-f", conf],
        "slurmd": ["slurmd", "-D", "-f", conf],
    }
    ready = {
        "munged": lambda: (munge / "munge.socket").exists(),
        "slurmctld": lambda: "is UP" in probe(cluster, "scontrol", "ping"),
        "slurmd": lambda: any(state in probe(cluster, "scontrol", "show", "node", cluster.node)
                              for state in ("State=IDLE", "State=MIXED", "State=ALLOCATED")),
    }
    for name, command in commands.items():
        log = folder / f"{name}.out"
        with open(log, "wb") as out:
            daemons.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=cluster.env,
                                            stdin=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + START_SECONDS
        while not ready[name]():
            if daemons[-1].poll() is not None or time.monotonic() > deadline:
                why = f"exited {daemons[-1].returncode}" if daemons[-1].poll() is not None else \
                    f"did not answer within {START_SECONDS} s"
                pytest.skip(f"a one-node Slurm cluster cannot start here: {name} {why}\n{tail(log)}")
            time.sleep(0.5)


def probe(cluster: Cluster, *command: str) -> str:
    """What a Slurm command prints, or nothing where it fails."""
    try:
        done = subprocess.run(command, env=cluster.env, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return ""
    return done.stdout if done.returncode == 0 else ""


def stop(cluster: Cluster, daemons: list[subprocess.Popen]) -> None:
    """Cancel what is left of the jobs and let them end, then stop the daemons, the last started first, then kill
    whatever still names the cluster's folder: leave nothing of it running."""
    if len(daemons) == 3:
        probe(cluster, "scancel", "--user=root")
        deadline = time.monotonic() + 30  # Slurm's KillWait: then a task that ignores SIGTERM gets SIGKILL
        while not set(job_states(probe(cluster, "scontrol", "--oneliner", "show", "job"))) <= ENDED \
                and time.monotonic() < deadline:
            time.sleep(0.5)
    for daemon in reversed(daemons):
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
    for pid in naming(cluster.folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def naming(folder: Path) -> list[int]:
    """The live processes whose command line, environment or working folder names ``folder``: a daemon, a
    slurmstepd (slurmd's environment names slurm.conf, and a slurmstepd outlives it), what a job started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            seen = [(entry / "cmdline").read_bytes(), (entry / "environ").read_bytes(),
                    os.readlink(entry / "cwd").encode()]
        except (OSError, IndexError):
            continue
        if any(os.fsencode(folder) in text for text in seen):
            found.append(int(entry.name))
    return found


@pytest.fixture
def slurm():
    missing = [name for name in PROGRAMS if shutil.which(name) is None]
    if missing:
        pytest.skip(f"Slurm or munge is not installed here (.ci/run installs slurm-wlm and munge): no {missing}")
    if os.geteuid() != 0:
        pytest.skip("a Slurm node's daemon (slurmd) runs as root, and this test does not")
    folder = Path(tempfile.mkdtemp(prefix="agl-slurm-"))  # mode 0o700: the class holds a copy of solutions/
    daemons: list[subprocess.Popen] = []
    try:
        cluster = configure(folder)
        start(cluster, daemons)
        yield cluster
    finally:
        if daemons:
            stop(cluster, daemons)
        shutil.rmtree(folder)


def make_class(root: Path) -> Path:
    """Four students: the reference, two known-wrong ones and the stubs."""
    subs = root / "submissions"
    make_submission(subs, "alice", [])
    make_submission(subs, "bob", [BY_NAME["unbroadcast_forgets_keepdims"]])
    make_submission(subs, "carol", [BY_NAME["tensor_indentation_error"]])
    shutil.copytree(REPO / "exercises", subs / "erin", ignore=shutil.ignore_patterns("__pycache__"))
    return subs


def edit_as_a_user(sbatch: Path) -> None:
    """What a user of this cluster changes in the example: shards, cores, memory, the environment, the tasks."""
    activate = Path(sys.prefix) / "bin" / "activate"
    edits = {
        "#SBATCH --array=1-8\n": "#SBATCH --array=1-2\n",
        "#SBATCH --cpus-per-task=4\n": "#SBATCH --cpus-per-task=1\n",
        "#SBATCH --mem-per-cpu=3G\n": "",
        "# source ~/venvs/autograd-lab/bin/activate\n": f"source {activate}\n",
        "  --course course.toml --isolation bubblewrap\n":
            f"  --course course.toml --isolation bubblewrap --tasks {TASKS}\n",
    }
    text = sbatch.read_text()
    for old, new in edits.items():
        assert text.count(old) == 1, f"the example no longer holds {old!r} once"
        text = text.replace(old, new)
    sbatch.write_text(text)


def header_commands(sbatch: Path) -> list[str]:
    """The commands the example's header says to run (its lines indented under '#')."""
    return [line.removeprefix("#   ") for line in sbatch.read_text().splitlines() if line.startswith("#   ")]


def csv_rows(path: Path) -> list[dict]:
    """grades.csv's rows without the seconds (a judge's wall time)."""
    with open(path, newline="", encoding="utf-8") as f:
        return [{column: value for column, value in row.items() if column != "seconds"} for row in csv.DictReader(f)]


def test_the_slurm_array_example_grades_a_class_as_grade_all_does_on_one_machine(slurm):
    """Do the Slurm example's array job and merge job, submitted as its header says, write the grades.csv that
    `autograd-lab grade-all` writes for the same class on one machine?"""
    root = slurm.folder / "course"
    make_class(root)
    (root / "course.toml").write_text(course_file.template("ab" * 32))  # beside submissions/, as the header says
    slurm.run("autograd-lab", "grade-all", "submissions", "--out", "one-machine", "--tasks", TASKS, "--course",
              "course.toml", cwd=root)
    slurm.run("autograd-lab", "examples", "cluster", cwd=root)
    sbatch = Path(shutil.copy(root / "cluster" / "slurm-array.sbatch", root))  # beside submissions/
    edit_as_a_user(sbatch)
    commands = header_commands(sbatch)
    assert any(command.startswith("jobid=$(sbatch --parsable ") for command in commands), commands

    submitted = slurm.run("bash", "-c", "\n".join(["set -euo pipefail", *commands, 'echo "array $jobid"']), cwd=root)
    merge = submitted.split("Submitted batch job ")[1].split()[0]
    array = submitted.split("array ")[1].split(";")[0].strip()
    merge_state = slurm.wait(merge, JOB_SECONDS)
    array_states = slurm.wait(array, 10)
    logs = "\n".join(f"--- {log.name}\n{tail(log)}" for log in [*sorted(root.rglob("*.out")), slurm.slurmd_log])
    assert array_states == ["COMPLETED", "COMPLETED"], f"the array's tasks ended {array_states}\n{logs}"
    assert merge_state == ["COMPLETED"], f"the merge ended {merge_state}\n{logs}"
    merged, alone = csv_rows(root / "grades" / "grades.csv"), csv_rows(root / "one-machine" / "grades.csv")
    assert [row["student"] for row in alone] == ["alice", "bob", "carol", "erin"]
    assert merged == alone
    for student in ("alice", "bob", "carol", "erin"):
        assert (root / "grades" / "students" / student / "results.json").read_bytes() == \
            (root / "one-machine" / "students" / student / "results.json").read_bytes(), student
