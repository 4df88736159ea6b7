"""autograd-lab doctor (graders/judge/doctor.py), the isolation a grade gets (graders/isolation/sandbox.py) and
the scorecard's line for it: why bubblewrap cannot be had and the fix, a grade that counts refusing, a practice
grade's fallback, what a worker can and cannot do, how workers start and the budgets over a grade.
"""

# Why bubblewrap cannot be had (graders.isolation.sandbox.bubblewrap_problem), and the fix (bubblewrap_fix).
ISOLATION_BWRAP_MISSING = "bubblewrap is not installed"
ISOLATION_BWRAP_FAILED = "bubblewrap cannot make a sandbox here ({error})"
ISOLATION_FIX_INSTALL = "install it (Debian and Ubuntu: apt-get install bubblewrap)"
ISOLATION_FIX_APPARMOR = ("this machine's AppArmor lets no unprivileged user make the user namespace bubblewrap needs "
                          "(Ubuntu 24.04: {setting} is 1): once per machine, as root, run `sysctl -w "
                          "kernel.apparmor_restrict_unprivileged_userns=0`, or run the judge as root")
ISOLATION_FIX_CONTAINER = ("the judge runs as root without CAP_SYS_ADMIN (a container): run the container privileged "
                           "(Kubernetes: securityContext privileged: true; docker run --privileged), which lets "
                           "bubblewrap make its namespaces and mount its /proc")
ISOLATION_FIX_OTHER = ("`autograd-lab doctor` says what this machine gives, and docs/security.md (setting up the "
                       "sandbox) the one-time set-up")
# A grade that counts refuses (graders.isolation.sandbox.choose): what is missing, and the fix.
ISOLATION_NO_BUBBLEWRAP = "refusing to grade: --isolation bubblewrap was asked for, but {why}. To fix it: {fix}"
ISOLATION_AUTO_REFUSED = ("refusing to grade: a grade that counts runs in bubblewrap, and {why}. To fix it: "
                          "{fix}{limits}")
ISOLATION_OR_LIMITS = (". Or, to grade with process limits alone (each worker an unprivileged uid in a root of its "
                       "own), pass --isolation limits")
ISOLATION_NO_LIMITS = "refusing to grade with --isolation limits: {why}"
ISOLATION_LIMITS_NOT_ROOT = ("the judge is not root, so every worker would run as the judge's own uid and could read "
                             "and write whatever the judge can (other students' files, the results). Run the judge as "
                             "root, or grade with bubblewrap")
ISOLATION_LIMITS_NO_NAMESPACE = ("the judge may make no mount namespace here (root without CAP_SYS_ADMIN: a "
                                 "container?), so a worker would see every file any user can read. Give the judge "
                                 "CAP_SYS_ADMIN, or grade with bubblewrap")
# A student's own `autograd-lab grade` where bubblewrap cannot be had (graders.isolation.sandbox.fallback_note).
ISOLATION_PRACTICE_FALLBACK = ("autograd-lab: {why}, so this grade runs with {isolation}: fine for practice, never "
                               "for a grade that counts (grade-all, Gradescope, nbgrader and the workflows refuse "
                               "here). To fix it: {fix}")
ISOLATION_NO_SCRATCH = ("no folder to grade in that a worker's uid can reach: {folder} lies under a private folder, "
                        "and /tmp, /var/tmp and /dev/shm are not usable")
DOCTOR_INTERPRETER = "interpreter:  {path}"
DOCTOR_UID = "running as:   uid {uid}{root}"
DOCTOR_UID_ROOT = " (root: each worker runs as an unprivileged uid of its own)"
DOCTOR_BUBBLEWRAP = "bubblewrap:   {found}{broken}"
DOCTOR_BUBBLEWRAP_AT = "{version} at {path}"
DOCTOR_BUBBLEWRAP_MISSING = "not installed"
DOCTOR_BUBBLEWRAP_BROKEN = " (installed, but cannot make a sandbox here)"
DOCTOR_ISOLATION = "isolation:    {isolation}"
DOCTOR_WORKERS = "workers:      {workers}"
# What a grade that counts does here (graders.judge.doctor): grade-all, Gradescope, nbgrader and the workflows.
DOCTOR_COUNTED = "counted:      {text}"
DOCTOR_COUNTED_BUBBLEWRAP = ("grade-all, merge, Gradescope, nbgrader, the pytest plugin and the workflows grade in "
                             "bubblewrap")
DOCTOR_COUNTED_REFUSED = ("grade-all, Gradescope, nbgrader, the pytest plugin and the workflows refuse here: {why}. "
                          "To fix it: {fix}. With --isolation limits: {limits}")
DOCTOR_COUNTED_LIMITS_OK = "they grade with process limits, each worker an unprivileged uid in a root of its own"
DOCTOR_BUDGETS = "budgets:      {budgets}"
DOCTOR_KERNEL = "nbgrader:     the notebook's kernel runs {kernel}"
DOCTOR_CUDA = "CUDA:         {device}"
DOCTOR_NO_CUDA = "none (task 6.2 is skipped)"
DOCTOR_WORKER = "the worker:   {text}"
DOCTOR_FALLBACK = "--isolation limits: {isolation}"
DOCTOR_FALLBACK_WORKER = "  the worker:   {text}"
DOCTOR_HINT_BUBBLEWRAP = ("hint: install bubblewrap (apt-get install bubblewrap) for no network, a private pid "
                          "namespace and a filesystem that shows the worker only the submission and the interpreter")
# What student code can and cannot do on this machine (doctor's "the worker:" line), by the isolation it gets.
DOCTOR_WORKER_CAN = {
    "bubblewrap": ("sees only the system's libraries, the standard library and numpy (torch only where the loop's "
                   "stand-ins or task 6 compute with it), read-only, and the package it is graded on: no other "
                   "installed package, virtual environment or checkout; no network; cannot see or signal the judge; "
                   "its /tmp and working folder are private and size-capped"),
    "reads_all": ("can READ every file on this machine, other students' submissions and any checkout's solutions/ "
                  "included (the uid keeps CAP_DAC_READ_SEARCH: {interpreter} is not reachable by other uids, "
                  "and this machine allows no mount namespace to hide anything), but write only its working folder "
                  "and /tmp (swept after it); cannot signal the judge or read its memory"),
    "namespace": ("sees, in a root of its own (a mount namespace), only the system's libraries, the standard "
                  "library and numpy (torch only where the loop's stand-ins or task 6 compute with it), read-only, "
                  "and the package it is graded on: no other installed package, grade, submission or checkout; no "
                  "network; writes only its working folder and a private /tmp; cannot signal the judge; its command "
                  "line names no folder"),
    "uid": ("can read what any user can read (other students' submissions too, where their folders let "
            "anyone read, and torch, kept from the numpy tasks by an import refusal alone: this machine allows "
            "no mount namespace), write only its working folder and /tmp (swept after it); cannot signal the "
            "judge"),
    "judge_uid": ("runs as the judge's own uid: it can read and write whatever the judge can (other students' "
                  "submissions, any checkout's solutions/ and the results directory included); use bubblewrap, or "
                  "run the judge as root to drop the worker"),
}
# The isolation, one line for the scorecard and doctor (graders.isolation.sandbox.Isolation.describe): its parts.
ISOLATION_PARTS = {
    "limits": "process limits",
    "bubblewrap": "bubblewrap (no network, private pid namespace, read-only interpreter)",
    "reads_all": "an unprivileged uid that can read every file (no bubblewrap, no mount namespace: nothing is hidden)",
    "namespace": "an unprivileged uid in a root of its own that holds only the interpreter, numpy and its package",
    "uid": "an unprivileged uid",
    "root": "running as root (the process-count limit does not bind)",
    "judge_uid": "the judge's own uid (no bubblewrap: it can read and write what the judge can, other students' files "
                 "included)",
}
# How workers start (graders.isolation.fork_servers.describe) and the budgets over a grade
# (graders.isolation.budget.describe).
WORKERS_COLD_SWITCH = "each a fresh interpreter ({switch}=off)"
WORKERS_COLD = "each a fresh interpreter (workers are forked only where the judge runs as root with bubblewrap)"
WORKERS_FORKED = ("forked into bubblewrap's sandbox from two fork servers a judge keeps (numpy; torch and the loop's "
                  "stand-ins): no interpreter start and no torch import per worker")
BUDGETS_NONE = ("none over the whole tree (not root, or no cgroup with the memory and pids controllers to make): "
                "only each process's own limits bind")
BUDGETS_CGROUP = ("cgroup {kind}: {gib} GiB and {processes} processes for all of a grade's workers together, one "
                  "share of the CPU whatever their number, and at most {cores} cores at once")
