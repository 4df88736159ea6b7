"""nbgrader (graders/integrations/nbgrader_*.py, graders/course/nbgrader_lesson.py): the course builder, the
judge's step, the class's report, the notebook's kernel and its jail, and the visible checks the notebook's cells
print.
"""

COURSE_WRITTEN = ("{course}: wrote nbgrader_config.py and source/{assignment}/ ({assignment}.ipynb, {modules})\n"
                  "next: cd {course} && nbgrader generate_assignment {assignment}")
COURSE_CONFIG_CHANGED = ("{path} differs from the configuration this command writes (edited by hand?); "
                         "left as it is: pass --force to replace it")
NBGRADER_COURSE_MADE = ("{path}: the course's tasks, points and secret (readable by you only), made with a fresh "
                        "secret; edit it, then run this command again to rebuild the notebook (or pass --course FILE)")
NOTEBOOK_NO_COURSE = ("nbgrader_config.py names no course file (c.JudgeGrades.course), so no student's key can be "
                      "derived: run `autograd-lab nbgrader COURSE_DIR --force` to write the configuration again")
NOTEBOOK_POINTS_DIFFER = ("cell {cell} is worth {cell_points:g} points in the notebook and task {task} {points:g} in "
                          "the course file {course}: scored as the same share of the cell's {cell_points:g} (edit the "
                          "course file, or the cell, so that the two agree)")
COURSE_BAD_ASSIGNMENT = "got assignment={assignment!r}, expected a name of letters, digits, '_', '-' or '.'"
NOTEBOOK_NOT_GRADED = ("The grader could not grade the files in {folder}: {why}\n"
                       "Every task scores 0 here; please tell your instructor.")
NOTEBOOK_JUDGE_SILENT = "the judge said nothing in {seconds:g} s of CPU time, so it was stopped"
NOTEBOOK_JUDGE_IDLE = "the judge said nothing and waited {seconds:g} s without using the CPU, so it was stopped"
NOTEBOOK_JUDGE_NO_START = "the judge's process could not be started ({why})"
NOTEBOOK_NO_JUDGE = ("The grader's step (JudgeGrades in Autograde.autograde_preprocessors) did not run, so no score "
                     "can be trusted: 0 points. Rewrite nbgrader_config.py with `autograd-lab nbgrader`.")
NB_REPORT_NOT_SUBMITTED = "did not submit (in the course's gradebook, with no submitted folder)"
NB_REPORT_NOT_AUTOGRADED = "submitted, but not autograded yet (nbgrader autograde ASSIGNMENT --student ...)"
NB_REPORT_NO_RESULT = ("autograded without autograd-lab's scorecard ({file} missing or unreadable): was it "
                       "autograded with the nbgrader_config.py that autograd-lab nbgrader wrote?")
NB_REPORT_NO_COURSE = "{course}: no autograded/ or submitted/ folder in it; expected an nbgrader course directory"
NB_REPORT_DONE = ("nbgrader-report: {graded} of {students} student(s) graded; wrote {out}/class.md, class.html and "
                  "grades.csv")
NOTEBOOK_GRADING = "autograd-lab: grading the .py files in {folder} with the judge"
NOTEBOOK_JUDGED = "autograd-lab's graders, on the .py files of this submission:\n{text}\n"
# nbgrader's kernel (graders/integrations/kernel_jail.py): the jail's refusal, said on nbgrader's log and in each
# cell the notebook's kernel is sent, and doctor's line.
KERNEL_SETUP = ("run `nbgrader autograde` as root (a root shell, in this environment), where the kernel runs as "
                "the user nobody in a jail; then give the course's files back to you "
                "(`chown -R YOU: COURSE_FOLDER`)")
KERNEL_REFUSED = ("autograd-lab: the notebook's code is not run: {why}. The scores are the judge's, from the .py "
                  "files, and stand. To run the notebooks too, {setup}.")
KERNEL_WHY = {
    "not-root": ("nbgrader runs as uid {uid}, not root, and a kernel run as your own user could read everything you "
                 "can (your home, ~/.ssh, the grader's examples cache), whatever sandbox it were in", KERNEL_SETUP),
    "no-bubblewrap": ("bubblewrap is missing or cannot make a sandbox here, and without it the kernel would see "
                      "every file any user of this machine can read",
                      "install bubblewrap (apt-get install bubblewrap), where the kernel sees only the interpreter "
                      "and a copy of its notebook's folder"),
}
KERNEL_REFUSED_CELL = ("Not run: the grading machine runs no notebook code as its instructor's user (uid {uid}) or "
                       "outside a jail. The graded cells' scores come from your .py files.\n")
KERNEL_NOT_IPC = ("autograd-lab: the kernel's connection file asks for transport {transport!r}: its jail has no "
                  "network, so it talks to nbgrader only over ipc sockets (set "
                  "Execute.kernel_manager_class to graders.integrations.nbgrader_judge.JailedKernelManager)")
KERNEL_BAD_IPC = "autograd-lab: the kernel's socket folder {folder} is refused: {why}"
KERNEL_DESCRIBED = {
    "bubblewrap": ("in bubblewrap, as nobody, with no network (ipc sockets to nbgrader): it sees the interpreter "
                   "(read-only), its sockets, a private /tmp and a private copy of its notebook's folder, and "
                   "nothing else: no home, no cache, no course, no checkout"),
    "refused": "nowhere: {why}; each cell says it did not run, and the scores, from the judge, stand. To run the "
               "notebooks too, {setup}",
}
NOTEBOOK_NO_SUCH_TASK = "Task {task}: the grader knows no such task; please tell your instructor."
# The visible checks print these; the notebook's setup cell holds them (students' kernels have no graders).
VISIBLE_CHECK = {
    "passed": "Task {task}, visible check: passed (the grader checks much more than this).",
    "stub": "Task {task}, visible check: not attempted yet: {error} still raises NotImplementedError.",
    "failed": "Task {task}, visible check: failed: {error}",
    "raised": "Task {task}, visible check: your code raised {kind}: {error}",
    "slow": "Task {task}, visible check: no result within {seconds} s (an infinite loop?).",
    "skipped": "Task {task}, visible check: skipped: {error}",
}
