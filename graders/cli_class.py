"""The ``autograd-lab`` subcommands for a whole class: grade-all, merge, examples, release, gradescope.

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


def _grade_all(args) -> int:
    from graders.classgrade import batch
    from graders.classgrade.progress import terminal_progress

    settings = batch.Settings(key=args.key, tasks=args.tasks, isolation=args.isolation)
    try:
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
        task_ids, records = batch.merge(args.folders, args.out, args.adjustments)
    except (ValueError, OSError) as error:
        return _fail("merge", error)
    for note in batch.class_views(args.out, records, task_ids):
        print(note, file=sys.stderr)
    print(msg.MERGE_DONE.format(students=len(records), folders=len(args.folders), csv=Path(args.out) / "grades.csv"))
    return 0


def _export(args) -> int:
    from graders.classgrade import lms

    try:
        path, result = lms.write(args.out_dir, args.lms, args.roster, column=args.column, match_column=args.match,
                                 id_column=args.id, missing=args.missing, adjustments=args.adjustments, to=args.to)
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
        written = release.release(args.out, package=args.package or release.DEFAULT_PACKAGE, force=args.force)
    except (FileExistsError, FileNotFoundError, OSError) as error:
        return _fail("release", error)
    print(msg.RELEASE_WRITTEN.format(out=args.out, count=len(written)))
    return 0


def _gradescope(args) -> int:
    from graders import paths
    from graders.integrations import gradescope

    try:
        out, wheel = gradescope.build_zip(args.zip, paths.REPO, args.wheel)
    except (FileNotFoundError, RuntimeError, OSError) as error:
        return _fail("gradescope", error)
    print(msg.GRADESCOPE_WRITTEN.format(zip=out, kib=out.stat().st_size // 1024, wheel=wheel))
    return 0


def add_commands(sub) -> None:
    """Add the class commands to the ``autograd-lab`` parser's subparsers."""
    from graders.classgrade.pool import DEFAULT_TIMEOUT

    a = sub.add_parser("grade-all", help="grade every submission in a folder into a gradebook",
                       description="Grade every folder laid out like exercises/ (or .zip of one) in SUBMISSIONS_DIR "
                                   "with a pool of judge processes. Writes OUT_DIR/<student>/results.json (and "
                                   "scorecard.md, loss.png) and OUT_DIR/grades.csv as each student finishes; a "
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
    a.set_defaults(run=_grade_all)

    m = sub.add_parser("merge", help="combine the gradebooks of shards into one",
                       description="Combine the OUT_DIRs of grade-all runs over --shard 1/N ... N/N into one "
                                   "OUT_DIR: grades.csv, the students' folders and the class's pictures.")
    m.add_argument("folders", type=Path, nargs="+", metavar="OUT_DIR", help="the shards' output folders")
    m.add_argument("--out", type=Path, required=True, metavar="MERGED", help="where the merged gradebook goes")
    m.add_argument("--adjustments", type=Path, metavar="CSV",
                   help="the instructor's adjustments, applied to the merged class (default: MERGED/adjustments.csv)")
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
    x.set_defaults(run=_export)

    e = sub.add_parser("examples", help="write ready examples for grading a class on a cluster",
                       description="Write a GitHub Actions matrix workflow, a Slurm array job and a Kubernetes "
                                   "Indexed Job, each running grade-all --shard I/N and then merge.")
    e.add_argument("out", type=Path, metavar="OUT_DIR")
    e.add_argument("--force", action="store_true", help="replace files that exist")
    e.set_defaults(run=_examples)

    r = sub.add_parser("release", help="write the student bundle: exercises/ and the CI workflow",
                       description="Write what students receive: exercises/ (the stubs, the public tests, "
                                   "conftest.py, pytest.ini, README.md) and .github/workflows/autograde.yml, "
                                   "which grades their code on every push. No solutions, no graders.")
    r.add_argument("out", type=Path, metavar="OUT_DIR")
    r.add_argument("--package", metavar="REQUIREMENT",
                   help="what the students' CI installs with pip (a wheel's URL, git+https://...); the "
                        "organization variable AUTOGRAD_LAB_PACKAGE overrides it")
    r.add_argument("--force", action="store_true", help="write into OUT_DIR even when it is not empty")
    r.set_defaults(run=_release)

    s = sub.add_parser("gradescope", help="build a Gradescope autograder zip",
                       description="Build the autograder zip to upload to Gradescope: setup.sh, run_autograder "
                                   "and this package's wheel.")
    s.add_argument("zip", type=Path, metavar="OUT.zip")
    s.add_argument("--wheel", type=Path, metavar="FILE",
                   help="put this autograd-lab wheel in the zip (default: build one from the checkout)")
    s.set_defaults(run=_gradescope)
