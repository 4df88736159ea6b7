"""Does grade-all grade a class as `autograd-lab grade` grades each student, and survive what a class brings:
wrong, hostile and malformed submissions, .zip files, shards, a batch killed halfway, a judge that hangs or dies?

The slow tests grade a small class on two tasks only (1.1 and 5.4: about 2 s a
submission here), so that a class costs seconds, not minutes.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from pathlib import Path

import pytest
from corpus import BY_NAME, TASKS_OF_FILE, make_submission

from graders import messages
from graders.classgrade import batch, gradebook, pool, progress
from graders.classgrade.gradebook import Record
from graders.cli import main
from graders.results import outputs, pictures
from graders.submission import intake
from graders.submission.layout import SubmissionError
from graders.tasks import BY_ID

REPO = Path(__file__).resolve().parent.parent
TASKS = ("1.1", "5.4")


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


def hostile(tmp: Path, name: str, line: str) -> Path:
    """solutions/ with ``line`` run when tensor.py is imported."""
    future = "from __future__ import annotations\n"
    return make_submission(tmp, name, [("tensor.py", future, future + line + "\n")])


def make_class(root: Path) -> Path:
    """Six students: correct, wrong, malformed, a correct one as a .zip of its exercises/ folder, stubs, hostile."""
    subs = root / "submissions"
    subs.mkdir(parents=True)
    make_submission(subs, "alice", [])
    make_submission(subs, "bob", [BY_NAME["unbroadcast_forgets_keepdims"]])
    (subs / "carol").mkdir()
    (subs / "carol" / "notes.txt").write_text("I ran out of time, sorry\n")
    zip_folder(make_submission(root / "dave", "exercises", []), subs / "dave.zip", prefix="exercises/")
    shutil.copytree(REPO / "exercises", subs / "erin", ignore=shutil.ignore_patterns("__pycache__"))
    hostile(subs, "frank", "import os; os._exit(0)")
    return subs


def grade_alone(folder: Path, results: Path) -> bytes:
    assert main(["grade", str(folder), "--tasks", ",".join(TASKS), "--results", str(results)]) == 0
    return results.read_bytes()


def csv_rows(path: Path, *, seconds: bool = False) -> list[dict]:
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        rows = list(csv.DictReader(f))
    if not seconds:
        for row in rows:
            row.pop("seconds")
    return rows

# One xdist worker for the module: its graded class (a module fixture) is graded once.
pytestmark = pytest.mark.xdist_group("batch")


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    subs = make_class(root)
    lines = []
    summary = batch.grade_all(subs, root / "out", jobs=2, settings=batch.Settings(tasks=TASKS),
                              progress=lambda line, final: lines.append(line))
    return subs, root / "out", summary, lines


# ----- the whole class -----


@pytest.mark.slow
def test_every_student_gets_the_same_results_json_as_grade_alone(graded_class, tmp_path):
    """Does grade-all write, for every gradable student, byte for byte the results.json that `grade` writes?"""
    subs, out, summary, _ = graded_class
    folders = {"alice": subs / "alice", "bob": subs / "bob", "dave": subs.parent / "dave" / "exercises",
               "erin": subs / "erin", "frank": subs / "frank"}
    for student, folder in folders.items():
        alone = grade_alone(folder, tmp_path / student / "results.json")
        assert (out / "students" / student / "results.json").read_bytes() == alone, student


@pytest.mark.slow
def test_grades_csv_has_one_row_per_student_with_points_status_and_reason(graded_class):
    """Does grades.csv hold one row per student, a column per task, the total, a status (with the malformed
    folder's reason), the seconds and the isolation each was graded under?"""
    _, out, summary, _ = graded_class
    rows = {row["student"]: row for row in csv_rows(out / "grades.csv", seconds=True)}
    assert list(rows) == ["alice", "bob", "carol", "dave", "erin", "frank"]
    with open(out / "grades.csv", newline="") as f:
        assert next(csv.reader(f)) == ["student", "1.1", "5.4", "total", "status", "seconds", "isolation"]
    assert (rows["alice"]["1.1"], rows["alice"]["5.4"], rows["alice"]["total"]) == ("4", "5", "9")
    assert rows["dave"]["total"] == "9"
    assert rows["bob"]["1.1"] == "0"
    assert (rows["erin"]["total"], rows["frank"]["total"]) == ("0", "0")
    assert rows["carol"]["status"].startswith("malformed: holds none of tensor.py")
    assert (rows["carol"]["1.1"], rows["carol"]["total"]) == ("", "0")
    assert all(rows[s]["status"] == "graded" for s in ("alice", "bob", "dave", "erin", "frank"))
    assert all(rows[s]["isolation"] == "bubblewrap" for s in ("alice", "bob", "dave", "erin", "frank"))  # auto
    assert rows["carol"]["isolation"] == ""  # never graded
    assert all(float(row["seconds"]) >= 0 for row in rows.values())
    assert not (out / "students" / "carol" / "results.json").exists()
    assert (summary.graded, summary.failed, summary.skipped) == (5, 1, 0)


@pytest.mark.slow
def test_progress_lines_count_up_with_a_rate_and_an_eta(graded_class):
    """Does grade-all say what it will do, then count each finished submission with a rate and an ETA?"""
    *_, lines = graded_class
    assert lines[0].startswith("grade-all: 6 to grade, 0 unchanged since the last run, of 6 submission(s) in ")
    assert len(lines) == 7
    assert lines[-1].startswith("grade-all: 6/6 (0 unchanged, 1 not graded) · ")
    assert "/min · ETA 0m00s · " in lines[-1]


@pytest.mark.slow
@pytest.mark.skipif(not pictures.available(), reason="matplotlib is not installed")
def test_a_correct_students_scorecard_links_a_loss_picture_and_the_class_gets_its_charts(graded_class):
    """Is there a PNG of the loss curve beside a correct student's results.json, linked from the Markdown,
    and does the class get a histogram of totals and a pass-rate chart?"""
    _, out, _, _ = graded_class
    png = out / "students" / "alice" / "loss.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert messages.PICTURE_LINK.format(file="loss.png") in (out / "students" / "alice" / "scorecard.md").read_text()
    assert not (out / "students" / "erin" / "loss.png").exists()  # stubs: fit never ran, so there is no curve
    for name in (pictures.TOTALS_PNG, pictures.PASS_RATES_PNG):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"
        assert f"]({name})" in (out / "class.md").read_text()


@pytest.mark.slow
def test_shards_merged_equal_the_unsharded_run(graded_class, tmp_path):
    """Do --shard 1/2 and 2/2, merged, give the unsharded gradebook (but for seconds) and the same files?"""
    subs, out, _, _ = graded_class
    for index in (1, 2):
        assert main(["grade-all", str(subs), "--out", str(tmp_path / f"shard{index}"), "--jobs", "2",
                     "--shard", f"{index}/2", "--tasks", ",".join(TASKS), "--unkeyed"]) == 0
    shard_students = [[r["student"] for r in csv_rows(tmp_path / f"shard{i}" / "grades.csv")] for i in (1, 2)]
    assert shard_students == [["alice", "carol", "erin"], ["bob", "dave", "frank"]]
    assert main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "--out", str(tmp_path / "all")]) == 0
    assert csv_rows(tmp_path / "all" / "grades.csv") == csv_rows(out / "grades.csv")
    for student in ("alice", "bob", "dave", "erin", "frank"):
        assert (tmp_path / "all" / "students" / student / "results.json").read_bytes() == \
            (out / "students" / student / "results.json").read_bytes()


# ----- running again -----


@pytest.mark.slow
def test_a_second_run_grades_only_what_changed_and_force_grades_everyone(tmp_path, monkeypatch):
    """Does a second run skip the unchanged submissions, grade the changed one, and --force grade all?"""
    monkeypatch.setattr(batch, "graders_fingerprint", lambda: "the graders")  # unaffected by edits elsewhere
    subs = tmp_path / "submissions"
    make_submission(subs, "alice", [])
    make_submission(subs, "bob", [])
    settings = batch.Settings(tasks=("1.1",))
    first = batch.grade_all(subs, tmp_path / "out", jobs=2, settings=settings)
    assert (first.graded, first.skipped) == (2, 0)
    alice_record = (tmp_path / "out" / "students" / "alice" / "grading.json").read_bytes()
    with open(subs / "bob" / "tensor.py", "a") as f:
        f.write("# one more comment\n")
    second = batch.grade_all(subs, tmp_path / "out", jobs=2, settings=settings)
    assert (second.graded, second.skipped) == (1, 1)
    assert (tmp_path / "out" / "students" / "alice" / "grading.json").read_bytes() == alice_record
    third = batch.grade_all(subs, tmp_path / "out", jobs=2, settings=settings, force=True)
    assert (third.graded, third.skipped) == (2, 0)
    other_tasks = batch.grade_all(subs, tmp_path / "out", jobs=2, settings=batch.Settings(tasks=("1.2",)))
    assert (other_tasks.graded, other_tasks.skipped) == (2, 0)  # other settings: the records do not apply
    monkeypatch.setattr(batch, "graders_fingerprint", lambda: "the graders, with a bug fixed")
    fixed = batch.grade_all(subs, tmp_path / "out", jobs=2, settings=batch.Settings(tasks=("1.2",)))
    assert (fixed.graded, fixed.skipped) == (2, 0)  # other graders: the records do not apply either


def judges_with(mark: str) -> list[int]:
    """The judge processes whose environment carries ``mark``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                environ = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if b"graders.classgrade.batch_judge" in cmdline and mark.encode() in environ:
                found.append(int(entry))
    return found


@pytest.mark.slow
def test_a_batch_killed_after_its_first_result_resumes_without_losing_or_regrading_it(tmp_path):
    """Kill grade-all (SIGKILL) once one student is done: is that result whole, are its judges gone,
    and does the next run grade only the others?"""
    subs = tmp_path / "submissions"
    for name in ("alice", "bob", "carol"):
        make_submission(subs, name, [])
    out = tmp_path / "out"
    mark = f"AGL_TEST_{uuid.uuid4().hex}"
    command = [sys.executable, "-I", "-m", "graders", "grade-all", str(subs), "--out", str(out), "--jobs", "1",
               "--tasks", "1.1", "--unkeyed"]
    process = subprocess.Popen(command, env={**os.environ, mark: "1"}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not (out / "students" / "alice" / "grading.json").exists():
        assert process.poll() is None and time.monotonic() < deadline, "grade-all ended before its first result"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished = {name: (out / "students" / name / "grading.json").read_bytes() for name in ("alice", "bob", "carol")
                if (out / "students" / name / "grading.json").exists()}
    assert "carol" not in finished
    assert json.loads((out / "students" / "alice" / "results.json").read_text())["score"] == 4
    deadline = time.monotonic() + 60
    while judges_with(mark) and time.monotonic() < deadline:  # they hear SIGTERM when grade-all dies
        time.sleep(0.1)
    assert judges_with(mark) == []
    resumed = batch.grade_all(subs, out, jobs=1, settings=batch.Settings(tasks=("1.1",)))
    assert (resumed.skipped, resumed.graded) == (len(finished), 3 - len(finished))
    for name, record in finished.items():
        assert (out / "students" / name / "grading.json").read_bytes() == record
    rows = csv_rows(out / "grades.csv")
    assert [(r["student"], r["1.1"], r["status"]) for r in rows] == \
        [("alice", "4", "graded"), ("bob", "4", "graded"), ("carol", "4", "graded")]


# ----- judges that hang or die -----


@pytest.fixture
def judge_scratches(monkeypatch) -> list[Path]:
    """The scratch folders of the judges this test starts (so that tests running beside it, under xdist, with
    judges of their own, are not taken for its leftovers)."""
    folders = []
    start = pool.Judge.__init__

    def recording_init(judge, *args, **kwargs):
        start(judge, *args, **kwargs)
        folders.append(judge.scratch)

    monkeypatch.setattr(pool.Judge, "__init__", recording_init)
    return folders


def leftovers(scratches: list[Path]) -> list[str]:
    """Processes still running from one of these judges' scratch folders (a worker left behind)."""
    assert scratches, "no judge was started"
    names = [str(folder).encode() for folder in scratches]
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if any(name in cmdline for name in names):
                found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


SUBMISSION_BOUND = 40


@pytest.mark.slow
def test_a_submission_that_outlives_the_timeout_gets_a_timed_out_row_and_the_batch_goes_on(tmp_path, judge_scratches):
    """Is a judge stuck on a sleeping submission stopped at --timeout (waited without computing), with its worker,
    while the next student is graded?"""
    subs = tmp_path / "submissions"
    hostile(subs, "sleeper", "import time; time.sleep(600)")
    make_submission(subs, "zoe", [])
    # The bound holds an honest grade of tensor.py's tasks in its judge's CPU time, however busy the machine. The
    # sleeper costs each of those tasks a request's backstop (20 s waited without computing), far past the bound.
    tasks = TASKS_OF_FILE["tensor.py"]
    summary = batch.grade_all(subs, tmp_path / "out", jobs=1, timeout=SUBMISSION_BOUND,
                              settings=batch.Settings(tasks=tasks, isolation="limits"))
    rows = {r["student"]: r for r in csv_rows(tmp_path / "out" / "grades.csv")}
    assert rows["sleeper"]["status"] == messages.BATCH_TIMED_OUT_IDLE.format(seconds=SUBMISSION_BOUND)
    assert rows["sleeper"]["total"] == "0"
    assert (rows["zoe"]["status"], rows["zoe"]["total"]) == ("graded", str(sum(BY_ID[t].points for t in tasks)))
    assert summary.failed == 1
    assert leftovers(judge_scratches) == []


@pytest.mark.slow
def test_a_judge_killed_from_outside_gives_a_crashed_row_and_leaves_no_worker(tmp_path, monkeypatch, judge_scratches):
    """When a judge dies mid-grading (the OOM killer, say), does its student get a 'crashed' row, and is the
    worker it left behind stopped?"""
    subs = tmp_path / "submissions"
    hostile(subs, "sleeper", "import time; time.sleep(600)")
    mark = f"AGL_TEST_{uuid.uuid4().hex}"
    os.environ[mark] = "1"
    killed = []
    # What the pool has seen of each judge's processes: the judge is killed only once the pool has looked at its
    # worker (on a loaded machine, a fixed pause was not always enough).
    seen_by_pool: set[int] = set()
    descendants = pool.descendants

    def recording_descendants(pid, *args):
        found = descendants(pid, *args)
        seen_by_pool.update(found)
        return found

    monkeypatch.setattr(pool, "descendants", recording_descendants)

    def kill_the_judge_once_its_worker_runs():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not killed:
            for pid in judges_with(mark):
                workers = set(descendants(pid))
                if workers and workers <= seen_by_pool:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.1)

    watcher = threading.Thread(target=kill_the_judge_once_its_worker_runs)
    watcher.start()
    try:
        batch.grade_all(subs, tmp_path / "out", jobs=1, timeout=300,
                        settings=batch.Settings(tasks=("1.1",), isolation="limits"))
    finally:
        del os.environ[mark]
        watcher.join()
    assert killed
    status = csv_rows(tmp_path / "out" / "grades.csv")[0]["status"]
    assert status.startswith("crashed: the judge process exited (killed by SIGKILL) while grading it")
    assert leftovers(judge_scratches) == []


# ----- finding, hashing and unpacking submissions -----


def test_discover_takes_folders_and_zips_sorted_and_leaves_out_hidden_and_other_files(tmp_path):
    """Are folders and .zip files students, by name, and hidden entries, other files and OUT_DIR left out?"""
    for name in ("bob", "alice", ".git", "out"):
        (tmp_path / name).mkdir()
    (tmp_path / "carol.zip").write_bytes(b"")
    (tmp_path / "bob.zip").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("")
    found = intake.discover(tmp_path, exclude=(tmp_path / "out",))
    assert [(s.student, s.path.name) for s in found] == \
        [("alice", "alice"), ("bob", "bob"), ("bob.zip", "bob.zip"), ("carol", "carol.zip")]


def test_the_content_hash_follows_the_files_and_ignores_pycache(tmp_path):
    """Does the hash change with a file's content or name, and not with __pycache__ or the folder's place?"""
    a = make_submission(tmp_path, "a", [])
    first = intake.content_hash(intake.Submission("a", a))
    (a / "__pycache__").mkdir()
    (a / "__pycache__" / "tensor.cpython-311.pyc").write_bytes(b"\0")
    assert intake.content_hash(intake.Submission("a", a)) == first
    moved = shutil.copytree(a, tmp_path / "elsewhere" / "a")
    assert intake.content_hash(intake.Submission("a", moved)) == first
    (a / "extra.py").write_text("")
    assert intake.content_hash(intake.Submission("a", a)) != first


@pytest.mark.parametrize("member", ["../evil.py", "/etc/evil.py", "a/../../evil.py", "C:/evil.py", "..\\evil.py"])
def test_a_zip_that_writes_outside_its_folder_is_refused(tmp_path, member):
    """Is a .zip member with an absolute path or '..' refused, and nothing written outside?"""
    archive = tmp_path / "eve.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("tensor.py", "x = 1\n")
        zf.writestr(member, "boom\n")
    with pytest.raises(SubmissionError, match="a path that leaves the folder"):
        intake.extract_zip(archive, tmp_path / "dest" / "inside", name="eve")
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "dest" / "evil.py").exists()


def test_a_zip_with_a_link_or_too_many_bytes_is_refused(tmp_path, monkeypatch):
    """Are links refused, and is the size cap counted on the bytes unpacked, not on what the zip claims?"""
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("tensor.py")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(SubmissionError, match="a link"):
        intake.extract_zip(archive, tmp_path / "a", name="link")
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("tensor.py", "#" * 100_000)
    monkeypatch.setattr(intake, "ZIP_MAX_BYTES", 50_000)
    with pytest.raises(SubmissionError, match="unpacks to more than 50,000 bytes"):
        intake.extract_zip(bomb, tmp_path / "b", name="bomb")
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(SubmissionError, match="not a readable .zip"):
        intake.extract_zip(tmp_path / "junk.zip", tmp_path / "c", name="junk")


def test_the_package_is_found_one_or_two_folders_down(tmp_path):
    """Does a submission handed in as the folder above exercises/ (or a zip of it) find exercises/?"""
    make_submission(tmp_path / "alice" / "repo", "exercises", [])
    assert intake.locate(tmp_path / "alice", name="alice") == tmp_path / "alice" / "repo" / "exercises"
    make_submission(tmp_path / "bob", "one", [])
    make_submission(tmp_path / "bob", "two", [])
    with pytest.raises(SubmissionError, match=r"several folders laid out like exercises/ \(one/, two/\)"):
        intake.locate(tmp_path / "bob", name="bob")
    (tmp_path / "carol").mkdir()
    assert intake.locate(tmp_path / "carol", name="carol") == tmp_path / "carol"


# ----- shards, gradebooks, progress -----


@pytest.mark.parametrize("text", ["0/4", "5/4", "1", "a/b", "1/0", "-1/3"])
def test_a_shard_must_be_i_of_n(text):
    with pytest.raises(ValueError, match="expected I/N with 1 <= I <= N"):
        batch.parse_shard(text)


def test_shards_are_disjoint_deterministic_slices_that_cover_the_class():
    """Do the N shards of a class cover each student exactly once, the same way every time?"""
    class_ = [intake.Submission(name, Path(name)) for name in ("e", "b", "a", "d", "c", "g", "f")]
    slices = [[s.student for s in batch.shard(class_, i, 3)] for i in (1, 2, 3)]
    assert slices == [["a", "d", "g"], ["b", "e"], ["c", "f"]]
    assert batch.parse_shard("2/3") == (2, 3)


def test_merge_refuses_a_student_in_two_shards_and_shards_with_other_columns(tmp_path):
    """Does merge stop, saying why, on a student graded in two shards, or on shards graded on other tasks?"""
    record = Record("alice", "graded", 4.0, {"1.1": 4.0}, 1.0, isolation="bubblewrap")
    for name in ("a", "b"):
        gradebook.write_csv(tmp_path / name / "grades.csv", [record], ("1.1",))
    with pytest.raises(ValueError, match="alice is in both"):
        gradebook.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    gradebook.write_csv(tmp_path / "c" / "grades.csv", [Record("bob", "graded", 0.0, {"1.2": 0.0}, isolation="limits")],
                        ("1.2",))
    with pytest.raises(ValueError, match="were the shards graded with the same --tasks"):
        gradebook.merge([tmp_path / "a", tmp_path / "c"], tmp_path / "m")
    with pytest.raises(ValueError, match="no grades.csv"):
        gradebook.merge([tmp_path / "a", tmp_path / "nothing"], tmp_path / "m")


@pytest.mark.parametrize("isolation", ["judge-uid", "limits-no-namespace", ""])
def test_merge_refuses_a_shard_graded_under_an_isolation_that_does_not_count(tmp_path, isolation):
    """A shard whose student was graded below what a grade that counts runs under (a practice fallback, or an older
    version that recorded none): does merge stop, naming the file and the student, before writing anything? A row
    never graded (malformed) and the counted isolations pass."""
    counted = [Record("alice", "graded", 4.0, {"1.1": 4.0}, 1.0, isolation="bubblewrap"),
               Record("bob", "graded", 4.0, {"1.1": 4.0}, 1.0, isolation="limits"),
               Record("carol", "malformed: holds none of tensor.py")]
    gradebook.write_csv(tmp_path / "a" / "grades.csv", counted, ("1.1",))
    gradebook.write_csv(tmp_path / "b" / "grades.csv",
                        [Record("mallory", "graded", 4.0, {"1.1": 4.0}, 1.0, isolation=isolation)], ("1.1",))
    with pytest.raises(ValueError, match=f"mallory was graded under the isolation {isolation or 'none recorded'}"):
        gradebook.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    _, merged = gradebook.merge([tmp_path / "a"], tmp_path / "m")
    assert [r.isolation for r in merged] == ["bubblewrap", "limits", ""]


def test_a_gradebook_read_back_renders_the_same_csv(tmp_path):
    """Does reading grades.csv and writing it again give the same bytes (what merge relies on)?"""
    records = [Record("b, with a comma", "malformed: holds none of \"tensor.py\"", 0.0, {}, 0.2),
               Record("a", "graded", 8.5, {"1.1": 4.0, "5.4": 4.5}, 12.25, isolation="bubblewrap")]
    path = tmp_path / "grades.csv"
    gradebook.write_csv(path, records, TASKS)
    task_ids, read = gradebook.read_csv(path)
    assert task_ids == TASKS
    assert gradebook.render_csv(read, task_ids).encode() == path.read_bytes()


def test_progress_counts_skipped_and_failed_and_estimates_the_rest():
    """Does the progress line count the unchanged and the failed, and estimate the time left from the rate?"""
    lines = []
    clock = iter([100.0, 130.0, 160.0])
    meter = progress.Progress(4, 1, lambda line, final: lines.append((line, final)), clock=lambda: next(clock))
    meter.done(Record("bob", "graded", 87.0))
    meter.done(Record("carol", "malformed: no files"))
    assert lines[0] == ("grade-all: 2/4 (1 unchanged, 0 not graded) · 2.0/min · ETA 1m00s · bob: graded 87", False)
    assert lines[1] == ("grade-all: 3/4 (1 unchanged, 1 not graded) · 2.0/min · ETA 0m30s · carol: malformed",
                        False)


def test_without_matplotlib_the_picture_is_skipped_with_one_line(tmp_path, monkeypatch):
    """Without matplotlib, is the picture left out, with one line saying so, and the Markdown without a link?"""
    class Result:
        task = BY_ID["5.4"]
        data = {"train_loss": [0.5, 0.1], "lesson_mse": 0.011}

    report = type("Report", (), {"results": [Result()]})
    monkeypatch.setattr(pictures, "available", lambda: False)
    heard = []
    assert outputs.write_picture(report, tmp_path, warn=heard.append) is None
    assert heard == [messages.NO_PICTURES]
    assert not (tmp_path / "loss.png").exists()


def test_the_painters_picture_is_the_picture_drawn_here_byte_for_byte(tmp_path):
    """grade's loss.png comes from a painter process started before the grade: is it the very PNG drawn in
    process, and does a painter that cannot draw (no data, or killed) leave the drawing to the caller?"""
    class Result:
        task = BY_ID["5.4"]
        data = {"train_loss": [0.5, 0.1, 0.02, float("nan")], "lesson_mse": 0.011}

    report = type("Report", (), {"results": [Result()]})
    data = pictures.loss_data(report)
    painter = pictures.Painter()
    try:
        assert painter.draw(data) == pictures.loss_png(data)
    finally:
        painter.close()
    killed = pictures.Painter()
    killed.close()
    assert killed.draw(data) is None
    assert outputs.write_picture(report, tmp_path, painter=killed) == "loss.png"
    assert (tmp_path / "loss.png").read_bytes() == pictures.loss_png(data)
    idle = pictures.Painter()
    try:
        assert idle.draw(None) is None and idle.process.returncode == 0
    finally:
        idle.close()


def test_a_painter_given_5_4s_curve_early_draws_it_while_the_grade_goes_on(tmp_path):
    """The CLI hands its painter task 5.4's curve as soon as the task is done (``finished``): is the picture then the
    one drawn in process, is a result without a curve passed over, and does other data at the end (nothing the grade
    made, but the painter must not answer for it) leave the drawing to the caller?"""
    class Result:
        task = BY_ID["5.4"]
        data = {"train_loss": [0.5, 0.1, 0.02], "lesson_mse": 0.011}

    class Earlier:
        task = BY_ID["5.3"]
        data = {"train_loss": [9.0]}

    report = type("Report", (), {"results": [Earlier(), Result()]})
    data = pictures.loss_data(report)
    painter = pictures.Painter()
    try:
        painter.finished(Earlier())
        assert painter._drawing is None  # 5.3 is not the lesson's run
        painter.finished(Result())
        assert painter.draw(data) == pictures.loss_png(data)
    finally:
        painter.close()
    other = pictures.Painter()
    try:
        other.finished(Result())
        assert other.draw({**data, "lesson_mse": 0.5}) is None
    finally:
        other.close()
    assert outputs.write_picture(report, tmp_path, painter=other) == "loss.png"
    assert (tmp_path / "loss.png").read_bytes() == pictures.loss_png(data)
    stopped = pictures.Painter()  # a grade that ends in an error closes its painter while it may still draw
    stopped.finished(Result())
    stopped.close()
    assert not stopped._drawing.is_alive() and stopped.process.returncode is not None


@pytest.mark.slow
def test_intake_opens_only_regular_files_and_keeps_any_name(tmp_path):
    """A class with a FIFO and a sparse terabyte file beside a student's package, and a folder whose name is not
    UTF-8: does grade-all finish without reading either file, grade all three, write every row with the name's
    bytes intact, and, run again, find everyone unchanged?"""
    subs = tmp_path / "submissions"
    make_submission(subs, "alice", [])
    noisy = make_submission(subs, "bob", [])
    os.mkfifo(noisy / "pipe")  # opening it would wait for a writer forever
    with open(noisy / "data.bin", "wb") as f:
        f.truncate(2**40)  # a terabyte of holes: reading it would take hours
    odd = os.fsdecode(b"caf\xe9")
    make_submission(subs, odd, [])
    out = tmp_path / "out"
    first = batch.grade_all(subs, out, jobs=1, settings=batch.Settings(tasks=("1.1",)))
    assert (first.graded, first.failed) == (3, 0)
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert rows == {name: rows[name] for name in ("alice", "bob", odd)}
    assert all(row["1.1"] == "4" for row in rows.values())
    assert b"caf\xe9," in (out / "grades.csv").read_bytes()
    _, records = gradebook.read_csv(out / "grades.csv")
    assert sorted(r.student for r in records) == sorted(["alice", "bob", odd])
    again = batch.grade_all(subs, out, jobs=1, settings=batch.Settings(tasks=("1.1",)))
    assert (again.skipped, again.graded) == (3, 0)


@pytest.mark.parametrize("student", ['=HYPERLINK("x","click")', "+cmd|' -C calc'!A0", "-2+3", "@SUM(1)",
                                     "'=quoted", "''=twice", "'plain", "alice", "\tx"])
def test_a_name_a_spreadsheet_would_run_is_text_in_grades_csv_and_round_trips(tmp_path, student):
    """A student's folder name (or a reason quoting one) that starts like a formula is written with a leading
    apostrophe, which spreadsheets show as text; merging reads back exactly the name."""
    records = [Record(student, f"not graded: {student} is empty"), Record("bob", "graded", 3.0, {"1.1": 3.0})]
    path = tmp_path / "grades.csv"
    gradebook.write_csv(path, records, ("1.1",))
    with open(path, newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not any(cell[:1] in ("=", "+", "-", "@", "\t") for cell in cells), cells
    _, back = gradebook.read_csv(path)
    assert {r.student: r.status for r in back} == {r.student: r.status for r in records}


def test_the_progress_line_shows_a_folder_name_without_its_escape_sequences():
    """A folder named with terminal escapes (clear the screen, a fake 100/100) reaches the terminal as plain text."""
    lines = []
    meter = progress.Progress(2, 0, lambda line, final: lines.append(line), clock=iter([0.0, 1.0]).__next__)
    meter.done(Record("\x1b[2J\x1b[Hmallory\x1b]0;100/100\x07\r", "graded", 100.0, {"1.1": 3.0}))
    assert lines and "mallory" in lines[0]
    assert not any(ch in lines[0] for ch in "\x1b\x07\r"), repr(lines[0])
