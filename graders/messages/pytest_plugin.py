"""Grading under pytest (graders/integrations/pytest_plugin.py): what the plugin adds to pytest's output. A task's
own text is the judge's message, as the scorecard shows it.
"""

PYTEST_HEADER = ("autograd-lab: grading {submission} · examples: {examples} · isolation: {isolation} · "
                 "no conftest.py loaded")
PYTEST_TOTAL = "autograd-lab: {score:g}/{max_score:g} points ({tasks} task{s})"
PYTEST_NOT_GRADED = "autograd-lab: {error}"
PYTEST_INSIDE_SUBMISSION = ("--autograd-lab-submission {submission}: the {what} {path} lies inside the submission, "
                            "whose files must never configure pytest: run pytest from a folder of yours, naming no "
                            "path inside the submission")
