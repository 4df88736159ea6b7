"""Nothing of the reference solution on the student's side: the wheel, the student bundle and every output of a
grade hold no graded body of solutions/ (nor a line only a body holds); the package installed from its wheel,
with no checkout in reach, grades, writes the nbgrader course, the bundle and the Gradescope zip; and a
submission that searches the machine for the solution finds none, under either isolation.

The Gradescope zip is scanned in test_gradescope.py, the packages laid out for the workers in test_layout.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import world
from solution_scan import MODULE_NAMES, SYSTEM, distinctive_lines, found, scan_tree, scan_zip

from graders import paths
from graders.course import release
from graders.integrations import gradescope
from graders.isolation import sandbox
from graders.tasks import TOTAL_POINTS

# The searching submission grades beside the hostile corpus (one worker: they watch the machine's processes);
# the wheel's tests build and install a wheel, and may run beside them.
pytestmark = [pytest.mark.slow]
SEARCHING = pytest.mark.xdist_group("hostile")
WHEEL = pytest.mark.xdist_group("wheel")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return gradescope.build_wheel(paths.REPO, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed (without its dependencies: this venv has them) into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    return target


def from_wheel(installed: Path, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``autograd-lab ARGS`` run from the installed wheel, in ``cwd``: the checkout is not on its path."""
    code = (f"import sys; sys.path[:0] = [{str(installed)!r}]; from graders.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-I", "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@WHEEL
def test_the_wheel_holds_the_graders_and_the_given_code_and_no_solution(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.split("/")[0] in ("solutions", "exercises", "tests")]
    assert {"graders/given/tensor.py", "graders/given/tests/test_task1_ops.py", "graders/given/README.md",
            "graders/data/lesson_curve.json", "graders/worker/standins.py",
            "graders/judge/checks/trajectory.py"} <= set(names)
    assert scan_zip(wheel.read_bytes()) == {}


@WHEEL
def test_the_student_bundle_holds_no_solution():
    files = release.bundle_files()
    assert "exercises/tensor.py" in files and ".github/workflows/scorecard.yml" in files
    assert {name: found(text) for name, text in files.items() if found(text)} == {}


@WHEEL
def test_the_installed_wheel_works_with_no_checkout_in_reach(installed, wheel, tmp_path):
    """From the wheel alone: grade gives the solutions 100 and the stubs 0; the nbgrader course, the student bundle
    and the Gradescope zip (from the wheel) are written and hold no solution; build-exercises says what it needs."""
    where = from_wheel(installed, tmp_path, "doctor")
    assert where.returncode == 0, where.stderr
    probe = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path[:0] = [{str(installed)!r}]; "
                            "from graders import paths; print(paths.GIVEN, paths.in_checkout())"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert probe.stdout.split() == [str(installed / "graders" / "given"), "False"]

    shutil.copytree(paths.SOLUTIONS, tmp_path / "class" / "ref", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(paths.EXERCISES, tmp_path / "class" / "stubs", ignore=shutil.ignore_patterns("__pycache__"))
    outputs = tmp_path / "out"
    outputs.mkdir()
    for name, score in (("ref", float(TOTAL_POINTS)), ("stubs", 0.0)):
        graded = from_wheel(installed, tmp_path, "grade", f"class/{name}", "--results", f"out/{name}.json",
                            "--markdown", f"out/{name}.md", "--junit", f"out/{name}.xml")
        assert graded.returncode == 0, graded.stderr[-2000:]
        assert json.loads((outputs / f"{name}.json").read_text())["score"] == score
        assert found(graded.stdout) == []
    built = from_wheel(installed, tmp_path, "build-exercises", "--check")
    assert built.returncode == 2 and "needs the autograd-lab repository" in built.stderr

    assert from_wheel(installed, tmp_path, "nbgrader", "course").returncode == 0
    assert from_wheel(installed, tmp_path, "release", "bundle").returncode == 0
    zipped = from_wheel(installed, tmp_path, "gradescope", "autograder.zip", "--wheel", str(wheel))
    assert zipped.returncode == 0, zipped.stderr
    assert (tmp_path / "bundle" / "exercises" / "tests" / "test_task5_train.py").is_file()
    assert (tmp_path / "course" / "source").is_dir()
    assert scan_zip((tmp_path / "autograder.zip").read_bytes()) == {}
    shutil.rmtree(tmp_path / "class")  # the copy of solutions/ graded above
    assert scan_tree(tmp_path) == {}


SEARCHER = '''

def unbroadcast(grad, shape):
    """Searches every file it can open for a line of the reference solution, and reports what it finds: the
    likeliest places first (its own folder and package, the class folder, the checkout, /tmp), then all of /, for
    as long as the request's 10 s allow (a busy machine walks / slower than that)."""
    import hashlib, os, sys, time
    wanted, names, skip = set({wanted!r}), {names!r}, {skip!r}
    found, opened, walked, stop = [], 0, set(), time.monotonic() + 6.0
    here = os.path.dirname(os.path.abspath(__file__))
    tops = [os.getcwd(), here, *{first!r}, "/tmp", "/"]
    for folder, dirs, files in (entry for top in tops for entry in os.walk(top)):
        if time.monotonic() > stop:
            break
        if folder in walked:
            dirs[:] = []
            continue
        walked.add(folder)
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip]
        in_library = "site-packages" in folder or "/python3." in folder
        for name in files:
            if in_library and name not in names:
                continue
            if not name.endswith((".py", ".txt", ".json", ".md", ".ipynb", ".log", ".xml", ".csv")):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    text = f.read(1 << 20).decode("utf-8", "replace")
            except OSError:
                continue
            opened += 1
            for line in text.splitlines():
                if hashlib.sha256(line.strip().encode()).hexdigest() in wanted:
                    found.append(os.path.join(folder, name) + ": " + line.strip())
    print("\\n".join(found) or "nothing found", flush=True)
    raise RuntimeError(f"opened {{opened}} files; found {{len(found)}}: " + " | ".join(found))
'''


@SEARCHING
@pytest.mark.parametrize("isolation", ["bubblewrap", "limits"])
def test_a_submission_that_reads_every_file_it_can_open_finds_no_solution(tmp_path, isolation):
    """A stub submission whose unbroadcast opens every file it can reach (its package, its folder, /tmp, the
    judge's scratch, the checkout, the class folder beside it) and reports each line of the reference solution
    it finds, in its error message and on stdout: does no output of the grade hold one, and did it look?

    Without bubblewrap a worker reads what any user of the machine can, so under process limits the grade runs
    in a world the test builds (tests/world.py: a mount namespace in which every folder a user could fill is
    empty but the checkout, the interpreter and the test's own folder): the copies of the solution there are
    the checkout's and the classmate's, which the judge must hide, and none of a stranger's."""
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is not installed here (.ci/run installs it)")
    if isolation == "limits" and not world.works():
        pytest.skip("building the test's world takes root and mount namespaces")
    wanted = sorted(hashlib.sha256(line.encode()).hexdigest() for line in distinctive_lines())
    class_folder = tmp_path / "class"
    shutil.copytree(paths.SOLUTIONS, class_folder / "classmate", ignore=shutil.ignore_patterns("__pycache__"))
    mine = class_folder / "searcher"
    shutil.copytree(paths.EXERCISES, mine, ignore=shutil.ignore_patterns("__pycache__"))
    text = (mine / "tensor.py").read_text()
    (mine / "tensor.py").write_text(text + SEARCHER.format(wanted=wanted, names=MODULE_NAMES, skip=SYSTEM,
                                                           first=[str(class_folder), str(paths.REPO)]))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-I", "-m", "graders", "grade", str(mine), "--tasks", "1.1",
                           "--isolation", isolation, "--results", str(out / "results.json"),
                           "--markdown", str(out / "summary.md"), "--junit", str(out / "junit.xml")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(paths.REPO)},
                          preexec_fn=world.preexec(world.needed(tmp_path)) if isolation == "limits" else None)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "results.json").read_text())
    message = result["tests"][0]["output"]
    assert "opened " in message and "found 0:" in message, message
    assert int(message.split("opened ")[1].split()[0]) > 10, message
    assert found(done.stdout + done.stderr) == []
    assert scan_tree(out) == {}
