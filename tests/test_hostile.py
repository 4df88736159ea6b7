"""Does the grader hold against every submission of the hostile corpus (tests/hostile.py), with and without
bubblewrap?

For each entry and each isolation: the grade finishes within the entry's bound,
the machine is left clean (no process of the test's, of the worker uids it
leased, or naming its scratch folder or marker; no file outside the scratch
folder: /tmp, the submission, the results folder, the repository,
site-packages), and the score is exactly what the honest part earns. Entries
marked with a ``hole`` for an isolation are strict xfails there: the attack
wins, and the reason says why.

The entries with ``cli`` are also graded the way CI does it: ``autograd-lab
grade`` run from inside the submission folder, with ``--results``; the one that
carries a judge of its own, every documented way.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import world
from hostile import BY_NAME, HOSTILE, AttackSucceeded, Hostile, Machine, _no_impostor, assert_earns, graded

from graders.isolation import sandbox
from graders.judge.grade import grade

# One xdist worker runs every hostile grade, one after another: attacks write fixed paths (/tmp/results.json)
# that another hostile test, checking the machine is clean, would see.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hostile")]
ISOLATIONS = ("bubblewrap", "limits")
# Entries allowed more than this many seconds run every task to its deadline by design: `long`, run by .ci/run.
LONG_BOUND = 100.0
CLI_SLACK = 60.0  # the judge's own start (torch) on top of the grade, for the command-line runs
# A command line's wall-clock guard against a hang, this many times its bound: its bound holds its CPU time (a busy
# machine moves wall time, not CPU time), and a grade that waits without computing is stopped by its own backstop.
HANG_FACTOR = 10


def children_cpu() -> float:
    """The CPU seconds of this process's children that have ended (a judge, with the workers it reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))  # the console script of this environment


def params(entries) -> list:
    params = []
    for entry in entries:
        for isolation in ISOLATIONS:
            marks = []
            if isolation == "bubblewrap":
                marks.append(pytest.mark.skipif(not sandbox.bubblewrap_works(),
                                                reason="bubblewrap is missing or cannot make a sandbox here"))
            if entry.bound > LONG_BOUND:
                marks.append(pytest.mark.long)
            if isolation in entry.holes:
                marks.append(pytest.mark.xfail(strict=entry.strict_holes, raises=AttackSucceeded,
                                               reason=entry.holes[isolation]))
            params.append(pytest.param(entry, isolation, id=f"{entry.name}-{isolation}", marks=marks))
    return params


@pytest.mark.parametrize(("entry", "isolation"), params(HOSTILE))
def test_a_hostile_submission_earns_only_its_honest_part(entry: Hostile, isolation, tmp_path, monkeypatch,
                                                         small_example_budget):
    """Does the grader finish in time, leave the machine clean, and give exactly the honest part's score?"""
    machine = Machine(tmp_path, entry, monkeypatch)
    try:
        if entry.world and isolation == "limits":
            return _graded_in_a_world(machine, entry, tmp_path)
        report, seconds = graded(entry, machine.folder, scratch=machine.scratch, isolation=isolation)
        assert seconds <= entry.bound, f"grading took {seconds:.1f} s, more than {entry.bound:g} s"
        machine.assert_clean()
        if entry.says:
            assert any(words in r.message for r in report.results for words in entry.says), \
                f"no message says {entry.says!r}:\n" + "\n".join(r.message for r in report.results)
        if entry.check is not None:
            entry.check(report, {**machine.context_for_checks, "isolation": isolation, "swept": machine.swept})
        assert_earns(entry, report)
    finally:
        machine.cleanup()


def _graded_in_a_world(machine: Machine, entry: Hostile, tmp_path) -> None:
    """The grade under process limits, run by the console script's module in a world the test builds (a mount
    namespace where no stranger's copy of the repository exists: tests/world.py): the score is the honest part's,
    and nothing is left."""
    if not world.works():
        pytest.skip("building the test's world takes root and mount namespaces")
    out = machine.results / "results.json"
    run = subprocess.run([sys.executable, "-I", "-m", "graders", "grade", str(machine.folder), "--results", str(out),
                          "--tasks", ",".join(entry.tasks), "--isolation", "limits"],
                         cwd=tmp_path, env={**os.environ, "TMPDIR": str(machine.scratch)}, capture_output=True,
                         text=True, timeout=HANG_FACTOR * (entry.bound + CLI_SLACK),
                         preexec_fn=world.preexec(world.needed(tmp_path)))
    assert run.returncode == 0, run.stderr[-3000:]
    machine.assert_clean(results_allowed=("results.json",), private_tmp=True)
    result = json.loads(out.read_text())
    assert result["score"] == entry.points, json.dumps(result, indent=1)[:3000]
    assert {t["number"] for t in result["tests"] if t["score"] > 0} == set(entry.earns) | {t for t, _ in entry.keeps}


@pytest.mark.parametrize(("entry", "isolation"), params([e for e in HOSTILE if e.cli]))
def test_the_command_line_from_inside_a_hostile_submission(entry: Hostile, isolation, tmp_path, monkeypatch):
    """Run as CI runs it, `autograd-lab grade . --results ...` from inside the submission folder: does
    results.json hold the judge's own verdict, and nothing the attack printed or wrote?"""
    machine = Machine(tmp_path, entry, monkeypatch)
    out = machine.results / "results.json"
    env = {**os.environ, "TMPDIR": str(machine.scratch)}
    try:
        start = children_cpu()
        run = subprocess.run([AUTOGRAD_LAB, "grade", ".", "--results", str(out),
                              "--tasks", ",".join(entry.tasks), "--isolation", isolation],
                             cwd=machine.folder, env=env, capture_output=True, text=True,
                             timeout=HANG_FACTOR * (entry.bound + CLI_SLACK))
        seconds = children_cpu() - start
        assert run.returncode == 0, run.stderr[-3000:]
        assert seconds <= entry.bound + CLI_SLACK
        printed = run.stdout + run.stderr
        assert len(printed) < 100_000, f"the judge printed {len(printed)} characters"
        for line in entry.fake_lines:
            assert line not in printed, f"the judge's output holds the attack's {line!r}"
        machine.assert_clean(results_allowed=("results.json",), private_tmp=isolation == "bubblewrap")
        result = json.loads(out.read_text())
        assert result["score"] == entry.points, json.dumps(result, indent=1)[:3000]
        scored = {t["number"] for t in result["tests"] if t["score"] > 0}
        assert scored == set(entry.earns) | {t for t, _ in entry.keeps}
        assert "isolation: " + sandbox.choose(isolation).describe() in result["output"]
    finally:
        machine.cleanup()


def _documented_ways(folder: Path, out: Path, tasks: str) -> dict[str, tuple[list[str], Path, Path | None]]:
    """Every documented way to run the judge on ``folder``, from inside it: way -> (command, working folder, the
    results.json it writes, or None where it must refuse to start)."""
    python = [sys.executable, "-I", "-m"]
    gradescope = out / "autograder"
    keyed = ["--course", str(gradescope / "source" / "course.toml"),
             "--metadata", str(gradescope / "submission_metadata.json")]
    return {
        "console script": ([AUTOGRAD_LAB, "grade", ".", "--results", str(out / "console.json"), "--tasks", tasks],
                           folder, out / "console.json"),
        "python -I -m graders": ([*python, "graders", "grade", ".", "--results", str(out / "module.json"),
                                  "--tasks", tasks], folder, out / "module.json"),
        "python -I -m graders.integrations.gradescope": (
            [*python, "graders.integrations.gradescope", "run", ".", str(out / "gradescope.json"), *keyed], folder,
            out / "gradescope.json"),
        "run_autograder": (["bash", str(gradescope / "run_autograder")], gradescope / "submission",
                           gradescope / "results" / "results.json"),
        "grade-all": ([AUTOGRAD_LAB, "grade-all", str(folder.parent), "--out", str(out / "class"), "--jobs", "1",
                       "--tasks", tasks, "--unkeyed"], folder,
                      out / "class" / "students" / folder.name / "results.json"),
        "pytest plugin": ([str(Path(sys.executable).with_name("pytest")), "-c", os.devnull, "-p",
                           "graders.integrations.pytest_plugin", "-p", "no:cacheprovider",
                           "--autograd-lab-submission=."], folder, None),
    }


@pytest.mark.parametrize("way", list(_documented_ways(Path("."), Path("."), "")))
def test_a_judge_in_the_submission_is_never_the_one_that_runs(way, tmp_path, monkeypatch):
    """The submission carries its own graders/ (a judge that prints 100 and writes a perfect results.json) and
    numpy.py, torch.py, hypothesis.py, hashlib.py, pathlib.py, sitecustomize.py. Run from inside it each documented
    way (the console script, `python -I -m graders`, Gradescope's module and run_autograder, grade-all, the pytest
    plugin): does the real judge grade it (0, the stubs' score) or refuse to start, with none of its modules run?"""
    from graders.course import course_file
    from graders.course.templates import fill
    from graders.integrations import gradescope

    entry = next(e for e in HOSTILE if e.name == "judge_in_the_submission")
    machine = Machine(tmp_path, entry, monkeypatch)
    out = machine.results
    try:
        command, cwd, results = _documented_ways(machine.folder, out, ",".join(entry.tasks))[way]
        (out / "autograder" / "source").mkdir(parents=True)  # Gradescope's: the course file and the metadata
        (out / "autograder" / "source" / "course.toml").write_text(course_file.template("ab" * 32))
        (out / "autograder" / "submission_metadata.json").write_text('{"users": [{"id": 1, "email": "a@x.edu"}]}')
        if way == "run_autograder":
            shutil.copytree(machine.folder, cwd)
            template = gradescope.TEMPLATES / "gradescope" / "run_autograder"
            (out / "autograder" / "run_autograder").write_text(fill(template.read_text(), course="course.toml"))
        env = {**os.environ, "TMPDIR": str(machine.scratch), "AUTOGRADER_ROOT": str(out / "autograder"),
               "AUTOGRAD_LAB_PYTHON": sys.executable}
        env = {name: value for name, value in env.items() if not name.startswith("PYTEST_")}
        run = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                             timeout=HANG_FACTOR * (entry.bound + CLI_SLACK))
        printed = run.stdout + run.stderr
        assert "100/100 from the submission" not in printed, printed[-3000:]
        marks = sorted(p.name for p in out.rglob("impostor-*"))
        assert not marks, f"the judge ran the submission's own modules: {marks}"
        if results is None:
            assert run.returncode == pytest.ExitCode.USAGE_ERROR and "lies inside the submission" in run.stderr
            return
        assert run.returncode == 0, printed[-3000:]
        result = json.loads(results.read_text())
        assert result["score"] == 0 and not [t for t in result["tests"] if t["score"] > 0], json.dumps(result)[:2000]
        assert len(result["tests"]) >= len(entry.tasks)
    finally:
        machine.cleanup()


def test_the_corpus_covers_the_issue():
    """Does the corpus hold at least 25 entries, each graded on the tasks it names, built from stubs or the
    reference, and say what it attacks?"""
    assert len(HOSTILE) >= 25
    for entry in HOSTILE:
        assert entry.base in ("stubs", "solutions") and entry.attack and entry.tasks
        assert set(entry.earns) <= set(entry.tasks)
        assert entry.base == "solutions" or not entry.earns, entry.name
        assert set(entry.holes) <= set(ISOLATIONS)


RELAY_WRITER = '''
def unbroadcast(grad, shape):
    """Leaves 'the answer' wherever a later worker, grade or classmate could look, and a daemon that serves it."""
    import os, socket, time
    left = []
    for path in ("/dev/shm/agl-relay", "/tmp/agl-relay", "/var/tmp/agl-relay", os.path.expanduser("~/agl-relay")):
        try:
            with open(path, "w") as f:
                f.write("100")
            os.chmod(path, 0o666)
            left.append(path)
        except OSError:
            pass
    if os.fork() == 0:  # a daemon that serves the answer on an abstract unix socket
        os.setsid()
        if os.fork() == 0:
            try:
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind("\\0agl-relay")
                server.listen(4)
                server.settimeout(60)
                end = time.monotonic() + 60
                while time.monotonic() < end:
                    connection, _ = server.accept()
                    connection.sendall(b"100")
                    connection.close()
            except OSError:
                pass
        os._exit(0)
    time.sleep(0.5)
    raise RuntimeError("left: " + " ".join(left))
'''

RELAY_READER = '''
def unbroadcast(grad, shape):
    """Looks for what an earlier worker, grade or classmate left behind."""
    import os, socket
    found = []
    for path in ("/dev/shm/agl-relay", "/tmp/agl-relay", "/var/tmp/agl-relay", os.path.expanduser("~/agl-relay")):
        try:
            with open(path) as f:
                found.append(path + "=" + f.read(10))
        except OSError:
            pass
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(2)
        client.connect("\\0agl-relay")
        found.append("socket=" + client.recv(10).decode())
    except OSError:
        pass
    raise RuntimeError("found: [" + " ".join(found) + "]")
'''


def _relay_class(folder, relay):
    """A class of two: a writer graded first, then a reader (grade-all grades in name order), who leave and look
    for ``relay`` (a name of this test's own: tests on other workers of the run leave theirs)."""
    from corpus import make_submission

    for name, code in (("a_writer", RELAY_WRITER), ("b_reader", RELAY_READER)):
        submission = make_submission(folder, name, [])
        code = code.replace("agl-relay", relay)
        (submission / "tensor.py").write_text((submission / "tensor.py").read_text() + code)
    return folder / "a_writer", folder / "b_reader"


def _relay_name(tmp_path) -> str:
    return "agl-relay-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:12]


def _found(message: str) -> str:
    return message.split("found: [", 1)[1].split("]", 1)[0] if "found: [" in message else message


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_nothing_a_grade_leaves_reaches_the_next_grade(tmp_path, isolation):
    """A writer leaves the answer in /dev/shm, /tmp, /var/tmp, its home and behind an abstract unix socket (a
    daemon); the next grade's reader finds none of it."""
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    relay = _relay_name(tmp_path)
    writer, reader = _relay_class(tmp_path / "class", relay)
    [wrote] = grade(writer, task_ids=("1.1",), scratch=tmp_path, isolation=isolation).results
    assert "left:" in wrote.message, wrote.message
    [read] = grade(reader, task_ids=("1.1",), scratch=tmp_path, isolation=isolation).results
    assert _found(read.message) == "", read.message
    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        assert not os.path.exists(f"{folder}/{relay}"), f"{folder}/{relay} outlived its grade"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_what_a_killed_judge_left_is_gone_before_the_next_worker_starts(tmp_path, isolation):
    """A judge killed mid-grade never sweeps its worker's uid: the writer's files stay in /dev/shm, /tmp and
    /var/tmp, owned by a worker uid that no judge holds (made here as root, as the writer leaves them). The next
    judge's first worker finds none of them, and they are gone from the machine."""
    if os.geteuid() != 0:
        pytest.skip("worker uids are leased only by a judge that runs as root")
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    from graders.isolation import uids

    relay = _relay_name(tmp_path)
    _, reader = _relay_class(tmp_path / "class", relay)
    orphan = uids.WORKER_UID_BASE + uids.WORKER_UID_COUNT - 1 - ISOLATIONS.index(isolation)
    left = [f"{folder}/{relay}" for folder in ("/dev/shm", "/tmp", "/var/tmp")]
    for path in left:
        with open(path, "w") as f:
            f.write("100")
        os.chmod(path, 0o666)
        os.chown(path, orphan, orphan)
    try:
        [read] = grade(reader, task_ids=("1.1",), scratch=tmp_path, isolation=isolation).results
        assert _found(read.message) == "", read.message
        assert [path for path in left if os.path.exists(path)] == []
    finally:
        for path in left:
            with contextlib.suppress(OSError):
                os.unlink(path)


def test_nothing_a_student_leaves_reaches_a_classmate_in_grade_all(tmp_path):
    """The same relay across two students of one grade-all (one judge: the reader is graded right after)."""
    from graders.cli import main

    _relay_class(tmp_path / "class", _relay_name(tmp_path))
    assert main(["grade-all", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--jobs", "1",
                 "--tasks", "1.1", "--unkeyed"]) == 0
    results = json.loads((tmp_path / "out" / "students" / "b_reader" / "results.json").read_text())
    assert _found(results["tests"][0]["output"]) == "", results["tests"][0]["output"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_grade_all_reads_only_regular_files_and_keeps_any_name(tmp_path, monkeypatch, isolation):
    """Intake in a class: the special_files entry under a folder name that is not UTF-8, a FIFO and a sparse
    terabyte beside the class's folders, and an honest classmate. Does grade-all finish, give each their own
    score (the hostile one its honest part, with the FIFO named in its row), and keep the name's bytes?"""
    import csv

    from corpus import make_submission
    from hostile import build

    from graders.classgrade import batch

    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    entry = next(e for e in HOSTILE if e.name == "special_files")
    subs = tmp_path / "class"
    make_submission(subs, "alice", [])
    odd = os.fsdecode(b"mall\xf6ry")
    build(entry, subs, {}).rename(subs / odd)
    os.mkfifo(subs / "pipe")
    with open(subs / "holes.bin", "wb") as f:
        f.truncate(2**40)
    out = tmp_path / "out"
    # A special file that hung the grade would end its judge at the bound (CPU time, or time waited without
    # computing): a row not graded.
    summary = batch.grade_all(subs, out, jobs=1, timeout=120,
                              settings=batch.Settings(tasks=entry.tasks, isolation=isolation))
    assert (summary.graded, summary.failed) == (2, 0)
    with open(out / "grades.csv", newline="", encoding="utf-8", errors="surrogateescape") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == {"alice", odd}
    assert all(float(rows["alice"][t]) > 0 for t in entry.tasks), rows["alice"]
    assert [t for t in entry.tasks if float(rows[odd][t]) > 0] == list(entry.earns)
    assert b"mall\xf6ry," in (out / "grades.csv").read_bytes()
    results = json.loads((out / "students" / odd / "results.json").read_text(errors="surrogateescape"))
    assert any("is a FIFO" in t["output"] for t in results["tests"]), results


# ----- the isolation a grade was set up for, or none; a worker's filesystem a list; nothing left by a killed run -----

FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"  # Ubuntu 24.04's AppArmor
NOBODY = 65534


def _downgraded(judge: str, command: list[str], tmp_path: Path) -> dict:
    """subprocess.run's arguments that run ``command`` as a judge that cannot have bubblewrap: root without
    CAP_SYS_ADMIN (a container's), or a user that is not root where bubblewrap cannot start (an Actions runner on
    Ubuntu 24.04: a bwrap that fails as AppArmor makes it fail), in a world of the test's own (tests/world.py)."""
    if judge == "root without CAP_SYS_ADMIN":
        if os.geteuid() != 0 or shutil.which("capsh") is None:
            pytest.skip("dropping CAP_SYS_ADMIN takes root and capsh")
        return {"args": ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$0" "$@"', *command],
                "env": {**os.environ, "TMPDIR": str(tmp_path / "scratch")}}
    if not world.works() or shutil.which("setpriv") is None:
        pytest.skip("running a judge as nobody in the test's world takes root, mount namespaces and setpriv")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(FAKE_BWRAP)
    for path in (tmp_path, fake, fake / "bwrap"):
        path.chmod(0o755)
    for folder in ("scratch", "home", "out"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder).chmod(0o777)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "HOME": str(tmp_path / "home"),
           "TMPDIR": str(tmp_path / "scratch"), "AUTOGRAD_LAB_CACHE": "off"}
    return {"args": ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *command],
            "env": env, "preexec_fn": world.preexec(world.needed(tmp_path))}


@pytest.mark.parametrize("isolation", ("auto", "limits"))
@pytest.mark.parametrize("judge", ("root without CAP_SYS_ADMIN", "not root, bubblewrap unusable"))
def test_a_judge_that_cannot_have_its_isolation_grades_no_one(judge, isolation, tmp_path, monkeypatch):
    """A class of two: alice (the reference) and mallory, who finds the class folder in grade-all's command line and
    runs alice's tensor.py (classmate_from_the_command_line). grade-all is run by a judge that cannot have the
    isolation a grade that counts needs: does it refuse before grading anyone, naming what is missing, rather than
    settle for less (where mallory's worker could read alice's files)?"""
    from corpus import make_submission

    entry = BY_NAME["classmate_from_the_command_line"]
    machine = Machine(tmp_path / "machine", entry, monkeypatch)
    classroom = tmp_path / "class"
    make_submission(classroom, "alice", [])
    shutil.copytree(machine.folder, classroom / "mallory")
    for path in [classroom, *classroom.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (tmp_path / "scratch").mkdir(exist_ok=True)
    out = tmp_path / "out" / "grades"
    command = [AUTOGRAD_LAB, "grade-all", str(classroom), "--out", str(out), "--jobs", "1",
               "--tasks", ",".join(entry.tasks), "--isolation", isolation, "--unkeyed"]
    try:
        run = subprocess.run(**_downgraded(judge, command, tmp_path), capture_output=True, text=True, timeout=600)
        if run.returncode == 0:
            import csv

            with open(out / "grades.csv", newline="") as f:
                rows = {row["student"]: row for row in csv.DictReader(f)}
            if float(rows["mallory"]["total"]) > 0:
                raise AttackSucceeded(f"mallory got {rows['mallory']['total']} points (honestly 0), graded with "
                                      f"{rows['mallory'].get('isolation', 'less than bubblewrap')}")
            pytest.fail(f"grade-all graded the class with less than it was set up for: {run.stderr[-2000:]}")
        assert run.returncode == 2, run.stderr[-3000:]
        assert "refusing to grade" in run.stderr, run.stderr[-3000:]
        assert any(fix in run.stderr for fix in ("To fix it", "Run the judge as root", "Give the judge CAP_SYS_ADMIN"))
        assert not (out / "mallory").exists() and not (out / "alice").exists()
    finally:
        machine.cleanup()


def _site_packages() -> str:
    import numpy

    return os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))


def _second_torches() -> dict[str, str]:
    """Where a second torch could be on a machine: the base interpreter's site-packages, the system's, another
    virtual environment that every user may read."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return {"the base interpreter's": os.path.join(sys.base_prefix, "lib", version, "site-packages"),
            "the system's": f"/usr/local/lib/{version}/dist-packages",
            "another environment's": f"/opt/agl-other-env/lib/{version}/site-packages"}


@pytest.mark.parametrize("place", list(_second_torches()))
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_no_torch_anywhere_on_the_machine_reaches_a_numpy_task(isolation, place, tmp_path, monkeypatch):
    """The machine holds torch beside the judge's own, where a stranger could have installed it: in the base
    interpreter's site-packages, the system's dist-packages, another virtual environment (the world binds this
    environment's packages there). A submission takes the worker's import refusal off and imports torch from any
    site-packages it finds for unbroadcast and @ (torch_from_another_environment): does it find none, under either
    isolation, and score 0?"""
    if not world.works():
        pytest.skip("building the test's world takes root and mount namespaces")
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    if os.path.realpath(_second_torches()[place]) == _site_packages():
        pytest.skip(f"{place} site-packages is this environment's own")
    entry = BY_NAME["torch_from_another_environment"]
    machine = Machine(tmp_path, entry, monkeypatch)
    out = machine.results / "results.json"
    try:
        run = subprocess.run([sys.executable, "-I", "-m", "graders", "grade", str(machine.folder), "--results",
                              str(out), "--tasks", ",".join(entry.tasks), "--isolation", isolation],
                             cwd=tmp_path, env={**os.environ, "TMPDIR": str(machine.scratch)}, capture_output=True,
                             text=True, timeout=entry.bound + CLI_SLACK,
                             preexec_fn=world.preexec(world.needed(tmp_path),
                                                      also=((_site_packages(), _second_torches()[place]),)))
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(out.read_text())
        forged = {t["number"]: t["score"] for t in result["tests"] if t["score"] > 0}
        if forged:
            raise AttackSucceeded(f"torch from {place} site-packages earned {forged}")
        assert any("no torch" in t["output"] for t in result["tests"]), json.dumps(result, indent=1)[:3000]
        machine.assert_clean(results_allowed=("results.json",), private_tmp=True)
    finally:
        machine.cleanup()


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_python_dash_m_pytest_from_inside_a_submission_never_runs_its_plugin(isolation, tmp_path, monkeypatch):
    """The submission carries graders/integrations/pytest_plugin.py, a plugin that passes every task
    (pytest_plugin_of_its_own). `python -m pytest -p graders.integrations.pytest_plugin --autograd-lab-submission=.`,
    run from inside it, puts the working folder first on sys.path before pytest imports the plugin: is the run
    refused before the submission's plugin is imported, with no item passed, no total and no JUnit file?"""
    entry = BY_NAME["pytest_plugin_of_its_own"]
    machine = Machine(tmp_path, entry, monkeypatch)
    junit = machine.results / "junit.xml"
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider",
                              "-p", "graders.integrations.pytest_plugin", "--autograd-lab-submission=.",
                              f"--autograd-lab-isolation={isolation}", f"--junitxml={junit}"],
                             cwd=machine.folder, env={**env, "TMPDIR": str(machine.scratch)}, capture_output=True,
                             text=True, timeout=300)
        printed = run.stdout + run.stderr
        if " passed" in printed or "100/100" in printed:
            raise AttackSucceeded(f"the submission's plugin ran: {printed[-1500:]}")
        _no_impostor(machine.context)
        assert run.returncode == pytest.ExitCode.USAGE_ERROR, printed[-3000:]
        assert "refusing to run the pytest plugin with `python -m pytest`" in run.stderr, run.stderr
        assert not junit.exists()
    finally:
        machine.cleanup()


def _judge_folders(scratch: Path) -> list[Path]:
    return sorted(p for p in scratch.glob("agl-scratch*/agl-judge-*") if p.is_dir())


def _holding(marker: str, *folders: Path) -> list[Path]:
    """The copies of the submission (its optim.py) and the files it left (named after ``marker``) under ``folders``."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            with contextlib.suppress(OSError):
                if marker in path.name or (path.name == "optim.py" and marker.encode() in path.read_bytes()):
                    found.append(path)
    return found


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_grade_all_killed_mid_grade_leaves_nothing_after_the_next_run(isolation, tmp_path, monkeypatch):
    """grade-all grades a submission that hangs at import (hang_in_the_judges_folder), and is killed with SIGKILL,
    its judges and workers with it (a lost node), while the copy of the submission lies in its judge's scratch
    folder. Does the next grade-all, of another class, remove that folder, so that nothing of the submission is
    left under the scratch root?"""
    from corpus import make_submission

    from graders.isolation.processes import descendants

    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    entry = BY_NAME["hang_in_the_judges_folder"]
    machine = Machine(tmp_path, entry, monkeypatch)
    env = {**os.environ, "TMPDIR": str(machine.scratch)}
    tasks = ["--tasks", "3.1", "--isolation", isolation, "--jobs", "1"]
    # Where grades are laid out: the judges' folders, or (an older version's, as root under process limits) the
    # shared scratch folder of the temp folder, where a judge whose own was private moved them.
    roots = (machine.scratch, Path(tempfile.gettempdir()) / "agl-scratch")
    first = subprocess.Popen([AUTOGRAD_LAB, "grade-all", str(machine.folder.parent), "--out", str(tmp_path / "one"),
                              *tasks, "--unkeyed"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        end = time.monotonic() + 120
        while not _holding(machine.marker, *roots):
            assert first.poll() is None and time.monotonic() < end, \
                f"the submission was never laid out: {sorted(str(p) for p in machine.scratch.rglob('*'))[:40]}"
            time.sleep(0.5)
        for pid in [first.pid, *descendants(first.pid)]:  # the whole run at once, as a lost node loses it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        first.wait()
        time.sleep(1)
        left = _judge_folders(machine.scratch)
        assert left, "the killed run left no judge's folder (nothing to sweep)"
        second = make_submission(tmp_path / "other-class", "alice", [])
        run = subprocess.run([AUTOGRAD_LAB, "grade-all", str(second.parent), "--out", str(tmp_path / "two"), *tasks,
                              "--unkeyed"],
                             env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        still = [folder for folder in left if folder.exists()]
        assert not still, f"the killed run's judge folders outlived the next run: {still}"
        assert _holding(machine.marker, *roots) == [], "the submission's copy outlived the next run"
    finally:
        for pid in descendants(first.pid) if first.poll() is None else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            first.kill()
        first.wait()
        for path in _holding(machine.marker, *roots):  # a grade's folder that outlived it, whole
            root = next(r for r in roots if r in path.parents)
            shutil.rmtree(root / path.relative_to(root).parts[0], ignore_errors=True)
        machine.cleanup()
