"""The autograd-lab command (graders/cli.py, graders/cli_class.py, graders/cli_options.py): a command that failed,
an option whose value cannot work, and build-exercises.
"""

CLI_FAILED = "autograd-lab {command}: {error}"
EXERCISES_OUT_OF_SYNC = "exercises out of sync with solutions/: {files}; run `autograd-lab build-exercises`"
TABLES_OUT_OF_SYNC = ("out of date with graders/tasks.py and graders/ops.py: {files}; run "
                      "`autograd-lab build-exercises`")
EXERCISES_IN_SYNC = "{out}: in sync with solutions/"
EXERCISES_WRITTEN = "{out}: wrote {count} file(s){files}"
EXERCISES_WRITTEN_FILES = ": {files}"
BUILD_WOULD_OVERWRITE = ("{out}: not written: {files} hold filled-in tasks (a task's stub is gone), and "
                         "regenerating would replace that work with stubs. Keep your work elsewhere (the student "
                         "bundle of `autograd-lab release`), or pass --force to replace it.")
# A command-line option whose value cannot work: "{prog}: got {option} {value!r}, expected {expected}".
CLI_BAD_VALUE = "{prog}: got {option} {value!r}, expected {expected}\n"
CLI_EXPECTED_TASKS = "task ids of the task table, comma-separated: {known}"
CLI_EXPECTED_ONE_OF = "{choices} or {last}"
