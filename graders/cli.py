"""The ``autograd-lab`` command: parses arguments and dispatches, nothing more."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders import __version__, cli_class, cli_options, paths, pipeline
from graders import messages as msg
from graders.course import build, course_file, tables
from graders.results import scorecard
from graders.submission import intake, layout
from graders.tasks import GRADE_DEADLINE


def _build_exercises(args) -> int:
    if not paths.in_checkout():
        print(msg.NEEDS_CHECKOUT.format(command="autograd-lab build-exercises", path=paths.SOLUTIONS),
              file=sys.stderr)
        return 2
    derived = args.out.resolve() == paths.EXERCISES  # the checkout's: its derived tables go with it
    if args.check:
        stale, tables_stale = build.out_of_sync(paths.SOLUTIONS, args.out), tables.out_of_date() if derived else []
        if stale or tables_stale:
            if stale:
                print(msg.EXERCISES_OUT_OF_SYNC.format(files=", ".join(stale)), file=sys.stderr)
            if tables_stale:
                print(msg.TABLES_OUT_OF_SYNC.format(files=", ".join(tables_stale)), file=sys.stderr)
            return 1
        print(msg.EXERCISES_IN_SYNC.format(out=args.out))
        return 0
    try:
        changed = build.build_exercises(paths.SOLUTIONS, args.out, force=args.force)
    except build.WouldOverwriteWork as work:
        print(msg.BUILD_WOULD_OVERWRITE.format(out=args.out, files=", ".join(work.args[0])), file=sys.stderr)
        return 1
    if derived:
        changed += tables.write()
    files = msg.EXERCISES_WRITTEN_FILES.format(files=", ".join(changed)) if changed else ""
    print(msg.EXERCISES_WRITTEN.format(out=args.out, count=len(changed), files=files))
    return 0


def _grade(args) -> int:
    from graders.isolation import sandbox
    from graders.judge.grade import ERROR
    from graders.results import outputs, pictures

    try:
        course = course_file.load(args.course)
        how = course_file.grading(course, args.student or intake.name_of(args.submission), key=args.key,
                                  tasks=args.tasks)
    except course_file.CourseError as error:
        print(msg.CLI_FAILED.format(command="grade", error=error), file=sys.stderr)
        return 2
    # Without a key, a student's own grade: it may settle below bubblewrap, saying so. With one (--key, or a course's
    # secret), a grade that counts: the isolation it asks for, or a refusal.
    practice = how["key"] is None
    note = sandbox.fallback_note(args.isolation) if practice else None
    if note is not None:
        print(note, file=sys.stderr)
    painter = pictures.Painter.start() if args.results or args.markdown else None  # loss.png, beside them
    try:
        try:
            graded = pipeline.grade_submission(args.submission, key=how["key"], tasks=tuple(how["tasks"]),
                                               isolation=args.isolation, deadline=args.deadline,
                                               finished=painter.finished if painter is not None else None,
                                               points=how["points"], key_shown=how["key_shown"], practice=practice)
        except (layout.SubmissionError, RuntimeError) as error:
            print(msg.CLI_FAILED.format(command="grade", error=error), file=sys.stderr)
            return 2
        print(scorecard.table(graded.result, seconds=graded.report.seconds))
        outputs.write_views(graded.report, graded.result, results=args.results, markdown_path=args.markdown,
                            junit=args.junit, classroom_path=args.classroom, warn=outputs.stderr_line,
                            painter=painter)
    finally:
        if painter is not None:
            painter.close()
    return 3 if any(r.status == ERROR for r in graded.report.results) else 0


def _doctor(args) -> int:
    from graders.integrations import kernel_jail
    from graders.judge import doctor

    print(doctor.report(kernel=kernel_jail.describe()))
    return 0


def _nbgrader(args) -> int:
    from graders.integrations import nbgrader_course

    try:
        written = nbgrader_course.build_course(args.course_dir, args.assignment, force=args.force,
                                               course_path=args.course)
    except (ValueError, FileExistsError, OSError) as error:
        print(msg.CLI_FAILED.format(command="nbgrader", error=error), file=sys.stderr)
        return 2
    modules = ", ".join(p.name for p in written if p.suffix == ".py" and p.parent.parent.name == "source")
    print(msg.COURSE_WRITTEN.format(course=args.course_dir, assignment=args.assignment, modules=modules))
    if any(p.name == nbgrader_course.COURSE_FILE for p in written):
        print(msg.NBGRADER_COURSE_MADE.format(path=Path(args.course_dir) / nbgrader_course.COURSE_FILE))
    return 0


def _nbgrader_report(args) -> int:
    from graders.integrations import nbgrader_report

    try:
        records, notes = nbgrader_report.report(args.course_dir, args.assignment, args.out, args.course)
    except (ValueError, OSError) as error:
        print(msg.CLI_FAILED.format(command="nbgrader-report", error=error), file=sys.stderr)
        return 2
    for note in notes:
        print(note, file=sys.stderr)
    print(msg.NB_REPORT_DONE.format(graded=sum(r.graded for r in records), students=len(records), out=args.out))
    return 0


def _course(args) -> int:
    try:
        if args.action == "init":
            path = course_file.init(args.file, force=args.force)
            print(msg.COURSE_INIT_DONE.format(path=path))
        else:
            path = course_file.rotate(args.file)
            print(msg.COURSE_ROTATE_DONE.format(path=path))
    except (course_file.CourseError, FileExistsError, OSError) as error:
        print(msg.CLI_FAILED.format(command=f"course {args.action}", error=error), file=sys.stderr)
        return 2
    return 0


# The order of the commands in --help: the instructors' first, the maintainers' build-exercises last.
ORDER = ("grade", "grade-all", "merge", "export", "course", "nbgrader", "nbgrader-report", "release", "gradescope",
         "classroom50", "examples", "doctor", "build-exercises")


def parser() -> argparse.ArgumentParser:
    """The whole ``autograd-lab`` command line: every subcommand with its options and help, in ORDER; the class commands
    come from cli_class. Built by a function so tests and docs can read the help."""
    p = argparse.ArgumentParser(prog="autograd-lab", description="Autograding for the autograd lesson.")
    p.add_argument("--version", action="version", version=f"autograd-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("grade", help="grade one submission folder and print its scorecard",
                       description="Grade a folder laid out like exercises/. Exit status: 0 when grading "
                                   "completed (whatever the score), 2 for a path that cannot be graded, "
                                   "3 when the grader itself failed on a task.")
    g.add_argument("submission", type=Path, help="a folder laid out like exercises/")
    g.add_argument("--results", type=Path, metavar="FILE", help="write Gradescope's results.json here")
    g.add_argument("--markdown", type=Path, metavar="FILE", help="write a Markdown scorecard (CI job summary)")
    g.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML")
    g.add_argument("--classroom", type=Path, metavar="FILE",
                   help="write Classroom 50's result.json (classroom50/result/v1: the identity from the runner's "
                        "environment, the time of the commit checked out)")
    cli_options.add_grading_options(g)
    g.add_argument("--student", metavar="NAME",
                   help="with --course: grade with the key of this student (default: the submission's name, as "
                        "grade-all names it)")
    g.add_argument("--deadline", type=float, default=GRADE_DEADLINE, metavar="S",
                   help="stop the whole grade after S seconds of its workers' CPU time, or S seconds they waited "
                        "without computing; the tasks not finished by then fail (default: %(default)g)")
    g.set_defaults(run=_grade)

    c = sub.add_parser("course", help="write a course file, or give one a fresh secret",
                       description="init: write FILE, a course file with every default (each with a comment) and a "
                                   "fresh secret, readable by you only; every command then takes --course FILE. "
                                   "rotate: give FILE a fresh secret, everything else kept (every student's key "
                                   "changes: the next grade-all grades everyone again).")
    c.add_argument("action", choices=("init", "rotate"))
    c.add_argument("file", type=Path, metavar="FILE", help="the course file (TOML)")
    c.add_argument("--force", action="store_true", help="init: replace FILE where it exists (its secret is lost)")
    c.set_defaults(run=_course)

    d = sub.add_parser("doctor", help="report what isolation and devices this machine gives the graders")
    d.set_defaults(run=_doctor)

    cli_class.add_commands(sub)  # grade-all, merge, export, examples, release, gradescope, classroom50

    n = sub.add_parser("nbgrader", help="write an nbgrader course directory for this assignment",
                       description="Write COURSE_DIR/nbgrader_config.py and COURSE_DIR/source/ASSIGNMENT/ "
                                   "(the stubs and a notebook with one graded cell per task); "
                                   "the README's \"Grading with nbgrader\" has the workflow.")
    n.add_argument("course_dir", type=Path, metavar="COURSE_DIR", help="the course directory (created if missing)")
    n.add_argument("--assignment", default="autograd_lab", metavar="NAME",
                   help="the assignment's name in nbgrader (default: %(default)s)")
    n.add_argument("--course", type=Path, metavar="FILE",
                   help="the course file: its tasks become the graded cells, with its points, and its secret keys "
                        "each student (default: COURSE_DIR/autograd_lab_course.toml, made with a fresh secret)")
    n.add_argument("--force", action="store_true", help="replace an nbgrader_config.py edited by hand")
    n.set_defaults(run=_nbgrader)

    r = sub.add_parser("nbgrader-report", help="write the class report of an autograded nbgrader course",
                       description="Read the scorecards `nbgrader autograde` left beside each autograded notebook "
                                   "and write OUT_DIR/class.md, class.html, grades.csv and each student's "
                                   "results.json, as grade-all does; students in the course's gradebook who did "
                                   "not submit, or were not autograded, are listed as such.")
    r.add_argument("course_dir", type=Path, metavar="COURSE_DIR", help="the nbgrader course directory")
    r.add_argument("--assignment", default="autograd_lab", metavar="NAME",
                   help="the assignment's name in nbgrader (default: %(default)s)")
    r.add_argument("--out", type=Path, required=True, metavar="OUT_DIR", help="where to write the report")
    r.add_argument("--course", type=Path, metavar="FILE",
                   help="the course file the course was built with (default: COURSE_DIR/autograd_lab_course.toml "
                        "where it is there)")
    r.set_defaults(run=_nbgrader_report)

    b = sub.add_parser("build-exercises", help="(maintainers) generate exercises/ from solutions/ in a checkout; "
                                                       "never over filled-in work")
    b.add_argument("--out", type=Path, default=paths.EXERCISES, help="where to write (default: %(default)s)")
    b.add_argument("--check", action="store_true", help="only report whether the stubs are in sync")
    b.add_argument("--force", action="store_true",
                   help="write even over files whose tasks were filled in (their work is lost)")
    b.set_defaults(run=_build_exercises)

    sub._choices_actions.sort(key=lambda action: ORDER.index(action.dest))
    return p


def main(argv: list[str] | None = None) -> int:
    """Run ``autograd-lab`` with ``argv`` (the process's own when None); the exit status."""
    args = parser().parse_args(argv)
    return args.run(args)


def run() -> None:
    """The console script (and ``python -m graders``): ``main()``, then out without tearing the interpreter down
    (``processes.exit_without_teardown``). An exit that argparse raises (--help, a bad option) goes as usual."""
    from graders.isolation.processes import exit_without_teardown

    exit_without_teardown(main())
