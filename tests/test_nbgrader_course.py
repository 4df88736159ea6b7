"""nbgrader end to end, for real: the course `autograd-lab nbgrader` writes, graded by nbgrader itself.

One module fixture builds the course in a temporary folder, in the course of a course file (Adam and the
PyTorch loop left out, 1.4 worth 10 points: tests/sample_course.py), runs `nbgrader generate_assignment`,
submits three students (alice: the reference solution; bob: the solution with a sign flipped in the
backward rule of @, whose notebook also lost two cells and had one edited; mallory: the stubs, with a
notebook and files that try to forge a score and to harm alice, graded before her), runs `nbgrader
autograde` one student at a time and, right after each, `autograd-lab grade` on the same files with the same
course file and the student's key (as `python -m graders grade --course FILE --student ID`), then
`generate_feedback` and `export`. The tests hold nbgrader's numbers
against the CLI's.
Every command runs as a subprocess of this Python; nbgrader gets a kernelspec and Jupyter folders of
the test's own, so neither this machine's Jupyter setup nor in-process warnings can change the result.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
import sample_course

from graders import paths
from graders.course import build, course_file
from graders.integrations import nbgrader_course, nbgrader_judge
from graders.isolation import sandbox
from graders.tasks import TASKS

# One xdist worker for the module, so that its course is built and graded once.
pytestmark = [pytest.mark.nbgrader, pytest.mark.slow, pytest.mark.xdist_group("nbgrader")]

ASSIGNMENT = "autograd_lab"
MATMUL_RULE = "return g @ w.T, x.T @ g"
MATMUL_RULE_SIGN_FLIPPED = "return g @ w.T, -(x.T @ g)"
BOB_DELETES, BOB_EDITS = ("setup", "task_3_1"), "task_1_1"
NBGRADER_TIMEOUT = 1200
# The course: sample_course's (Adam and the PyTorch loop left out, 1.4 worth 10 points).
COURSE_TEXT = sample_course.text("ab" * 32)
COURSE = course_file.parse(COURSE_TEXT, Path("course.toml"))


# What mallory submits as the judge's scorecard: every task's full points
FORGED_SCORECARD = {"score": 100, "tests": [{"number": t.id, "name": t.id, "score": t.points, "max_score": t.points,
                                             "output": "passed"} for t in TASKS]}

# What mallory's notebook cell and her tensor.py (imported by the visible checks) try, each attempt noted in
# the cell's own output (or, from tensor.py, in the kernel's environment) as "ATTEMPT name: what happened".
FORGERIES = r'''
def _forge():
    import glob, os, sqlite3, sys
    said = []

    def attempt(name, action):
        try:
            said.append(f"ATTEMPT {name}: done {action()!r}")
        except BaseException as error:  # noqa: BLE001
            said.append(f"ATTEMPT {name}: {type(error).__name__}: {error}")

    here = os.path.abspath(".")
    up = [os.path.dirname(os.path.dirname(os.path.dirname(here))), *os.path.abspath(here).split(os.sep)[:1]]
    course = next((p for p in up if os.path.exists(os.path.join(p, "gradebook.db"))), up[0])

    def zero_the_classmates():
        db = sqlite3.connect(os.path.join(course, "gradebook.db"))
        db.execute("UPDATE grade SET auto_score = 0")
        db.commit()
        return "scores set to 0"

    def rewrite_a_classmate():
        for path in glob.glob(os.path.join(course, "*", "alice", "*", "tensor.py")):
            open(path, "a").write("\nraise SystemExit\n")
        return glob.glob(os.path.join(course, "*", "alice", "*", "tensor.py"))

    def patch_the_grading_line():
        import graders.notebook
        graders.notebook.task = lambda *args, **kwargs: 10.0
        return "patched"

    def take_the_reference():
        found = [p for pattern in ("/*/solutions/tensor.py", "/*/*/solutions/tensor.py", "/tmp/*/*/solutions/tensor.py")
                 for p in glob.glob(pattern)]
        text = open(found[0]).read()
        open("tensor.py", "w").write(text)
        return found

    def write_the_notebook():
        for path in glob.glob("*.ipynb"):
            open(path, "a").write(" ")
        return glob.glob("*.ipynb")

    for name, action in (("gradebook", zero_the_classmates), ("classmate", rewrite_a_classmate),
                          ("grading_line", patch_the_grading_line), ("reference", take_the_reference),
                          ("notebook_file", write_the_notebook)):
        attempt(name, action)
    return said
'''
FORGING_CELL = FORGERIES + '''
for line in _forge():
    print(line)
print("Task 1.1 (unbroadcast) passed")
4.0
'''


# Markup in a message that reaches the feedback page: it must show as text, never run.
SCRIPT = "<script>alert('mallory')</script>"
SCRIPT_IN_A_MESSAGE = f'''

def unbroadcast(grad, shape):
    raise ValueError({SCRIPT!r})
'''


def submission_files(student: str) -> dict[str, str]:
    """The .py files each student submits."""
    if student == "mallory":
        files = build.expected_exercises(paths.SOLUTIONS)
        files["tensor.py"] += "\n" + FORGERIES + "\n_forge()\n" + SCRIPT_IN_A_MESSAGE
        return files
    files = {path.name: path.read_text() for path in sorted(paths.SOLUTIONS.glob("*.py"))}
    if student == "bob":
        assert files["tensor.py"].count(MATMUL_RULE) == 1, "the reference's rule of @ changed: update this test"
        files["tensor.py"] = files["tensor.py"].replace(MATMUL_RULE, MATMUL_RULE_SIGN_FLIPPED)
    return files


STUDENTS = ("alice", "bob", "mallory")  # graded in this order: mallory's attacks come after alice's grade


def tamper(notebook_path: Path) -> None:
    """Bob deletes the setup cell and one task cell, and rewrites another: nbgrader must put them back."""
    nb = nbformat.read(notebook_path, as_version=4)
    nb.cells = [cell for cell in nb.cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") not in BOB_DELETES]
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == BOB_EDITS:
            cell.source = "4.0"
    nbformat.write(nb, notebook_path)


def forge(notebook_path: Path) -> None:
    """Mallory adds a cell after the setup and one at the end, each trying every forgery."""
    nb = nbformat.read(notebook_path, as_version=4)
    first = nbformat.v4.new_code_cell(FORGING_CELL, id="mallory-first")
    last = nbformat.v4.new_code_cell(FORGING_CELL, id="mallory-last")
    nb.cells.insert(2, first)
    nb.cells.append(last)
    nbformat.write(nb, notebook_path)


def tree_hash(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@contextlib.contextmanager
def clean_configs_removed():
    """Remove, after the block, the config folders that Jupyter processes made under JUPYTER_NO_CONFIG meanwhile:
    one per process, never removed, empty but for a "migrated" mark (530 of them were left in /tmp here)."""
    def found() -> set[str]:
        return set(glob.glob(os.path.join(tempfile.gettempdir(), "jupyter-clean-cfg-*")))

    before = found()
    try:
        yield
    finally:
        for left in found() - before:
            with contextlib.suppress(OSError):  # only what Jupyter put there
                if set(os.listdir(left)) <= {"migrated"}:
                    shutil.rmtree(left)


def jupyter_env(root: Path) -> dict[str, str]:
    """This environment, with Jupyter's folders in ``root`` and a python3 kernelspec that runs this Python."""
    kernel = root / "jupyter-path" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (autograd-lab tests)", "language": "python"}))
    # nbgrader runs with Python's default warning filters, as in an instructor's shell: nbgrader 0.9.6 itself
    # warns (SQLAlchemy's SAWarning "Object of type <SubmittedAssignment> not in session" in autograde),
    # so tox's PYTHONWARNINGS=error would stop it. The cells' stderr is checked below all the same.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    env.update(JUPYTER_PATH=str(root / "jupyter-path"), JUPYTER_DATA_DIR=str(root / "jupyter-data"),
               JUPYTER_RUNTIME_DIR=str(root / "jupyter-runtime"), IPYTHONDIR=str(root / "ipython"),
               JUPYTER_NO_CONFIG="1")
    # nbgrader runs `alembic` (its database migrations) from PATH: this Python's scripts come first, as in an
    # activated virtual environment (a venv run as .venv/bin/python -m pytest, unactivated, has them elsewhere).
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])
    return env


def nbgrader(course: Path, env: dict[str, str], *args: str) -> float:
    """Run ``python -m nbgrader ARGS`` in the course directory; returns its seconds."""
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=NBGRADER_TIMEOUT)
    seconds = time.perf_counter() - start
    assert run.returncode == 0, f"nbgrader {' '.join(args)} exited {run.returncode}:\n{run.stdout[-3000:]}" \
                                f"\n{run.stderr[-6000:]}"
    return seconds


def cli_grade(folder: Path, scratch: Path, course: Path, student: str) -> tuple[dict, float]:
    """``autograd-lab grade FOLDER --course FILE --student ID --results FILE`` (a fresh process, as an instructor
    runs it, with the key nbgrader's grade of the student had): the results dict and the seconds it took."""
    scratch.mkdir()
    start = time.perf_counter()
    command = [sys.executable, "-I", "-m", "graders", "grade", str(folder), "--results", "results.json",
               "--course", str(course), "--student", student]
    run = subprocess.run(command, cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=NBGRADER_TIMEOUT)
    seconds = time.perf_counter() - start
    assert run.returncode in (0, 3), f"autograd-lab grade exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
    return json.loads((scratch / "results.json").read_text()), seconds


def task_scores(results: dict) -> dict[str, float]:
    return {test["number"]: test["score"] for test in results["tests"]}


@dataclass
class Graded:
    course: Path
    autograde_seconds: dict[str, float] = field(default_factory=dict)
    cli_seconds: dict[str, float] = field(default_factory=dict)
    cli: dict = field(default_factory=dict)  # student -> the CLI's results.json, as a dict
    alice_cells_before_mallory: dict = field(default_factory=dict)
    alice_files_before_mallory: dict = field(default_factory=dict)
    kernel_refused: bool = False  # graded without bubblewrap: no kernel ran a notebook
    report: subprocess.CompletedProcess | None = None  # autograd-lab nbgrader-report COURSE --out ROOT/report

    def submitted(self, student: str) -> Path:
        return self.course / "submitted" / student / ASSIGNMENT

    def autograded_notebook(self, student: str):
        return nbformat.read(self.course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                             as_version=4)

    def said(self, student: str, grade_id: str) -> str:
        """What the autograded cell ``grade_id`` of ``student`` printed (for a failure's message)."""
        cells = [c for c in self.autograded_notebook(student).cells
                 if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
        return "".join(o.get("text", "") or str(o.get("data", "")) for c in cells for o in c.outputs)[-3000:]

    def feedback_text(self, student: str) -> str:
        page = (self.course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module", autouse=True)
def _no_clean_configs_left():
    with clean_configs_removed():
        yield


@pytest.fixture(scope="module", params=["bubblewrap", "no-bubblewrap"])
def graded(tmp_path_factory, request) -> Graded:
    """The course, graded where bubblewrap jails the kernel (and sandboxes the judge's workers), and again with
    bubblewrap out of PATH and the course set to grade with process limits (JudgeGrades.isolation, as an
    instructor without bubblewrap sets it: an autograde counts, so it never falls back by itself): no kernel runs
    the notebooks then (each cell says why), the workers run under process limits, and every score is the judge's
    all the same."""
    if request.param == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is missing or cannot make a sandbox here")
    if request.param == "no-bubblewrap" and os.geteuid() != 0:
        pytest.skip("without bubblewrap the judge's workers share the instructor's uid unless run as root")
    # A folder every user can search, as a course folder is: the kernel's user (nobody) reaches its own folder
    # (pytest's temporary folders are 0700).
    root = Path(tempfile.mkdtemp(prefix="agl-nbgrader-"))
    os.chmod(root, 0o755)
    try:  # the folder holds a copy of the reference that any user may read: never left behind
        env = jupyter_env(root)
        if request.param == "no-bubblewrap":
            env["PATH"] = str(Path(sys.executable).parent)
        result = Graded(root / "course", kernel_refused=request.param == "no-bubblewrap")
        (root / "course.toml").write_text(COURSE_TEXT)
        nbgrader_course.build_course(result.course, ASSIGNMENT, course_path=root / "course.toml")
        if request.param == "no-bubblewrap":
            with open(result.course / "nbgrader_config.py", "a") as config:
                config.write('c.JudgeGrades.isolation = "limits"\n')
        nbgrader(result.course, env, "generate_assignment", ASSIGNMENT)
        released = result.course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        for student in STUDENTS:
            folder = result.submitted(student)
            folder.mkdir(parents=True)
            (folder / released.name).write_bytes(released.read_bytes())
            for name, text in submission_files(student).items():
                (folder / name).write_text(text)
        tamper(result.submitted("bob") / released.name)
        forge(result.submitted("mallory") / released.name)
        # a scorecard of her own making where nbgrader-report reads the judge's (nbgrader copies every file)
        (result.submitted("mallory") / nbgrader_judge.RESULTS_FILE).write_text(json.dumps(FORGED_SCORECARD))

        for student in STUDENTS:
            if student == "mallory":
                result.alice_cells_before_mallory = gradebook_cells(result.course, "alice")
                result.alice_files_before_mallory = tree_hash(result.course / "autograded" / "alice")
            result.autograde_seconds[student] = nbgrader(result.course, env, "autograde", ASSIGNMENT,
                                                         "--student", student)
            result.cli[student], result.cli_seconds[student] = cli_grade(result.submitted(student), root / student,
                                                                         root / "course.toml", student)
        nbgrader(result.course, env, "generate_feedback", ASSIGNMENT)
        nbgrader(result.course, env, "export", "--to", "grades.csv")
        # the class report: one more student enrolled who never submitted, and one whose work is not autograded
        nbgrader(result.course, env, "db", "student", "add", "zed")
        (result.submitted("yan")).mkdir(parents=True)
        (result.submitted("yan") / released.name).write_bytes(released.read_bytes())
        result.report = subprocess.run(
            [sys.executable, "-I", "-m", "graders", "nbgrader-report", str(result.course), "--out", "report",
             "--course", str(root / "course.toml")],
            cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=NBGRADER_TIMEOUT)
        yield result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def gradebook_cells(course: Path, student: str) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, student)
        return {g.name: (g.auto_score, g.max_score) for nb in submission.notebooks for g in nb.grades}


def test_the_class_report_reads_the_judges_scorecards_and_names_who_was_not_graded(graded):
    """Does `autograd-lab nbgrader-report` give each autograded student the CLI's score (mallory's own scorecard,
    submitted under the judge's file name, counts for nothing), name bob under task 1.4, and list the enrolled
    student who never submitted and the one not autograded yet?"""
    run = graded.report
    assert run.returncode == 0, run.stdout + run.stderr
    out = graded.course.parent / "report"
    with open(out / "grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == {*STUDENTS, "yan", "zed"}
    for student in STUDENTS:
        assert float(rows[student]["total"]) == pytest.approx(graded.cli[student]["score"]), student
        assert task_scores(json.loads((out / "students" / student / "results.json").read_text())) == task_scores(
            graded.cli[student])
    assert rows["zed"]["status"].startswith("did not submit") and rows["yan"]["status"].startswith("submitted, but")
    text = (out / "class.md").read_text()
    assert "bob" in text.split("### 1.4 ", 1)[1].split("\n### ", 1)[0]
    students = text.split("## Students", 1)[1]
    assert "| zed | 0 | did not submit" in students and "| yan | 0 | submitted, but" in students
    assert (out / "class.html").is_file()


def test_each_students_total_in_grades_csv_equals_the_cli_score(graded):
    """Does the grades.csv from `nbgrader export` give each student the score the CLI's judge gives the same files?"""
    with open(graded.course / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(STUDENTS)
    for student in STUDENTS:
        results = graded.cli[student]
        assert float(rows[student]["score"]) == pytest.approx(results["score"]), student
        most = float(rows[student]["max_score"])
        assert most == pytest.approx(results["extra_data"]["max_score"]) == sample_course.TOTAL


def test_the_three_students_score_as_their_files_deserve(graded):
    """Do the reference solution score full marks in the course, its total, in the gradebook as in the CLI, the
    stubs 0 (whatever mallory's notebook tried), and the broken rule of @ lose task 1.4's 10 points?"""
    from nbgrader.api import Gradebook

    assert graded.cli["alice"]["score"] == sample_course.TOTAL, task_scores(graded.cli["alice"])
    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}") as gradebook:
        alice = gradebook.find_submission(ASSIGNMENT, "alice")
        assert (alice.score, alice.max_score) == (sample_course.TOTAL, sample_course.TOTAL)
    assert graded.cli["mallory"]["score"] == 0
    assert task_scores(graded.cli["bob"])["1.4"] == 0 and graded.cli["bob"]["score"] < sample_course.TOTAL


def test_the_gradebook_holds_every_cells_score_as_the_cli_scores_its_task(graded):
    """Does nbgrader's database hold, per student, one score per task cell equal to the CLI's for that task?"""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}") as gradebook:
        for student in STUDENTS:
            submission = gradebook.find_submission(ASSIGNMENT, student)
            cells = {g.name: (g.auto_score, g.max_score) for nb in submission.notebooks for g in nb.grades}
            scores = task_scores(graded.cli[student])
            expected = {task.marker.replace("task", "task_"): (scores[task.id], float(COURSE.points(task.id)))
                        for task in TASKS if task.id in COURSE.tasks}
            differ = {name: score for name, score in cells.items() if score != expected.get(name, (0.0, 0.0))}
            assert cells == {**expected, nbgrader_course.SETUP_ID: (0.0, 0.0)}, \
                (student, {name: (score, graded.said(student, name)) for name, score in differ.items()})
            assert submission.score == pytest.approx(graded.cli[student]["score"])


def test_no_graded_cell_raised_or_wrote_to_stderr(graded):
    """Did every graded cell of every student run without an error and without a line on stderr?"""
    for student in STUDENTS:
        for cell in graded.autograded_notebook(student).cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                bad = [o for o in cell.outputs if o.output_type == "error" or o.get("name") == "stderr"]
                assert not bad, f"{student}, {cell.metadata.nbgrader.grade_id}: {bad}"


def test_deleted_and_edited_cells_are_put_back_before_grading(graded):
    """Does autograde restore the cells bob deleted and the one he rewrote, so each runs as written?"""
    cells = {c.metadata.nbgrader.grade_id: c for c in graded.autograded_notebook("bob").cells
             if "nbgrader" in c.metadata and "grade_id" in c.metadata.nbgrader}
    for grade_id in (*BOB_DELETES, BOB_EDITS):
        assert grade_id in cells, grade_id
    assert 'visible_check("1.1")' in cells[BOB_EDITS].source and cells[BOB_EDITS].source != "4.0"


def test_feedback_shows_each_tasks_message_and_no_grader_code(graded):
    """Does each student's feedback page show the CLI's message for every task, and nothing of the graders?"""
    for student in STUDENTS:
        text = graded.feedback_text(student)
        for test in graded.cli[student]["tests"]:
            first_line = test["output"].splitlines()[0]
            cell = "task_" + test["number"].replace(".", "_")
            assert first_line in text, (f"{student}, task {test['number']}: {first_line!r} not in the feedback; "
                                        f"the cell said: {graded.said(student, cell)}")
        assert "HIDDEN TESTS" not in text and "from graders" not in text


def test_mallorys_forgeries_change_nothing_but_her_own_outputs(graded):
    """Mallory's cells and files tried to zero the gradebook, rewrite alice's files, patch a grading line, take
    the reference and rewrite her notebook. Did each attempt fail, did alice keep every cell's score and every
    file, and do mallory's graded cells show the judge's verdict (0), not her printed 4.0?"""
    nb = graded.autograded_notebook("mallory")
    said = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    attempts = dict(re.findall(r"ATTEMPT (\w+): (.*)", said))
    if graded.kernel_refused:  # no kernel ran her cells: each says why, none tried anything
        assert attempts == {} and "Not run: " in said, said[-3000:]
    else:
        assert set(attempts) == {"gradebook", "classmate", "grading_line", "reference", "notebook_file"}, \
            said[-3000:]
        assert not any(value.startswith("done") and name in ("gradebook", "grading_line", "reference",
                                                             "notebook_file") for name, value in attempts.items()), \
            attempts
        assert attempts["classmate"] in ("done []",) or not attempts["classmate"].startswith("done"), attempts
    assert gradebook_cells(graded.course, "alice") == graded.alice_cells_before_mallory
    assert tree_hash(graded.course / "autograded" / "alice") == graded.alice_files_before_mallory
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("task_"):
            results = [o for o in cell.outputs if o.output_type == "execute_result"]
            assert [o.data["text/plain"] for o in results] == ["0.0"], (grade_id, cell.outputs)
    assert gradebook_cells(graded.course, "mallory")["task_1_1"] == (0.0, 4.0)
    page = (graded.course / "feedback" / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert SCRIPT not in page and html.escape(SCRIPT, quote=False) in page.replace("&#39;", "'"), \
        "the message's markup is escaped in the feedback page"


def test_autograde_starts_one_judge_per_student_not_one_per_cell(graded, capsys):
    """Does autograde take about one grading's time per student (the cells share one judge), and what are
    the seconds next to `autograd-lab grade` on the same files? (printed)"""
    with capsys.disabled():
        print("\nseconds per student: nbgrader autograde vs autograd-lab grade on the same files")
        for student in STUDENTS:
            print(f"  {student:<6} autograde {graded.autograde_seconds[student]:6.1f} s   autograd-lab grade "
                  f"{graded.cli_seconds[student]:6.1f} s   score {graded.cli[student]['score']:g}/100")
    slowest = max(STUDENTS, key=graded.cli_seconds.get)
    assert graded.autograde_seconds[slowest] < 8 * graded.cli_seconds[slowest] + 120, \
        "autograde took many gradings' time: does JudgeGrades grade once per student?"


# nbgrader's own entry point, run with a report at its very end (an exit handler registered before nbgrader's
# own, so it runs after them): whether this process started a judge, and how many objects Python's last
# collection was told to leave alone.
NBGRADER_REPORTING = """
import atexit, gc, runpy, sys
def report():
    judge = sys.modules.get("graders.integrations.nbgrader_judge")
    print(f"REPORT started={bool(judge and judge._grading.started)} frozen={gc.get_freeze_count() > 0}",
          file=sys.stderr)
atexit.register(report)
sys.argv = ["nbgrader", *sys.argv[1:]]
runpy.run_module("nbgrader", run_name="__main__")
"""


def test_autograde_starts_its_judge_as_it_reads_the_config_and_no_other_command_does(tmp_path):
    """The course's config starts the judge as `nbgrader autograde` reads it, before nbgrader makes JudgeGrades:
    does autograde start it (here with no notebook to grade at all), and do the other commands that read the
    same config (db, generate_assignment) start none? A process that started a judge leaves without Python's
    last collection of what it loaded (gc.freeze, 1.1-1.4 s of nbgrader's exit here); the others are left alone.
    (That nothing autograde writes is lost by it, the gradebook and notebooks, the tests above check.)"""
    env, course = jupyter_env(tmp_path), tmp_path / "course"
    nbgrader_course.build_course(course, ASSIGNMENT)
    (course / "submitted" / "nobody" / ASSIGNMENT).mkdir(parents=True)
    said = {}
    for command in (["db", "student", "list"], ["generate_assignment", ASSIGNMENT],
                    ["autograde", ASSIGNMENT, "--student", "nobody"]):
        run = subprocess.run([sys.executable, "-c", NBGRADER_REPORTING, *command], cwd=course, env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=NBGRADER_TIMEOUT)
        reports = [line for line in run.stderr.splitlines() if line.startswith("REPORT ")]
        assert reports, f"nbgrader {' '.join(command)} exited {run.returncode}:\n{run.stderr[-3000:]}"
        said[command[0]] = reports[-1]
    assert said == {"db": "REPORT started=False frozen=False",
                    "generate_assignment": "REPORT started=False frozen=False",
                    "autograde": "REPORT started=True frozen=True"}


def test_an_instructors_own_points_in_a_cell_are_honoured_and_no_student_is_dropped():
    """An instructor sets cell task_3_3 to 10 points and task_6_1 to 0 in the source notebook, then runs
    generate_assignment --force and autograde --force (before, nbgrader stopped on "partial credit cannot be greater
    than maximum points for cell" and dropped the student from the gradebook). Is the reference scored with the
    cells' own points (3.3: 10 of 10, the judge's share of them; 6.1: 0 of 0), the difference from the course file
    said in autograde's log naming the file, and the student kept in the gradebook and its export?"""
    from nbgrader.api import Gradebook

    root = Path(tempfile.mkdtemp(prefix="agl-nbgrader-"))
    os.chmod(root, 0o755)  # the kernel's user reaches its folder, as in a course folder
    try:
        env, course = jupyter_env(root), root / "course"
        nbgrader_course.build_course(course, ASSIGNMENT)  # the course directory's own course file, a fresh secret
        assert (course / nbgrader_course.COURSE_FILE).is_file()
        nbgrader(course, env, "generate_assignment", ASSIGNMENT)
        released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        folder = course / "submitted" / "alice" / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / released.name).write_bytes(released.read_bytes())
        for name, text in submission_files("alice").items():
            (folder / name).write_text(text)
        nbgrader(course, env, "autograde", ASSIGNMENT, "--student", "alice")

        source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        nb = nbformat.read(source, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in ("task_3_3", "task_6_1"):
                cell.metadata.nbgrader.points = 10 if grade_id == "task_3_3" else 0
        nbformat.write(nb, source)
        nbgrader(course, env, "generate_assignment", ASSIGNMENT, "--force")
        run = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force", "--student",
                              "alice"], cwd=course, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=NBGRADER_TIMEOUT)
        assert run.returncode == 0, run.stderr[-6000:]
        assert "partial credit cannot be greater" not in run.stderr
        assert re.search(r"cell task_3_3 is worth 10 points in the notebook and task 3.3 5 in the course file "
                         rf"\S*{re.escape(nbgrader_course.COURSE_FILE)}", run.stderr), run.stderr[-3000:]
        cells = gradebook_cells(course, "alice")
        assert cells["task_3_3"] == (10.0, 10.0) and cells["task_6_1"] == (0.0, 0.0) and cells["task_1_4"] == (5, 5)
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            assert gradebook.find_submission(ASSIGNMENT, "alice").score == pytest.approx(101)
        nbgrader(course, env, "export", "--to", "grades.csv")
        with open(course / "grades.csv", newline="") as f:
            assert [(row["student_id"], float(row["score"])) for row in csv.DictReader(f)] == [("alice", 101.0)]
    finally:
        shutil.rmtree(root, ignore_errors=True)
