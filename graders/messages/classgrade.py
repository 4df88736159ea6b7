"""A whole class (graders/classgrade/): grade-all's progress and rows, merge, the pictures, adjustments, the
export to an LMS, and the class report's headings, rungs and similar submissions.
"""

# grade-all (graders/classgrade/batch.py, pool.py, progress.py): each row's status, the run's progress and its
# options.
BATCH_GRADED = "graded"
BATCH_MALFORMED = "malformed: {reason}"
BATCH_TIMED_OUT = "timed out: no result after {seconds:g} s of CPU time, so its judge was stopped"
BATCH_TIMED_OUT_IDLE = ("timed out without computing: no result, and {seconds:g} s waited without using the CPU, so "
                        "its judge was stopped")
# A graded row whose grade has a task that timed out without computing (graders.results.mistakes.IDLE): the only
# verdicts that rest on wall time, said so an instructor can tell them from a slow loop.
BATCH_GRADED_IDLE = "graded (timed out without computing on task {tasks}: see results.json)"
# grade-all's last note where the machine was busier than its cores during the run.
BATCH_LOADED = ("grade-all: the machine's load averaged {load:.1f} on {cores} core(s) during the run: the grades "
                "count CPU time, so they are what a quiet machine gives, but the run took longer")
BATCH_CRASHED = "crashed: {reason}"
BATCH_REFUSED = "not graded: {reason}"
BATCH_GRADER_ERROR = "graded (the grader failed on task {tasks}: see results.json)"
BATCH_JUDGE_EXITED = "the judge process exited ({how}) while grading it{words}"
BATCH_JUDGE_WORDS = "; its last line: {line}"
BATCH_JUDGE_NO_START = "the judge process did not start within {seconds:g} s (see OUT_DIR/.logs/)"
BATCH_PROGRESS = "grade-all: {done}/{total} ({skipped} unchanged, {failed} not graded) · {rate} · ETA {eta} · {last}"
BATCH_PROGRESS_LAST = "{student}: {status}"
BATCH_DONE = ("grade-all: {graded} graded, {skipped} unchanged since the last run (--force regrades them), "
              "{failed} not graded, in {seconds:.0f} s\nwrote {csv}")
BATCH_START = ("grade-all: {todo} to grade, {skipped} unchanged since the last run, of {mine} submission(s)"
               "{shard} in {folder}; {judges} judge process(es)")
BATCH_START_SHARD = " (shard {index}/{count} of {total})"
BATCH_INTERRUPTED = ("grade-all: interrupted; every finished submission is kept in {csv}, and the same "
                     "command goes on from there")
BATCH_EMPTY = "{folder}: no submission in it (expected folders laid out like exercises/, or .zip files of one)"
BATCH_NOT_A_FOLDER = "{folder}: not a folder of submissions"
BATCH_BAD_SHARD = "got --shard {text!r}, expected I/N with 1 <= I <= N (for example 2/4)"
BATCH_BAD_JOBS = "got --jobs {jobs}, expected at least 1"
BATCH_BAD_TIMEOUT = "got --timeout {seconds:g}, expected more than 0 seconds"
BATCH_OUT_INSIDE = "{out} is {folder} itself; write the results elsewhere"

# merge (graders/classgrade/gradebook.py): the shards' gradebooks joined, or refused whole.
MERGE_NO_CSV = "{folder}: no grades.csv in it (expected a folder that `autograd-lab grade-all --out` wrote)"
MERGE_COLUMNS = ("{path}: its columns ({got}) differ from those of {first} ({expected}); "
                 "were the shards graded with the same --tasks?")
MERGE_DUPLICATE = ("{student} is in both {first} and {second}: were the shards given different slices "
                   "(--shard 1/N ... N/N) of the same N?")
MERGE_ISOLATION = ("{path}: {student} was graded under the isolation {got}, expected {expected}: a grade that counts "
                   "runs in bubblewrap, or with --isolation limits as root; grade that shard again where "
                   "`autograd-lab doctor` says grades that count can run")
MERGE_OUT_IS_INPUT = "{out} is one of the folders to merge; write the merged gradebook elsewhere"
# A shard's file that is not what grade-all writes: merge refuses it, naming the file (and the row), before writing.
MERGE_BAD_HEADER = "{path}: not a grades.csv that grade-all wrote: its header must be {expected}"
MERGE_BAD_ROW = "{path}, line {line}: {problem}; refused, nothing was merged"
MERGE_CELLS = "{cells} cells, expected {columns} as in the header"
MERGE_BAD_NAME = "the student {name!r} is {problem}"
MERGE_BAD_VALUE = "{column} is {value!r}, expected {expected}"
MERGE_NUMBER = "a number, at least 0"
MERGE_NUMBER_UP_TO = "a number from 0 to the task's {most:g} points"
MERGE_BAD_FILE = "{path}: {problem}; refused, nothing was merged"
MERGE_RECORD_NOT_OBJECT = "not a record grade-all wrote (a JSON object)"
MERGE_RECORD_FIELDS = "not a record grade-all wrote: its fields are {fields}"
MERGE_RECORD_TYPE = "not a record grade-all wrote: its {field} is {got}"
MERGE_RECORD_OTHER = "the record of {student!r}, in the folder of {row!r}"
MERGE_RECORD_SCORE = "task {task!r} at {points:g} points, which is no task of the gradebook or past its points"
MERGE_RESULT = "not a results.json grade-all wrote: {problem}"
MERGE_RESULT_SHAPE = "its tests are not a list"
MERGE_RESULT_TEST = "test {index}: {problem}"
MERGE_OUT_TAKEN = "{path} is not a folder; write the merged gradebook elsewhere"
MERGE_DONE = "merge: {students} student(s) from {folders} folder(s)\nwrote {csv}"


# The pictures (graders/results/pictures.py): a student's run of task 5.4, and the class's totals and pass rates.
NO_PICTURES = ("pictures skipped: matplotlib is not installed here; it comes with autograd-lab "
               "(pip install -c .ci/constraints.txt -e . installs it, or pip install matplotlib)")
PICTURE_LINK = "![Task 5.4: your training loss per epoch against the noise floor]({file})"
LOSS_TITLE = "Task 5.4: the lesson's run on your code"
LOSS_YOURS = "your fit: train_loss per epoch"
LOSS_REFERENCE = "the reference solution, same run"
LOSS_FLOOR = "noise floor {floor:g}"
LOSS_BAR = "the bar: 1.5 x the floor = {bar:g}"
LOSS_FINAL = "final weights' MSE, by the grader: {mse:.4f}"
LOSS_AXES = ("epoch", "training MSE (log scale)")
CLASS_TOTALS_TITLE = "Totals of the {graded} graded submission(s) (mean {mean:.1f}, median {median:g})"
CLASS_TOTALS_AXES = ("total points", "students")
CLASS_PASS_TITLE = "Tasks passed, per task ({graded} graded submission(s))"
CLASS_PASS_AXES = ("share of students with the task's full points (%)", "task")
CLASS_SUMMARY = "{students} student(s): {graded} graded, {others} not graded (see grades.csv's status column)."

# An instructor's adjustments (graders/classgrade/adjustments.py).
ADJUSTMENT = "{task} {sign}{points:g} ({reason})"
ADJUSTED_STATUS = "{status}; adjusted: {adjustments}"
ADJUST_MISSING = "{path}: no such adjustments file"
ADJUST_HEADER = "{path}: the first row must be the header {header}"
ADJUST_CELLS = "{path}, line {line}: {cells} cells, expected 4 ({header})"
ADJUST_STUDENT = "{path}, line {line}: no student {student!r} in this class (the names are the submissions' folders)"
ADJUST_TASK = "{path}, line {line}: got task {task!r}, expected one of {tasks} or total"
ADJUST_POINTS = "{path}, line {line}: got points {points!r}, expected +N or -N (added) or =N (set), e.g. +1.5"
ADJUST_REASON = "{path}, line {line}: the reason is empty; say why (a regrade, an excused task, a late penalty)"

# The export to an LMS's gradebook (graders/classgrade/lms.py).
LMS_ROSTER_ENCODING = "{path}, line {line}: not UTF-8 text; save the roster as CSV UTF-8 (the LMS's own export is)"
LMS_ROSTER_EMPTY = "{path}: no header row; expected the roster the LMS exports (a CSV, its first row the columns)"
LMS_ROSTER_REPEATED = "{path}: the header names {columns} more than once"
LMS_ROSTER_CANVAS = ("{path}: no column {lacking} in its header; expected Canvas's gradebook export, whose first "
                     "columns are {columns}")
LMS_ROSTER_CELLS = "{path}, line {line}: {cells} cells, expected {columns} as in the header"
LMS_ROSTER_TWICE = "{path}, line {line}: {name!r} in column {column!r} is on line {first} too"
LMS_ROSTER_LINE = "(the roster's line {line}, no name)"
LMS_CASE_TWICE = ("the submissions {first!r} and {second!r} differ only in case or spaces, and the roster's names "
                  "are matched without them: rename one folder")
LMS_NO_COLUMN = "{path}: no column {column!r}; its columns are {header}"
LMS_MOODLE_ID = ("{path}: none of {columns}, the columns Moodle's import identifies a user by; its columns are "
                 "{header} (name one with --id)")
LMS_ROSTER_MISSING = "{path}: no such roster file"
LMS_NOT_ON_ROSTER = ("{count} graded student(s) not on the roster, left out of the import file (add their names to "
                     "the --match column): {names}")
LMS_NO_SUBMISSION = ("{count} roster student(s) with no submission, left out of the import file (the LMS keeps what "
                     "it has; --missing zero gives them 0): {names}")
LMS_NO_SUBMISSION_ZERO = "{count} roster student(s) with no submission, given 0 in the import file: {names}"
LMS_NOT_GRADED = "{count} student(s) not graded, exported with the total grades.csv shows: {names}"
LMS_DONE = "export: {rows} student(s) for {lms}\nwrote {path}"

# A student's scorecard after the adjustments.
SCORECARD_ADJUSTED_TITLE = "### Adjusted by your instructor"
SCORECARD_ADJUSTED_TOTAL = "Your total after these adjustments: {total:g}."

# The class report (graders/classgrade/report.py, similarity.py).
CLASS_REPORT_TITLE = "# autograd-lab: the class"
CLASS_REPORT_TIME = "Grading took {median:.1f} s per student (median), {most:.1f} s at most."
CLASS_REPORT_TASKS = "Tasks"
CLASS_REPORT_RUNGS = "What failed: {rungs}."
CLASS_REPORT_UNRECOGNISED = "no named mistake, the message says"
CLASS_REPORT_TOTALS = "Totals"
CLASS_REPORT_STUDENTS = "Students"
CLASS_PICTURE_TOTALS = "the distribution of totals"
CLASS_PICTURE_RATES = "the share with full points, per task"
CLASS_REPORT_NO_RESULT = "no result for this task in the student's results.json"
CLASS_REPORT_MORE = "and {count} more"
CLASS_REPORT_NOT_IMPORTING = "{count} whose file does not import (below, once per student)"
CLASS_REPORT_WAITED = "timed out without computing: {reason}"
CLASS_REPORT_IMPORTS = "Files that do not import"
CLASS_REPORT_IMPORTS_INTRO = ("Each line is one student's file that stops at import, which costs every task it holds; "
                              "their scorecard has the whole message.")
CLASS_REPORT_IMPORT = "{file} does not import ({reason}): {count} task(s) lost, {tasks}"
# What failed, by rung (graders.results.mistakes.RUNGS), as the class report says it.
CLASS_RUNGS = {
    "values": "wrong values", "types": "wrong types or shapes", "errors": "errors raised or missed",
    "cost": "too slow for the cost rung", "crash": "the student process died", "time": "out of time while computing",
    "waited": "timed out without computing (it waited: a sleep, a blocking read)", "in place": "changed in place",
    "batches": "wrong batches", "modes": "wrong train or eval modes", "device": "a tensor on the wrong device",
    "memory": "a graph kept in memory",
    "convergence": "no convergence", "checkpoint": "a checkpoint not kept", "not attempted": "not attempted",
    "grader error": "a grader error", "import": "a file that does not import", "other": "other failures",
}
CLASS_SIMILAR_TITLE = "Similar submissions"
CLASS_SIMILAR_INTRO = ("{compared} students' code compared (copydetect: names, strings and comments left out, the "
                       "given code and the stubs set aside); {flagged} pair(s) share at least {fraction:.0%} of one's "
                       "own code. A list to look at, never a grade: two students may share code honestly (a study "
                       "group, a snippet from the lesson).")
CLASS_SIMILAR_PAIR = "{first:.0%} and {second:.0%} of each one's own code is in the other's, in {files}."
CLASS_SIMILAR_SKIPPED = "Not compared: {error} (copydetect comes with autograd-lab: pip install copydetect)."
CLASS_SIMILAR_MORE = "The first {shown} pairs are shown side by side below; {count} more are in the table only."
CLASS_SIMILAR_LINES = "shared code on lines {first} to {last}"
CLASS_MISTAKE_HINT = "lost the task to a mistake whose hint says: {hint}"
CLASS_OP_RULE = "got {op}'s rule wrong in a way no known mistake matches"  # an op's form's hint without a sentence
