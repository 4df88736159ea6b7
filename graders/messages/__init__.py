"""Every sentence a student or instructor reads from the graders, in one package and one namespace.

A failure message is the whole report: the task and op, the inputs, theirs,
the expected value and where it came from, the tolerance, one hint line.
At most about a dozen lines, in the student's terms, never grader source.
Tests import these templates and pin the rendered text.

Hints, where an expected value came from, the tables of known mistakes and
what the commands print are all here, one module per subsystem;
tests/test_structure.py fails on a sentence printed, logged or passed as a
hint or a source anywhere else. What stays beside its code: the names a check
gives what it probes (a message's ``what`` and ``doing``, "x.grad after step
2"), the command line's --help (argparse's, with each option),
graders/entry.py's refusal (it runs before numpy, which ``checks`` imports)
and the worker's own errors (it imports nothing of graders).

Every template is read as ``msg.NAME`` (``from graders import messages as
msg``), whichever module below defines it: this namespace holds them all. A
name is a template's id (graders/results/mistakes.py names a mistake by its
hint's), so it is defined once in the whole package, and every module is
imported here; tests/test_structure.py holds both.

- ``checks``: what every task's message is made of, whatever the task, and the helpers that fill a template;
- ``op_tasks``: task 1.1 and the op tasks, one hint per op form of the op registry;
- ``optim_data``: tasks 3 and 4, the optimizers and the DataLoader;
- ``loop``: task 5, the training loop, the end-to-end rung and the checkpoint;
- ``torch_loop``: task 6, the loop in PyTorch on the judge's device or CUDA;
- ``submission``: a submission as files, refused before any grade;
- ``sandbox``: doctor, the isolation a grade gets, and the refusals of a grade that counts;
- ``cli``: the autograd-lab command;
- ``nbgrader``: the course builder, the judge's step, the kernel's jail, the visible checks;
- ``classgrade``: grade-all, merge, pictures, adjustments, the LMS export and the class report's headings;
- ``course``: the course file and its keys, the student bundle, Gradescope and Classroom 50;
- ``pytest_plugin``: grading under pytest;
- ``class_mistakes``: the class report's sentence for each named mistake.
"""

from .checks import *  # noqa: F403
from .class_mistakes import *  # noqa: F403
from .classgrade import *  # noqa: F403
from .cli import *  # noqa: F403
from .course import *  # noqa: F403
from .loop import *  # noqa: F403
from .nbgrader import *  # noqa: F403
from .op_tasks import *  # noqa: F403
from .optim_data import *  # noqa: F403
from .pytest_plugin import *  # noqa: F403
from .sandbox import *  # noqa: F403
from .submission import *  # noqa: F403
from .torch_loop import *  # noqa: F403
