"""The course (graders/course/course_file.py) and the keys drawn from its secret, the course file's template, and
where a course is delivered and graded: the student bundle (graders/course/release.py), Gradescope
(graders/integrations/gradescope.py) and Classroom 50 (graders/integrations/classroom50.py).
"""

COURSE_AT = "{path}, line {line}: {what}"
GRADE_ALL_ONE_KEY = ("got --key {key}: one key for a whole class gives every student the same inputs, which one of "
                     "them can learn and pass on. Give --course FILE instead: each student's key is derived from its "
                     "secret (`autograd-lab course init FILE` writes one); --key is for one submission "
                     "(autograd-lab grade)")
GRADE_ALL_NO_KEYS = ("no key to grade with: give --course FILE, whose secret each student's key is derived from "
                     "(`autograd-lab course init FILE` writes one), or set $AUTOGRAD_LAB_SECRET. To try the package "
                     "on fixed inputs that every student shares, pass --unkeyed (those grades should not count)")
COURSE_TASKS_LEFT_OUT = "got --tasks {tasks}, which {where} leaves out (0 points)"
EXAMPLES_STUDENT_KEY = "this student's key of the course (#{tag})"
COURSE_DEFAULT = "the default course (no --course FILE)"
COURSE_UNREADABLE = "{path}: cannot read the course file ({error})"
COURSE_NOT_UTF8 = "{path}: the course file is not UTF-8 text"
COURSE_NOT_TOML = "not TOML: {error}"
COURSE_UNKNOWN_KEY = "got {key!r}, expected one of {known}"
COURSE_NOT_A_TABLE = "{name} must be a table ([{name}])"
COURSE_UNKNOWN_TASK = "got task {task!r}, expected a task id of the task table: {known}"
COURSE_POINTS_NOT_WHOLE = "got {task} = {value!r}, expected a whole number of points (0 leaves the task out)"
COURSE_NEGATIVE_POINTS = "got {task} = {value}, expected points of at least 0 (0 leaves the task out)"
COURSE_NEEDS_TASK = "task {task} grades {needed}'s code: it cannot have points in a course without {needed}"
COURSE_NO_POINTS = "the course gives no task any points: give at least one task more than 0"
COURSE_SHORT_SECRET = ("the secret must be text of at least {chars} characters: `autograd-lab course rotate FILE` "
                       "writes a fresh one")
COURSE_SHORT_SECRET_ENV = "${env} must hold at least {chars} characters (a fresh one: `python -c \"import secrets; " \
                          "print(secrets.token_hex(32))\"`)"
COURSE_BAD_PERCENT = "got {name} = {value!r}, expected a number of percent from 0 to 100"
COURSE_BAD_TIMES = "got times = {value!r}, expected the path of a CSV file (student,submitted), relative to this file"
COURSE_BAD_DATE = "got {value}, expected a date and time with its UTC offset, e.g. 2026-03-01T23:59:00-05:00"
COURSE_DATE_NO_OFFSET = ("got {value}, a time without its UTC offset: add one (2026-03-01T23:59:00-05:00, or Z for "
                         "UTC), so that every grader reads the same instant")
COURSE_BAD_VISIBILITY = "got {value!r}, expected one of {known}"
COURSE_NO_SECRET = ("{where} has no secret, so no student's key can be derived: add `secret = ...` to the file "
                    "(`autograd-lab course init FILE` writes a course file with one) or set ${env}")
COURSE_NO_SECRET_LINE = "{path}: no `secret = \"...\"` line to rotate; add one (at least 32 characters)"
COURSE_FILE_EXISTS = "{path} exists; pass --force to replace it (its secret is lost: every student's key changes)"
COURSE_TIMES_UNREADABLE = "{path}: cannot read the submission times named by {course} ({error})"
COURSE_TIMES_HEADER = "the first row must be the header {header}"
COURSE_TIMES_ROW = "expected two cells, {header}"
COURSE_INIT_DONE = ("{path}: a course file with every default and a fresh secret (readable by you only). Edit it, then "
                    "give it to every command: --course {path}")
COURSE_ROTATE_DONE = ("{path}: a fresh secret. Every student's inputs change with it: the next grade-all grades "
                      "everyone again; rebuild the Gradescope zip, the nbgrader course's graders and the runners' "
                      "secret with it")
COURSE_COLUMNS = ("{folder}: its gradebook's task columns are {got}, and the course file {course} grades {expected}: "
                  "give the course file the class was graded with")
LATE_PENALTY = "late by {days} day{s}: -{percent:g}% ({per_day:g}% a day, at most {cap:g}%)"
LATE_NO_TIME = ("the course has a due date, but {count} student(s) have no submission time in {path}, so no late "
                "penalty is applied to them: {names}")
LATE_NO_TIMES_FILE = ("the course has a due date, but names no submission times (times = \"FILE\" under [late]), "
                      "so grade-all applies no late penalty")
COURSE_COPY_HEAD = ("# The course's tasks, points, late policy, Gradescope visibility and secret. Written by "
                    "autograd-lab from the\n# instructors' course file; edit that one, not this.")
COURSE_PUBLIC_HEAD = ("# The course's tasks, points, late policy and Gradescope visibility, without its secret: the "
                      "runner gives the secret\n# (${env}). Written by autograd-lab from the instructors' course file; "
                      "edit that one, not this.")
COURSE_TEMPLATE_NO_POINTS = ("# {title}: left out, it runs where the grader has a GPU, for no points; points\n"
                             "# here count only where every grade has a GPU (Classroom 50's GPU runner), and 0 "
                             "leaves it out.\n# {line}")
COURSE_TEMPLATE = """\
# autograd-lab's course file: what this course grades, for how many points, and when it is due.
# Every command takes it: autograd-lab grade, grade-all, merge, export, release, nbgrader, gradescope and
# classroom50, each with --course FILE. Written by `autograd-lab course init`. Keep it private: it holds the
# course's secret, and it is never shipped to students.

# The course's secret. Each student's grading key is an HMAC of it and the student's identity (grade-all's
# folder name, nbgrader's student id, Classroom 50's repository owner, Gradescope's user ids): the same
# student always gets the same inputs, two students never share theirs, and nobody can tell either without
# the secret. Rotate it with `autograd-lab course rotate FILE` (every student is graded again, on new inputs).
# Where a file holds no secret line, ${env} gives it (a runner's or a CI's secret store).
secret = "{secret}"

# Each task's points. 0 leaves a task out of the course: it is not graded, and its public tests, notebook cell
# and Gradescope test go with it. A task left out of this table keeps the points written here. The total is
# what the points add to: {total} as written here.
[tasks]
{tasks}

# Late submissions. Changing anything here never grades a submission again: the penalty is applied to the
# totals on every run (grade-all, merge, export, Gradescope, Classroom 50).
[late]
# The due date, ISO 8601 with its UTC offset; without one, nothing is late.
# due = 2026-03-01T23:59:00-05:00
# Percent of a submission's total taken for each day late, a part of a day counting as a whole one.
percent_per_day = {per_day}
# At most this many percent are taken, however late.
cap_percent = {cap}
# grade-all's submission times: a CSV with the header student,submitted (the folder's name, ISO 8601 with
# its offset), relative to this file. Gradescope gives the submission's own time, Classroom 50 the graded
# commit's.
# times = "submitted.csv"

# A student's own due date, by their identity (as for the keys; Gradescope's e-mail address too).
[late.extensions]
# "alice" = 2026-03-04T23:59:00-05:00

[gradescope]
# Each task's test on Gradescope: {visibilities}.
visibility = "visible"

# A task's own visibility, by task id.
[gradescope.tasks]
# "5.4" = "after_due_date"
"""

# The student bundle and the cluster examples (graders/course/release.py), and Gradescope's autograder
# (graders/integrations/gradescope.py).
EXAMPLES_WRITTEN = "{out}: wrote {files}"
EXAMPLES_EXIST = "{path} exists; pass --force to replace it"
NEEDS_CHECKOUT = ("{command} needs the autograd-lab repository, and {path} is missing: run it from a git "
                  "checkout installed with `pip install -e .`")
GRADESCOPE_OR_WHEEL = " (or pass the package's wheel with --wheel FILE)"
GRADESCOPE_NO_WHEEL = "{wheel}: not an autograd-lab wheel (autograd_lab-*.whl)"
RELEASE_NOT_EMPTY = "{out} exists and is not empty; pass --force to write the bundle into it anyway"
RELEASE_WRITTEN = ("{out}: the student bundle, {count} files: exercises/ (stubs, public tests, README) and "
                   ".github/workflows/scorecard.yml; no solutions, no graders, no secret\n{wheel}")
RELEASE_WHEEL_AT = ("Its CI installs the graders from {where}{token}: put {wheel} there (from autograd-lab's "
                    "checkout: python -m pip wheel --no-deps -w dist .; it holds no solution and no secret).")
RELEASE_WHEEL_TOKEN = (", read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN: a fine-grained token that reads "
                       "that repository alone (a student's own workflow can use the token, so the repository "
                       "must hold the wheel and nothing else)")
RELEASE_WHEEL_UNSET = ("Its CI installs the graders from the organization variable AUTOGRAD_LAB_WHEEL, which you set: "
                       "OWNER/REPO@TAG, a release of a repository of the organization that holds {wheel} and nothing "
                       "else, read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN (a fine-grained token that "
                       "reads that repository alone), or the wheel's https URL; or write it in with --wheel WHERE. "
                       "Build the wheel from autograd-lab's checkout: python -m pip wheel --no-deps -w dist .")
RELEASE_BAD_WHEEL = ("got --wheel {where!r}, expected OWNER/REPO@TAG (a release of a repository of the organization) "
                     "or the https URL of a .whl")
RELEASE_NOT_IN_COURSE = "Task {task}: {title} is not part of this course, nothing to write here"
RELEASE_COURSE_DUE = "\n\nDue {due}; each day late (or part of one) costs {per_day:g}% of your total, at most {cap:g}%."
RELEASE_COURSE_SECTION = """## This course's tasks

Your course grades these tasks, for these points ({total} in all). The lesson's other tasks are not part of
it: their stubs say so, and `pytest exercises/` leaves their tests out.{due}

| task | title | points |
| --- | --- | ---: |
{rows}

"""
GRADESCOPE_WRITTEN = ("{zip}: a Gradescope autograder ({kib:,} KiB): setup.sh, run_autograder, {wheel}, its "
                      "dependencies' pins and the course file (with its secret: never share the zip with students)")
GRADESCOPE_COURSE_MADE = ("{course}: the course file made for it, with a fresh secret (readable by you only): keep it, "
                          "and give it to `autograd-lab grade --course {course} --student gradescope:ID` to grade a "
                          "Gradescope student again here, or to `autograd-lab gradescope --course` for the next zip")
GRADESCOPE_NO_METADATA = "{path}: cannot tell whose submission this is ({error})"
GRADESCOPE_METADATA_NOT_GIVEN = "no submission_metadata.json was given, so whose submission this is is unknown"
GRADESCOPE_NO_KEY = "no key to grade this submission with: {why}"
GRADESCOPE_REFUSED = ("The autograder refused to grade this submission: {why}. This is not your mistake: please tell "
                      "your instructor (the autograder zip needs rebuilding with `autograd-lab gradescope --course "
                      "FILE`).")
GRADESCOPE_LATE = "Late: {penalty}."
GRADESCOPE_BUILD_FAILED = "building the wheel failed (pip wheel, exit status {code}):\n{output}"
GRADESCOPE_NOT_GRADED = ("The autograder could not grade this submission: {why}\n"
                         "Upload the .py files of exercises/ (tensor.py, optim.py, data.py, train.py, torch_loop.py), "
                         "or a .zip of the folder that holds them.")
GRADESCOPE_NO_SANDBOX = ("The autograder did not grade this submission: it grades only inside its sandbox, which "
                         "cannot start here. This is not your mistake: please tell your instructor. ({why})")
GRADESCOPE_CRASHED = ("The autograder itself failed ({error}). This is not your mistake: please tell your "
                      "instructor.")

# Classroom 50 (graders/integrations/classroom50.py).
CLASSROOM50_BAD_SLUG = "got --assignment {assignment!r}, expected a Classroom 50 slug ({pattern})"
CLASSROOM50_NO_OWNER = ("the runner's environment names no repository owner (OWNER, USERNAME or GITHUB_REPOSITORY): "
                        "whose submission this is is unknown")
CLASSROOM50_NO_SECRET = ("no course secret on this runner (${env}), so the owner's key cannot be derived: run the "
                         "assignment on the course's self-hosted runner, whose .env holds ${env} (runtime.json names "
                         "its labels), or write the autograder again with --unkeyed")
CLASSROOM50_REFUSED = "::error::autograd-lab refused to grade this submission: {why}"
CLASSROOM50_NOT_GRADED = ("nothing to grade in this repository: {why}. Keep exercises/ as it was given (tensor.py, "
                          "optim.py, data.py, train.py, torch_loop.py)")
CLASSROOM50_LATE = "**Late**: {penalty}; the score after it: {score}/{most}."
CLASSROOM50_WRITTEN = """\
{folder}: Classroom 50's autograder of the assignment {assignment}: autograder.py, course.toml (the course's
tasks and points, no secret), constraints.txt (every dependency pinned), runtime.json (the runtime block) and
{wheel}. The graders' wheel goes there, beside autograder.py: Classroom 50 publishes the folder with the
assignment's bundle (the wheel holds no solution and no secret), and autograder.py installs it on the runner.
Commit the folder to the course's classroom50 repository, then register the assignment with its runtime block:
  gh teacher assignment add ORG CLASSROOM {assignment} ... --runtime {folder}/runtime.json"""
CLASSROOM50_COURSE_MADE = ("{path}: the course file of the assignment, with its secret (readable by you only): keep it "
                           "out of the classroom50 repository, whose autograders are published; its secret goes into "
                           "the runner's .env, and --course {path} writes the autograder again")
CLASSROOM50_KEYED = """\
The runtime block asks for the course's self-hosted runner ({labels}). Each grade derives the student's key from
the repository's owner and the course's secret, which that runner alone gives: put
AUTOGRAD_LAB_SECRET=<the course file's secret> in the runner's .env file, and put the runner in a group that only
ORG/classroom50/.github/workflows/autograde-runner.yaml may use, so no student's own workflow runs there.
Without the secret, the autograder refuses (an error status, no grade). docs/gradescope-and-ci.md has the set-up."""
CLASSROOM50_UNKEYED = """\
Written with --unkeyed: it grades on GitHub-hosted runners without a key, on the fixed inputs that every student
shares (one student who learns them can pass them on). Those grades should not count."""
