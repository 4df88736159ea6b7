"""Does `autograd-lab export` write the class's totals as Canvas's and Moodle's gradebook imports take them
(graders/classgrade/lms.py)?

The samples in tests/lms/ were written by hand from the LMSs' documentation, not from this code:

- Canvas: the import file has the columns Student, ID, SIS User ID, SIS Login ID and Section, then one column per
  assignment; a column that names no assignment makes a new one, and a score overwrites the one in the gradebook
  (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades).
  Its exports have a "Points Possible" row and read-only score columns, which an import ignores
  (https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/).
- Moodle: "Import grades from CSV" reads a CSV file (UTF-8, comma-separated, by default) whose columns the
  instructor maps: an identifier column to a user (Email address to the user's email, ID number to the user's ID
  number) and each grade column to a grade item (https://docs.moodle.org/311/en/Grade_import,
  https://help.totaralearning.com/display/TH13/Import+grades).

canvas_roster.csv is a Canvas export as a spreadsheet saves it (a byte-order mark), moodle_roster.csv Moodle's
user columns with a GitHub column the instructor added; canvas_import.csv and moodle_import.csv are the files the
class below must give, byte for byte, but for canvas_import.csv's Points Possible: the most a student can score, the
task table's total, which the sample gives as 100 (the table's total when it was written) and the test reads from
the table.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import sample_course

from graders.classgrade import gradebook, lms
from graders.classgrade.gradebook import Record
from graders.cli import main

SAMPLES = Path(__file__).resolve().parent / "lms"
# The Points Possible row of canvas_import.csv, with the total it was written with: the export writes the table's.
SAMPLE_POINTS_ROW = b"\r\nPoints Possible,,,,,100\r\n"


@pytest.fixture
def out(tmp_path) -> Path:
    """A graded class: ada (100), charles (82.5, +0.333 by the instructor), eve (malformed: 0), zed (not on the
    rosters); grace, on the rosters, handed nothing in."""
    folder = tmp_path / "out"
    task_ids = gradebook.task_ids_of(None)
    records = [Record("ada", "graded", 100.0, {}, 3.0), Record("charles", "graded", 82.5, {}, 3.0),
               Record("eve", "malformed: holds none of tensor.py", 0.0, {}, 0.0),
               Record("zed", "graded", 55.0, {}, 3.0)]
    for record in records:
        gradebook.save_record(folder / "students" / record.student, record)
    gradebook.write_csv(folder / gradebook.CSV_NAME, records, task_ids)
    (folder / "adjustments.csv").write_text("student,task,points,reason\ncharles,total,+0.333,regrade of 5.4\n")
    return folder


def test_canvas_import_is_the_documented_shape(out, capsys):
    """From a Canvas export: the five identity columns copied for each matched student, the assignment's own
    "Name (id)" header, the Points Possible row, the adjusted totals as plain decimals, a name that reads as a
    formula neutralised, UTF-8 without a byte-order mark and CRLF line ends; and the students on one side only, and
    the one not graded, named on stderr?"""
    code = main(["export", str(out), "--lms", "canvas", "--roster", str(SAMPLES / "canvas_roster.csv"),
                 "--match", "SIS Login ID", "--column", "Autograd lab"])
    assert code == 0
    written = (out / "canvas-import.csv").read_bytes()
    total = sample_course.TABLE_TOTAL
    sample = (SAMPLES / "canvas_import.csv").read_bytes()
    assert sample.count(SAMPLE_POINTS_ROW) == 1
    assert written == sample.replace(SAMPLE_POINTS_ROW, f"\r\nPoints Possible,,,,,{total}\r\n".encode())
    assert not written.startswith(b"\xef\xbb\xbf") and b"\r\n" in written
    header, points, *rows = list(csv.reader(written.decode().splitlines()))
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert points[0] == "Points Possible" and points[-1] == str(total)
    assert [row[3] for row in rows] == ["ada", "Charles", "eve"]
    captured = capsys.readouterr()
    assert "1 graded student(s) not on the roster" in captured.err and "zed" in captured.err
    assert "2 roster student(s) with no submission" in captured.err
    assert "grace" in captured.err and "Student, Test" in captured.err
    assert "1 student(s) not graded" in captured.err and "eve (malformed" in captured.err
    assert "export: 3 student(s) for canvas" in captured.out


def test_moodle_import_is_the_documented_shape(out, capsys):
    """From Moodle's user columns and an added GitHub column: the identifier column Moodle maps (Email address)
    and one grade column, the same totals?"""
    target = out.parent / "to-moodle.csv"
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(SAMPLES / "moodle_roster.csv"),
                 "--match", "GitHub", "--to", str(target)]) == 0
    assert target.read_bytes() == (SAMPLES / "moodle_import.csv").read_bytes()
    assert "grace" in capsys.readouterr().err


def test_missing_zero_gives_a_roster_student_without_a_submission_zero(out, capsys):
    """With --missing zero, is grace on the file with 0, and said so?"""
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(SAMPLES / "moodle_roster.csv"),
                 "--match", "GitHub", "--missing", "zero", "--id", "ID number"]) == 0
    rows = list(csv.reader((out / "moodle-import.csv").read_text().splitlines()))
    assert rows[0] == ["ID number", "autograd-lab"] and ["S1004", "0"] in rows
    assert "given 0 in the import file: grace" in capsys.readouterr().err


def test_the_adjustments_file_is_applied_again_at_every_export(out):
    """Is an adjustment written after grading applied, as grades.csv would show it?"""
    (out / "adjustments.csv").write_text("student,task,points,reason\nada,total,-10,late\n")
    path, result = lms.write(out, lms.MOODLE, SAMPLES / "moodle_roster.csv", column="lab", match_column="GitHub")
    assert "ada@example.edu,90\r\n" in path.read_bytes().decode() and "charles@example.edu,82.5\r\n" in result.text


ROSTER_ERRORS = [
    ("Student,ID,SIS User ID,SIS Login ID,Section\nAda,1,S1,ada,A\nBob,2,S2,bob\n", "line 3: 4 cells, expected 5"),
    ("Student,ID,SIS Login ID\nAda,1,ada\n", "no column Section in its header"),
    ("Student,ID,SIS User ID,SIS Login ID,Section\nAda,1,S1,ada,A\nAda2,2,S2,ADA ,A\n",
     "line 3: 'ADA' in column 'SIS Login ID' is on line 2 too"),
    ("", "no header row"),
    ("Student,ID,ID,SIS Login ID,Section\n", "names ID more than once"),
]


@pytest.mark.parametrize("text, says", ROSTER_ERRORS)
def test_a_roster_that_cannot_be_read_is_refused_with_its_line(out, capsys, text, says):
    """Does a malformed Canvas roster stop the export with a message naming the line or what is missing, and write
    no file?"""
    roster = out.parent / "roster.csv"
    roster.write_text(text)
    assert main(["export", str(out), "--lms", "canvas", "--roster", str(roster), "--match", "SIS Login ID"]) == 2
    assert says in capsys.readouterr().err
    assert not (out / "canvas-import.csv").exists()


def test_a_roster_not_in_utf8_or_without_the_columns_asked_for_is_refused(out, capsys):
    """Latin-1 bytes on line 3, a --match column the roster lacks, a Moodle roster with no identifier column: is
    each refused, by name?"""
    roster = out.parent / "latin1.csv"
    roster.write_bytes("Email address,GitHub\nada@example.edu,ada\nb\xe9a@example.edu,bea\n".encode("latin-1"))
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(roster), "--match", "GitHub"]) == 2
    assert "line 3: not UTF-8 text" in capsys.readouterr().err
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(SAMPLES / "moodle_roster.csv"),
                 "--match", "Login"]) == 2
    assert "no column 'Login'; its columns are First name" in capsys.readouterr().err
    roster.write_text("GitHub,Name\nada,Ada\n")
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(roster), "--match", "GitHub"]) == 2
    assert "none of Email address, ID number, Username" in capsys.readouterr().err
    assert main(["export", str(out.parent / "nowhere"), "--lms", "moodle", "--roster", str(roster),
                 "--match", "GitHub"]) == 2
    assert "no grades.csv" in capsys.readouterr().err


def test_two_folders_one_roster_name_cannot_tell_apart_are_refused(out, capsys):
    """Folders "ada" and "ADA ": the roster's ada would match either; is the export refused, naming both?"""
    task_ids, records = gradebook.load_class(out)
    records.append(Record("ADA ", "graded", 1.0, {}, 1.0))
    gradebook.write_csv(out / gradebook.CSV_NAME, records, task_ids)
    assert main(["export", str(out), "--lms", "moodle", "--roster", str(SAMPLES / "moodle_roster.csv"),
                 "--match", "GitHub"]) == 2
    assert "'ADA ' and 'ada' differ only in case" in capsys.readouterr().err


def test_points_are_plain_decimals():
    """97.5, 100, 1/3 and a million: never an exponent, at most two places, a dot."""
    assert [lms._points(v) for v in (97.5, 100.0, 1 / 3, 1e6, 0.0)] == ["97.5", "100", "0.33", "1000000", "0"]
