"""The ``autograd-lab`` subcommands for a whole class: grade-all, merge, export, examples, release, gradescope,
classroom50.

They parse and dispatch, nothing more; the work is in batch.py, gradebook.py,
release.py and gradescope.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graders import cli_options
from graders import messages as msg


def _fail(command: str, error: Exception) -> int:
    print(msg.CLI_FAILED.format(command=command, error=error), file=sys.stderr)
    return 2


def _course(args):
    """The course of ``--course`` (the default course without it); CourseError, which names the line, otherwise."""
    from graders.course import course_file

    return course_file.load(getattr(args, "course", None))


def _grade_all(args) -> int:
    from graders.classgrade import batch
    from graders.classgrade.progress import terminal_progress

    try:
        if args.key is not None:
            raise ValueError(msg.GRADE_ALL_ONE_KEY.format(key=args.key))
        course = _course(args)
        if not course.keyed and not args.unkeyed:
            raise ValueError(msg.GRADE_ALL_NO_KEYS)
        settings = batch.Settings(tasks=args.tasks, isolation=args.isolation, course=course)
        settings.task_ids()  # --tasks the course leaves out: refused now
        shard_of = batch.parse_shard(args.shard) if args.shard else None
        summary = batch.grade_all(args.submissions, args.out, jobs=args.jobs, shard_of=shard_of, force=args.force,
                                  timeout=args.timeout, settings=settings, progress=terminal_progress(),
                                  adjustments=args.adjustments)
    except (ValueError, RuntimeError, OSError) as error:
        return _fail("grade-all", error)
    except KeyboardInterrupt:
        print("\n" + msg.BATCH_INTERRUPTED.format(csv=Path(args.out) / "grades.csv"), file=sys.stderr)
        return 130
    for note in summary.notes:
        print(note, file=sys.stderr)
    print(msg.BATCH_DONE.format(graded=summary.graded, skipped=summary.skipped, failed=summary.failed,
                                seconds=summary.seconds, csv=Path(args.out) / "grades.csv"))
    return 0


def _merge(args) -> int:
    from graders.classgrade import batch

    try:
        course = _course(args)
        task_ids, records = batch.merge(args.folders, args.out, args.adjustments, course)
    except (ValueError, OSError) as error:
        return _fail("merge", error)
    for note in batch.class_views(args.out, records, task_ids, {t: course.points(t) for t in task_ids}):
        print(note, file=sys.stderr)
    print(msg.MERGE_DONE.format(students=len(records), folders=len(args.folders), csv=Path(args.out) / "grades.csv"))
    return 0


def _export(args) -> int:
    from graders.classgrade import lms

    try:
        path, result = lms.write(args.out_dir, args.lms, args.roster, column=args.column, match_column=args.match,
                                 id_column=args.id, missing=args.missing, adjustments=args.adjustments, to=args.to,
                                 course=_course(args))
    except (ValueError, OSError) as error:
        return _fail("export", error)
    for note in lms.notes(result, args.missing):
        print(note, file=sys.stderr)
    print(msg.LMS_DONE.format(rows=result.rows, lms=args.lms, path=path))
    return 0


def _examples(args) -> int:
    from graders.course import release

    try:
        written = release.examples(args.out, force=args.force)
    except (FileExistsError, OSError) as error:
        return _fail("examples", error)
    print(msg.EXAMPLES_WRITTEN.format(out=args.out, files=", ".join(written)))
    return 0


def _release(args) -> int:
    from graders.course import release

    try:
        written = release.release(args.out, wheel=args.wheel or "", force=args.force, course=_course(args))
    except (FileExistsError, FileNotFoundError, OSError, ValueError) as error:
        return _fail("release", error)
    if args.wheel:
        token = msg.RELEASE_WHEEL_TOKEN if not args.wheel.startswith("https://") else ""
        where = msg.RELEASE_WHEEL_AT.format(where=args.wheel, token=token, wheel=release.WHEEL_NAME)
    else:
        where = msg.RELEASE_WHEEL_UNSET.format(wheel=release.WHEEL_NAME)
    print(msg.RELEASE_WRITTEN.format(out=args.out, count=len(written), wheel=where))
    return 0


def _gradescope(args) -> int:
    from graders import paths
    from graders.integrations import gradescope

    try:
        course = _course(args) if args.course is not None else None
        out, wheel, made = gradescope.build_zip(args.zip, paths.REPO, args.wheel, course)
    except (FileNotFoundError, RuntimeError, OSError, ValueError) as error:
        return _fail("gradescope", error)
    print(msg.GRADESCOPE_WRITTEN.format(zip=out, kib=out.stat().st_size // 1024, wheel=wheel))
    if made is not None:
        print(msg.GRADESCOPE_COURSE_MADE.format(course=made))
    return 0


def _classroom50(args) -> int:
    from graders import paths
    from graders.course import course_file
    from graders.integrations import classroom50

    made = None
    try:
        course = _course(args)
        if not course.keyed and not args.unkeyed:  # a course secret for the runner, kept out of the published folder
            made = Path(f"{args.assignment}.course.toml")
            if not made.exists():
                course_file.init(made)
            course = course_file.load(made)
        built = classroom50.build(args.dir, assignment=args.assignment, course=course, wheel=args.wheel,
                                  unkeyed=args.unkeyed, repo=paths.REPO)
    except (FileNotFoundError, FileExistsError, RuntimeError, OSError, ValueError) as error:
        return _fail("classroom50", error)
    print(msg.CLASSROOM50_WRITTEN.format(folder=built.folder, assignment=args.assignment, wheel=built.wheel))
    if made is not None:
        print(msg.CLASSROOM50_COURSE_MADE.format(path=made))
    runs_on = built.runtime["runs-on"]
    print(msg.CLASSROOM50_UNKEYED if args.unkeyed and isinstance(runs_on, str) else
          msg.CLASSROOM50_KEYED.format(labels=", ".join(runs_on)))
    return 0


def release_wheel(text: str) -> str:
    """``release --wheel``'s value, checked (graders.course.release.wheel_where)."""
    from graders.course import release

    return release.wheel_where(text)


def add_commands(sub) -> None:
    """Add the class commands to the ``autograd-lab`` parser's subparsers."""
    from graders.classgrade.pool import DEFAULT_TIMEOUT

    a = sub.add_parser("grade-all", help="grade every submission in a folder into a gradebook",
                       description="Grade every folder laid out like exercises/ (or .zip of one) in SUBMISSIONS_DIR "
                                   "with a pool of judge processes. Writes OUT_DIR/students/<student>/results.json "
                                   "(and scorecard.md, loss.png) and OUT_DIR/grades.csv as each student finishes; a "
                                   "second run skips the submissions that have not changed; `autograd-lab export` "
                                   "then writes the totals for Canvas or Moodle. Exit status: 0 when "
                                   "every submission has its row (whatever its status), 2 for arguments that "
                                   "cannot work.")
    a.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR",
                   help="one folder or .zip per student; the name is the student's")
    a.add_argument("--out", type=Path, required=True, metavar="OUT_DIR", help="where the gradebook goes")
    a.add_argument("--jobs", type=int, metavar="N", help="judge processes at once (default: the cores)")
    a.add_argument("--shard", metavar="I/N", help="grade only the I-th of N slices of the class (1 <= I <= N)")
    a.add_argument("--force", action="store_true", help="grade again the submissions that have not changed")
    a.add_argument("--adjustments", type=Path, metavar="CSV",
                   help="the instructor's adjustments, applied on every run (default: OUT_DIR/adjustments.csv)")
    a.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help="stop grading a submission after S seconds of its judge's CPU time, or S seconds waited "
                        "without computing (default: %(default)g)")
    cli_options.add_grading_options(a)
    a.add_argument("--unkeyed", action="store_true",
                   help="grade without keys: every student gets the same fixed inputs, which one student can learn "
                        "and pass on (only to try the package; grades that count need --course)")
    a.set_defaults(run=_grade_all)

    m = sub.add_parser("merge", help="combine the gradebooks of shards into one",
                       description="Combine the OUT_DIRs of grade-all runs over --shard 1/N ... N/N into one "
                                   "OUT_DIR: grades.csv, the students' folders and the class's pictures.")
    m.add_argument("folders", type=Path, nargs="+", metavar="OUT_DIR", help="the shards' output folders")
    m.add_argument("--out", type=Path, required=True, metavar="MERGED", help="where the merged gradebook goes")
    m.add_argument("--adjustments", type=Path, metavar="CSV",
                   help="the instructor's adjustments, applied to the merged class (default: MERGED/adjustments.csv)")
    cli_options.add_course_option(m)
    m.set_defaults(run=_merge)

    x = sub.add_parser("export", help="write the class's totals as a Canvas or Moodle gradebook import file",
                       description="Write the totals of the gradebook in OUT_DIR (grade-all's or merge's), adjusted as "
                                   "grades.csv's are, as the CSV file Canvas's or Moodle's gradebook imports. The "
                                   "students are matched through the roster the LMS exports: --match names its "
                                   "column holding the submissions' folder names (add one if the LMS has none). "
                                   "Students on one side only are named on stderr, never dropped silently.")
    x.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="the gradebook: grade-all's or merge's --out")
    x.add_argument("--lms", choices=("canvas", "moodle"), required=True,
                   help="canvas: Grades > Import takes the file; moodle: Grade administration > Import > CSV file")
    x.add_argument("--roster", type=Path, required=True, metavar="CSV",
                   help="the LMS's own export of the class (Canvas: Grades > Export; Moodle: Export > Plain text "
                        "file), UTF-8")
    x.add_argument("--match", required=True, metavar="COLUMN",
                   help='the roster column holding the folder names, e.g. "SIS Login ID", "Username", or a '
                        '"GitHub" column you added; matched ignoring case')
    x.add_argument("--column", default="autograd-lab", metavar="NAME",
                   help="the assignment (Canvas) or grade item (Moodle) column; a Canvas roster's \"NAME (id)\" "
                        "column is used where it has one (default: %(default)s)")
    x.add_argument("--id", metavar="COLUMN",
                   help="moodle: the roster column Moodle identifies a user by (default: the first of Email "
                        "address, ID number, Username it has)")
    x.add_argument("--missing", choices=("skip", "zero"), default="skip",
                   help="a roster student with no submission: left out (the LMS keeps what it has) or given 0 "
                        "(default: %(default)s)")
    x.add_argument("--adjustments", type=Path, metavar="CSV",
                   help="the instructor's adjustments (default: OUT_DIR/adjustments.csv)")
    x.add_argument("--to", type=Path, metavar="FILE", help="where the file goes (default: OUT_DIR/<lms>-import.csv)")
    cli_options.add_course_option(x)
    x.set_defaults(run=_export)

    e = sub.add_parser("examples", help="write ready examples for grading a class on a cluster",
                       description="Write a GitHub Actions matrix workflow, a Slurm array job and a Kubernetes "
                                   "Indexed Job, each running grade-all --shard I/N and then merge.")
    e.add_argument("out", type=Path, metavar="OUT_DIR")
    e.add_argument("--force", action="store_true", help="replace files that exist")
    e.set_defaults(run=_examples)

    r = sub.add_parser("release", help="write the student bundle: exercises/ and the CI workflow",
                       description="Write what students receive: exercises/ (the stubs, the public tests, "
                                   "conftest.py, pytest.ini, README.md) and .github/workflows/scorecard.yml, "
                                   "which grades their code on every push. No solutions, no graders, no secret; "
                                   "with --course, the course's tasks only.")
    r.add_argument("out", type=Path, metavar="OUT_DIR")
    r.add_argument("--wheel", metavar="WHERE", action=cli_options.Checked, check=release_wheel,
                   help="where the students' CI gets the graders' wheel: OWNER/REPO@TAG (a release of a repository "
                        "of the organization, read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN) or the "
                        "wheel's https URL; the organization variable AUTOGRAD_LAB_WHEEL overrides it")
    cli_options.add_course_option(r)
    r.add_argument("--force", action="store_true", help="write into OUT_DIR even when it is not empty")
    r.set_defaults(run=_release)

    s = sub.add_parser("gradescope", help="build a Gradescope autograder zip",
                       description="Build the autograder zip to upload to Gradescope: setup.sh, run_autograder "
                                   "and this package's wheel.")
    s.add_argument("zip", type=Path, metavar="OUT.zip")
    s.add_argument("--wheel", type=Path, metavar="FILE",
                   help="put this autograd-lab wheel in the zip (default: build one from the checkout)")
    s.add_argument("--course", type=Path, metavar="FILE",
                   help="the course file: its tasks, points, late policy, visibility and secret go into the zip "
                        "(default: a new course file with a fresh secret, written beside the zip)")
    s.set_defaults(run=_gradescope)

    c = sub.add_parser("classroom50", help="write a Classroom 50 autograder for the assignment",
                       description="Write DIR/autograders/ASSIGNMENT/: autograder.py, which Classroom 50's runner "
                                   "runs in each student's checkout to write ./result.json (classroom50/result/v1), "
                                   "and its siblings: the graders' wheel, course.toml (no secret), constraints.txt "
                                   "and runtime.json (the runtime block). DIR is a classroom's folder in the "
                                   "course's classroom50 repository.")
    c.add_argument("dir", type=Path, metavar="DIR", help="the classroom's folder")
    c.add_argument("--assignment", default="autograd-lab", metavar="SLUG",
                   help="the assignment's slug in Classroom 50 (default: %(default)s)")
    cli_options.add_course_option(c)
    c.add_argument("--wheel", type=Path, metavar="FILE",
                   help="the autograd-lab wheel to put beside autograder.py (default: build one from the checkout)")
    c.add_argument("--unkeyed", action="store_true",
                   help="grade on GitHub-hosted runners without a key (every student's inputs the same and "
                        "fixed): only where those grades do not count")
    c.set_defaults(run=_classroom50)
