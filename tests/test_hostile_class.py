"""Do a class's hostile students and a crafted shard leave every other student's grade alone?

Three entries of the hostile corpus that attack grade-all, merge and the exports rather than a grade:

- **one student never stops a class**: a class where one student's folder is a chain of 1,100 folders, one is named
  ``grades.csv``, one ``class.html``, one ``students``, one is a link to a classmate's folder, one holds more files
  than intake searches, and one holds a folder nobody may read. Everyone gets a row with a clear status, the honest
  student their full score, and the class its report;
- **merge trusts nothing in a shard**: a shard's row named ``../escaped-by-merge``, a ``rung`` that is a list, a
  score that is not a number or past its task's points, a record that is not one, a file that is a link. Each is
  refused with a message naming the file (and the row), never a traceback, and nothing is written outside ``--out``;
- **spreadsheet formulas after a space**: a name that starts a formula after leading whitespace, a no-break space or
  a full-width sign (＝＋－＠) is text in grades.csv and in both LMS exports.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import unicodedata
from pathlib import Path

import pytest
from corpus import make_submission

from graders.classgrade import batch, gradebook, lms
from graders.classgrade.gradebook import Record
from graders.cli import main
from graders.paths import EXERCISES
from graders.submission import intake

TASKS = ("1.1",)
FORMULA_NAMES = (' =HYPERLINK("x","y")', "\u00a0=1+1", "\uff1d1+1", "\u3000\uff20SUM(A1)", "\uff0bcmd",
                 "\uff0d2+3", "\t =x", "\ufeff=x", "  -2+3", "\u2212 1")


def _chain(root: Path, depth: int) -> None:
    """``depth`` folders, one inside the other, made by relative paths (a path of the whole chain is too long)."""
    here = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            deeper = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = deeper
    finally:
        os.close(here)


def _remove_chain(root: Path) -> None:
    """Remove a chain of folders too deep for shutil.rmtree's recursion, from the bottom up, by relative paths."""
    fds = [os.open(root, os.O_RDONLY)]
    try:
        while "d" in os.listdir(fds[-1]):
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        return {gradebook._uncell(row["student"]): row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_one_student_never_stops_a_class(tmp_path):
    """A 1,100-deep chain of folders, folders named grades.csv, class.html and students, a link to a classmate's
    folder, a tree larger than intake searches and an unreadable folder, beside an honest student: does grade-all
    finish, give every one of them a row with a clear status and the honest ones their score, and write its own
    grades.csv and class report where they belong?"""
    subs = tmp_path / "class"
    make_submission(subs, "alice", [])
    _chain(make_submission(subs, "deep", []), 1100)
    make_submission(subs, "grades.csv", [])
    shutil.copytree(EXERCISES, subs / "class.html", ignore=shutil.ignore_patterns("__pycache__", "tests"))
    make_submission(subs, "students", [])
    (subs / "mallory").symlink_to(subs / "alice")
    huge = subs / "huge"
    make_submission(huge / "somewhere" / "deeper", "exercises", [])
    for i in range(getattr(intake, "SEARCH_ENTRIES", 20_000)):  # beside the exercises: too many to search
        (huge / f"f{i:05d}").touch()
    locked = make_submission(subs, "locked", [])
    (locked / "private").mkdir()
    (locked / "private" / "notes.txt").write_text("mine\n")
    (locked / "private").chmod(0)
    out = tmp_path / "out"
    try:
        summary = batch.grade_all(subs, out, jobs=2, settings=batch.Settings(tasks=TASKS))
    finally:
        (locked / "private").chmod(0o700)
        _remove_chain(subs / "deep")
    rows = _rows(out / "grades.csv")
    assert set(rows) == {"alice", "deep", "grades.csv", "class.html", "students", "mallory", "huge", "locked"}
    for student in ("alice", "deep", "grades.csv", "students", "locked"):
        assert (rows[student]["status"], rows[student]["1.1"]) == ("graded", "4"), (student, rows[student])
    assert (rows["class.html"]["status"], rows["class.html"]["total"]) == ("graded", "0")  # the stubs
    assert rows["mallory"]["status"].startswith("malformed: a symbolic link, not a folder or a .zip")
    assert rows["huge"]["status"].startswith("malformed: more than 20,000 files and folders within 3 levels")
    assert (summary.graded, summary.failed) == (6, 2)
    assert (out / "grades.csv").is_file() and (out / "class.html").is_file() and (out / "class.md").is_file()
    for student in ("grades.csv", "class.html", "students", "alice"):
        assert (out / "students" / student / "results.json").is_file(), student
    assert "malformed" in (out / "class.md").read_text().split("## Students", 1)[1]


# ----- merge trusts nothing in a shard -----

def _shard(folder: Path, rows: list[list[str]], files: dict[str, dict[str, bytes | str]] | None = None,
           header: list[str] | None = None) -> Path:
    """A shard as an older grade-all wrote it (each student's folder beside grades.csv, which merge still reads),
    with ``rows`` under ``header`` and ``files`` (student -> file name -> content) in the students' folders. Each row
    was graded in bubblewrap (its isolation cell), so that merge refuses it for what the case crafted alone."""
    folder.mkdir(parents=True)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\r\n")
    writer.writerow(header or ["student", "1.1", "total", "status", "seconds", "isolation"])
    writer.writerows(row if header else [*row, "bubblewrap"] for row in rows)
    (folder / "grades.csv").write_text(text.getvalue())
    for student, named in (files or {}).items():
        (folder / student).mkdir(parents=True, exist_ok=True)
        for name, content in named.items():
            (folder / student / name).write_bytes(content.encode() if isinstance(content, str) else content)
    return folder


def _record(student: str, **fields) -> str:
    return json.dumps({"student": student, "status": "graded", "total": 4.0, "scores": {"1.1": 4.0},
                       "seconds": 1.0, "hash": "", "settings": "", "isolation": "bubblewrap", **fields})


def _result(**extra) -> str:
    return json.dumps({"score": 0.0, "tests": [{"number": "1.1", "name": "1.1 unbroadcast", "score": 0.0,
                                                "max_score": 4.0, "output": "Task 1.1 (unbroadcast): wrong grad",
                                                "status": "failed", "extra_data": {"status": "failed", **extra}}]})


CRAFTED = {
    # what the shard holds -> the words the refusal must hold (beside the file's name)
    "a row that leaves --out": ([["../escaped-by-merge", "4", "4", "graded", "1.0"]], {}, "line 2"),
    "a name with a separator": ([["a/b", "4", "4", "graded", "1.0"]], {}, "line 2"),
    "a hidden name": ([[".git", "4", "4", "graded", "1.0"]], {}, "line 2"),
    "a score that is not a number": ([["bob", "four", "4", "graded", "1.0"]], {}, "line 2"),
    "a score past its points": ([["bob", "400", "400", "graded", "1.0"]], {}, "line 2"),
    "an infinite total": ([["bob", "4", "inf", "graded", "1.0"]], {}, "line 2"),
    "a rung that is a list": ([["bob", "0", "0", "graded", "1.0"]],
                              {"bob": {"results.json": _result(rung=["values"], mistakes=[])}}, "results.json"),
    "mistakes that are not text": ([["bob", "0", "0", "graded", "1.0"]],
                                   {"bob": {"results.json": _result(rung="values", mistakes=[{"id": 1}])}},
                                   "results.json"),
    "a record whose scores are a list": ([["bob", "4", "4", "graded", "1.0"]],
                                         {"bob": {"grading.json": _record("bob", scores=[4])}}, "grading.json"),
    "a record of another student": ([["bob", "4", "4", "graded", "1.0"]],
                                    {"bob": {"grading.json": _record("../zed")}}, "grading.json"),
    "a record past its points": ([["bob", "4", "4", "graded", "1.0"]],
                                 {"bob": {"grading.json": _record("bob", scores={"1.1": 1e9}, total=1e9)}},
                                 "grading.json"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_merge_refuses_a_crafted_shard_naming_the_file_and_row(case, tmp_path, capsys):
    """A shard whose grades.csv, grading.json or results.json was crafted: does merge refuse it with exit 2 and one
    line naming the file (and the row of grades.csv), never a traceback, writing nothing outside --out (nor the
    merged gradebook)?"""
    rows, files, said = CRAFTED[case]
    outside = tmp_path / "escaped-by-merge"
    outside.mkdir()
    (outside / "grading.json").write_text(_record("../escaped-by-merge"))
    (outside / "results.json").write_text(_result(rung="values", mistakes=[]))
    honest = _shard(tmp_path / "shard1", [["alice", "4", "4", "graded", "1.0"]],
                    {"alice": {"grading.json": _record("alice"), "results.json": _result(rung="values")}})
    crafted = _shard(tmp_path / "shard2", rows, files)
    merged = tmp_path / "merged" / "out"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = main(["merge", str(honest), str(crafted), "--out", str(merged)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "refused, nothing was merged" in err
    assert str(crafted) in err and said in err, err
    assert not (merged / "grades.csv").exists()
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if merged not in (p, *p.parents))
    assert after == before, "merge wrote outside --out"


def test_merge_copies_no_link_from_a_shard_and_the_report_survives_a_crafted_result(tmp_path):
    """A shard's scorecard.md that is a link to a file of the machine, and a results.json whose tests are not what
    grade-all writes: is the link never followed into the merged class, and does the class report still render?"""
    secret = tmp_path / "secret.txt"
    secret.write_text("the instructor's key\n")
    shard = _shard(tmp_path / "shard", [["bob", "0", "0", "graded", "1.0"]],
                   {"bob": {"grading.json": _record("bob", total=0.0, scores={"1.1": 0.0})}})
    (shard / "bob" / "scorecard.md").symlink_to(secret)
    assert main(["merge", str(shard), "--out", str(tmp_path / "merged")]) == 0
    assert not (tmp_path / "merged" / "students" / "bob" / "scorecard.md").exists()
    from graders.classgrade import report

    folder = tmp_path / "merged" / "students" / "bob"
    folder.joinpath("results.json").write_text(json.dumps({"tests": [
        {"number": "1.1", "output": ["not", "text"], "extra_data": {"rung": ["values"], "mistakes": "x"}},
        {"number": ["1.1"]}, "not a test"]}))
    data = report.build(tmp_path / "merged", [Record("bob", "graded", 0.0, {"1.1": 0.0}, 1.0)], ("1.1",))
    assert data.tasks[0].rungs and "bob" in report.page(data, {}) and "bob" in report.markdown(data)


# ----- spreadsheet formulas after a space -----

def _is_formula(cell: str) -> bool:
    """Whether a spreadsheet would read ``cell`` as a formula: after its leading whitespace, a sign, once the
    full-width forms are read as the ASCII ones; a cell that starts with an apostrophe is text."""
    if cell.startswith("'"):
        return False
    text = unicodedata.normalize("NFKC", cell).replace("\u2212", "-").lstrip(" \t\r\n\u00a0\u3000\ufeff")
    return text[:1] in ("=", "+", "-", "@")


@pytest.mark.parametrize("name", FORMULA_NAMES)
def test_a_formula_after_a_space_or_in_full_width_is_text_in_grades_csv_and_every_export(name, tmp_path):
    """A student folder named like a formula behind leading whitespace, a no-break space or a full-width sign: is
    every cell of grades.csv, the Canvas import and the Moodle import text to a spreadsheet, and does the name
    round-trip through grades.csv?"""
    records = [Record(name, "graded", 4.0, {"1.1": 4.0}, 1.0),
               Record("bob", f"malformed: {name} is empty", 0.0, {}, 0.0)]
    path = tmp_path / "grades.csv"
    gradebook.write_csv(path, records, ("1.1",))
    with open(path, newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [cell for cell in cells if _is_formula(cell)], cells
    _, back = gradebook.read_csv(path)
    assert [r.student for r in back] == sorted(r.student for r in records)  # the names round-trip
    roster = lms.Roster(tmp_path / "roster.csv", ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                                  "Email address", "GitHub"],
                        [(2, {"Student": name, "ID": "1", "SIS User ID": name, "SIS Login ID": name,
                              "Section": name, "Email address": name, "GitHub": name})])
    for kind in (lms.CANVAS, lms.MOODLE):
        text = lms.export(kind, roster, records, ("1.1",), column="lab", match_column="GitHub").text
        cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
        assert not [cell for cell in cells if _is_formula(cell)], (kind, cells)
