"""Does every way of grading that counts run with the isolation it was set up for, or refuse, saying what is missing
and the fix? Does a worker see only what is listed in? Are a killed run's judge folders swept?

The attacks that these close are in the hostile corpus (tests/hostile.py: classmate_from_the_command_line,
torch_from_another_environment, pytest_plugin_of_its_own, hang_in_the_judges_folder) and graded by
tests/test_hostile.py; here are the rules beneath them, each with the machine made to lack what it needs.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import messages as msg
from graders.isolation import judge_folders, listing, sandbox
from graders.judge.grade import grade

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "graders" / "templates"
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))
NO_BUBBLEWRAP = "bubblewrap cannot make a sandbox here (bwrap: setting up uid map: Permission denied)"


@pytest.fixture
def without_bubblewrap(monkeypatch):
    """This process's judge as on an Actions runner where AppArmor stops bubblewrap."""
    monkeypatch.setattr(sandbox, "bubblewrap_problem", lambda: NO_BUBBLEWRAP)


def test_auto_refuses_below_bubblewrap_unless_the_grade_is_practice(without_bubblewrap):
    """Where bubblewrap cannot start: do auto and bubblewrap refuse a grade that counts, saying why and the fix,
    while a student's practice grade falls back from auto (never from bubblewrap asked by name)?"""
    for mode in ("auto", "bubblewrap"):
        with pytest.raises(sandbox.Unavailable) as refused:
            sandbox.choose(mode)
        assert "refusing to grade" in str(refused.value) and NO_BUBBLEWRAP in str(refused.value)
        assert "To fix it: " in str(refused.value)
    with pytest.raises(sandbox.Unavailable):
        sandbox.choose("bubblewrap", practice=True)
    fallback = sandbox.choose("auto", practice=True)
    assert not fallback.bubblewrap and fallback.level != "bubblewrap"
    note = sandbox.fallback_note("auto")
    assert note is not None and NO_BUBBLEWRAP in note and "never for a grade that counts" in note
    assert sandbox.fallback_note("limits") is None


def test_limits_refuse_a_judge_that_is_not_root_or_may_make_no_mount_namespace(monkeypatch):
    """Does --isolation limits, for a grade that counts, refuse a judge that is not root (the worker would be the
    judge's uid) and one that may make no mount namespace (the worker would see every file), saying which?"""
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with pytest.raises(sandbox.Unavailable, match="the judge is not root"):
        sandbox.choose("limits")
    assert sandbox.choose("limits", practice=True).level == "judge-uid"
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox, "namespaces_work", lambda: False)
    with pytest.raises(sandbox.Unavailable, match="may make no mount namespace"):
        sandbox.choose("limits")
    assert sandbox.choose("limits", practice=True).level == "limits-no-namespace"


def test_the_refusal_names_the_fix_for_the_machine(monkeypatch):
    """Not installed: install it; a user whom AppArmor stops (Ubuntu 24.04): the sysctl; root without CAP_SYS_ADMIN
    (a container): a privileged container. Does the fix fit the case?"""
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    assert sandbox.bubblewrap_fix() == msg.ISOLATION_FIX_INSTALL
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1001)
    monkeypatch.setattr(sandbox, "_apparmor_refuses_userns", lambda: True)
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in sandbox.bubblewrap_fix()
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox, "_has_sys_admin", lambda: False)
    assert "privileged: true" in sandbox.bubblewrap_fix()


def test_every_grade_that_counts_refuses_where_bubblewrap_cannot_start(without_bubblewrap, tmp_path, capsys):
    """grade-all, the Gradescope runner and grade with --isolation bubblewrap, where bubblewrap cannot start: does
    each refuse (grade-all and grade exit 2 with the reason; Gradescope's results.json says it was not graded and
    why, exit 1), with no student graded?"""
    from graders.cli import main
    from graders.course import course_file
    from graders.integrations import gradescope

    classroom = tmp_path / "class"
    shutil.copytree(REPO / "exercises", classroom / "alice", ignore=shutil.ignore_patterns("tests", "*.md", "*.txt"))
    assert main(["grade-all", str(classroom), "--out", str(tmp_path / "out"), "--tasks", "1.1", "--unkeyed"]) == 2
    assert NO_BUBBLEWRAP in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert main(["grade", str(classroom / "alice"), "--tasks", "1.1", "--isolation", "bubblewrap"]) == 2
    assert "--isolation bubblewrap was asked for" in capsys.readouterr().err
    results, course, metadata = tmp_path / "results.json", tmp_path / "course.toml", tmp_path / "metadata.json"
    course_file.init(course)  # with its secret, and whose submission it is: a key, so only the sandbox is missing
    metadata.write_text(json.dumps({"users": [{"id": 1234}], "created_at": "2027-03-01T12:00:00+00:00"}))
    assert gradescope.run(classroom / "alice", results, course, metadata, isolation="bubblewrap") == 1
    refused = json.loads(results.read_text())
    assert refused["score"] == 0 and refused["tests"] == [] and NO_BUBBLEWRAP in refused["output"]


def test_a_judge_of_grade_all_or_nbgrader_answers_not_graded_where_the_isolation_cannot_be_had(without_bubblewrap):
    """A judge process (grade-all's, nbgrader's) asked to grade where bubblewrap cannot start: does it answer that
    the submission was not graded, with the reason and the fix (nbgrader shows it in every graded cell), never a
    crash or a grade with less?"""
    from graders.classgrade import batch_judge

    answer = batch_judge.grade_job({"student": "alice", "path": str(REPO / "solutions"), "tasks": ["1.1"],
                                    "isolation": "auto", "with_result": True})
    assert answer["status"] == msg.BATCH_REFUSED.format(reason=answer["reason"]) and "result" not in answer
    assert NO_BUBBLEWRAP in answer["reason"] and "To fix it" in answer["reason"]


def test_a_students_own_grade_falls_back_and_says_so(without_bubblewrap, tmp_path, capsys):
    """Where bubblewrap cannot start, does a student's `autograd-lab grade` still grade (practice), say so on stderr,
    and record the isolation it used in results.json?"""
    from graders.cli import main

    results = tmp_path / "results.json"
    assert main(["grade", str(REPO / "solutions"), "--tasks", "1.1", "--results", str(results)]) == 0
    assert "never for a grade that counts" in capsys.readouterr().err
    result = json.loads(results.read_text())
    assert result["score"] == 4 and result["extra_data"]["isolation"] == sandbox.choose("limits", practice=True).level


def test_results_json_records_the_isolation_used():
    """Does results.json say, beside the scorecard's line, which isolation the grade ran under, by its short name?"""
    from graders.results import scorecard

    for mode in ("bubblewrap", "limits"):
        if mode == "bubblewrap" and not sandbox.bubblewrap_works():
            continue
        result = scorecard.results(grade(REPO / "exercises", task_ids=("1.1",), isolation=mode))
        assert result["extra_data"]["isolation"] == sandbox.choose(mode).level == mode


def test_a_judge_without_cap_sys_admin_refuses_to_grade_a_class_and_says_why(tmp_path):
    """Run as root without CAP_SYS_ADMIN (a container's judge, made here with capsh): does grade-all refuse with
    auto (bubblewrap cannot start) and with limits (no mount namespace), naming the fix, and does a student's own
    grade fall back, saying so?"""
    if os.geteuid() != 0 or shutil.which("capsh") is None:
        pytest.skip("dropping CAP_SYS_ADMIN takes root and capsh")
    classroom = tmp_path / "class"
    shutil.copytree(REPO / "solutions", classroom / "alice")
    env = {**os.environ, "TMPDIR": str(tmp_path)}

    def dropped(*args):
        return subprocess.run(["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$0" "$@"', AUTOGRAD_LAB, *args],
                              env=env, capture_output=True, text=True, timeout=600)

    auto = dropped("grade-all", str(classroom), "--out", str(tmp_path / "out"), "--tasks", "1.1", "--unkeyed")
    assert auto.returncode == 2 and "refusing to grade" in auto.stderr and "CAP_SYS_ADMIN" in auto.stderr
    assert "privileged: true" in auto.stderr
    limits = dropped("grade-all", str(classroom), "--out", str(tmp_path / "out"), "--tasks", "1.1", "--unkeyed",
                     "--isolation", "limits")
    assert limits.returncode == 2 and "may make no mount namespace" in limits.stderr
    assert not (tmp_path / "out").exists()
    practice = dropped("grade", str(classroom / "alice"), "--tasks", "1.1", "--results", str(tmp_path / "r.json"))
    assert practice.returncode == 0, practice.stderr[-2000:]
    assert "never for a grade that counts" in practice.stderr
    assert json.loads((tmp_path / "r.json").read_text())["extra_data"]["isolation"] == "limits-no-namespace"


def test_the_templates_ask_for_bubblewrap_and_give_it_what_it_needs():
    """Does every template that grades for a grade that counts ask for bubblewrap by name (so it refuses rather than
    settle for less), and set up what bubblewrap needs: the AppArmor setting on Actions runners (the students'
    scorecard workflow too, a practice grade that falls back only where that still fails), a privileged pod on
    Kubernetes?"""
    cluster = TEMPLATES / "cluster"
    student = (TEMPLATES / "student" / "scorecard.yml").read_text()
    actions = (cluster / "github-actions-matrix.yml").read_text()
    kubernetes = (cluster / "kubernetes-indexed-job.yaml").read_text()
    slurm = (cluster / "slurm-array.sbatch").read_text()
    gradescope = (TEMPLATES / "gradescope" / "run_autograder").read_text()
    for text in (actions, kubernetes, slurm, gradescope):
        assert "--isolation bubblewrap" in text
    for text in (student, actions):
        assert "sudo apt-get install -y -q bubblewrap" in text and "|| true" not in text
        assert "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in text
    assert "privileged: true" in kubernetes and "runAsUser: 0" in kubernetes


def test_a_worker_sees_numpy_alone_of_the_installed_packages():
    """What the list shows a worker of the numpy tasks: numpy's files and no other installed package's (no
    site-packages folder but numpy's own entries), the standard library without its site-packages, no torch; and a
    worker of the loop, torch and what torch requires beside numpy?"""
    numpy_only = listing.worker(torch_too=False)
    bound = [e.path for e in numpy_only if e.kind == "bind"]
    packages = [p for p in bound if "-packages" in p]
    assert packages and all(os.path.basename(p).startswith("numpy") for p in packages), packages
    assert not any("torch" in p for p in bound)
    stdlib = os.path.dirname(os.__file__)
    covered = [e.path for e in numpy_only if e.kind == "cover"]
    if os.path.isdir(os.path.join(stdlib, "site-packages")):
        assert os.path.join(os.path.realpath(stdlib), "site-packages") in covered
    with_torch = [e.path for e in listing.worker(torch_too=True) if e.kind == "bind"]
    assert any(os.path.basename(p) == "torch" for p in with_torch)
    assert {"numpy", "torch"} <= {n.lower() for n in listing.distributions(torch_too=True)}


PROBE = '''
def unbroadcast(grad, shape):
    """Says what this worker can see of the machine's Python packages."""
    import glob, os, sys
    seen = sorted({os.path.basename(p) for entry in sys.path if entry.endswith("-packages")
                   for p in glob.glob(os.path.join(entry, "*"))})
    version = "python%d.%d" % sys.version_info[:2]
    others = [p for p in ("/usr/lib/python3/dist-packages", f"/usr/local/lib/{version}/dist-packages",
                          os.path.join(sys.base_prefix, "lib", version, "site-packages"), "/home", "/opt")
              if os.path.exists(p) and os.listdir(p)]
    raise RuntimeError("seen: " + " ".join(seen) + " | others: " + " ".join(others))
'''


@pytest.mark.parametrize("isolation", ("bubblewrap", "limits"))
def test_a_workers_filesystem_lists_in_what_it_needs(isolation, tmp_path):
    """A worker of task 1.1 says what its site-packages hold, and whether the system's packages, the base
    interpreter's site-packages, /home or /opt hold anything for it: numpy's entries only, and nothing there, under
    either isolation?"""
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    if isolation == "limits" and sandbox.limits_problem() is not None:
        pytest.skip(sandbox.limits_problem())
    folder = tmp_path / "probe"
    shutil.copytree(REPO / "exercises", folder, ignore=shutil.ignore_patterns("tests", "*.md", "*.txt"))
    (folder / "tensor.py").write_text((folder / "tensor.py").read_text() + PROBE)
    [result] = grade(folder, task_ids=("1.1",), isolation=isolation).results
    said = result.message.split("seen: ", 1)[1].split("\n", 1)[0]
    seen, others = said.split("| others:")
    assert seen.split() and all(name.startswith("numpy") for name in seen.split()), said
    assert others.strip() == "", said


def test_a_judge_folder_is_swept_once_no_process_holds_its_lock(tmp_path):
    """A judge's folder with its lock held (its pool or judge alive) is kept; once every holder is gone, the next
    sweep removes it and its lock; a lock left without its folder goes too; an older version's folder (no lock) is
    kept while a process works in it."""
    held, fd = judge_folders.claim(tmp_path)
    (held / "agl-grade" / "pkgs").mkdir(parents=True)
    (held / "agl-grade" / "pkgs" / "tensor.py").write_text("a copy of a submission")
    gone, gone_fd = judge_folders.claim(tmp_path)
    os.close(gone_fd)  # its pool and judge were killed: nobody holds the lock
    orphan = tmp_path / f"{judge_folders.JUDGE_PREFIX}orphan{judge_folders.LOCK_SUFFIX}"
    orphan.write_text("")
    assert judge_folders.sweep(tmp_path) == [gone]
    assert held.is_dir() and not gone.exists() and not Path(f"{gone}{judge_folders.LOCK_SUFFIX}").exists()
    assert not orphan.exists()
    with open(f"{held}{judge_folders.LOCK_SUFFIX}") as f:  # still locked by fd
        with pytest.raises(BlockingIOError):
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)
    assert judge_folders.sweep(tmp_path) == [held] and not held.exists()
    legacy = tmp_path / f"{judge_folders.JUDGE_PREFIX}legacy"
    legacy.mkdir()
    old = os.stat(legacy).st_mtime - 2 * judge_folders.LEGACY_GRACE
    os.utime(legacy, (old, old))
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=legacy)
    try:
        assert judge_folders.sweep(tmp_path) == [] and legacy.is_dir()
    finally:
        worker.kill()
        worker.wait()
    os.utime(legacy, (old, old))
    assert judge_folders.sweep(tmp_path) == [legacy]
