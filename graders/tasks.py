"""The task table: every graded unit, its id, title, file and points (100 in all), and what its checks ask of
the workers. Everything else that depends on a task reads it from here: the markers of the public tests
(exercises/pytest.ini, held to this table by tests/test_structure.py), the modules a submission is graded on,
the worker processes a grade starts, the scorecard's rows and the nbgrader cells.

Task 6.2 (fit_torch on CUDA) carries no points: most graders have no GPU, and
a grade must not depend on the machine that computed it. It is still run and
reported wherever CUDA is present.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    """One graded task: its id, title, the student's module it grades, its points, the oracles its workers may call,
    and whether it runs the whole stack. The single place each of these is written."""
    id: str
    title: str
    module: str
    points: int
    # The oracles its checks' workers call: functions the judge answers in place of the student's own
    # (docs/design.md), so that a mistake in unbroadcast, or in train_epoch, costs its points once.
    asks_judge: tuple[str, ...] = ()
    # An end-to-end rung that runs every file of the submission together (the lesson's run for 5.4).
    whole_stack: bool = False

    @property
    def marker(self) -> str:
        """The task's pytest marker in the public tests (task1_4 for 1.4), held to exercises/pytest.ini by
        tests/test_structure.py."""
        return "task" + self.id.replace(".", "_")

    @property
    def worker_groups(self) -> tuple[tuple[str, ...], ...]:
        """The packages of each worker process its checks ask (graders.judge.worker_process.group_of): the
        hybrid of its module, with the judge's answers it asks for, and the whole stack where it has that rung."""
        first = (f"sub_{self.module}", *(f"judge_{what}" for what in self.asks_judge))
        return (first, ("sub_all",)) if self.whole_stack else (first,)


TASKS = (
    Task("1.1", "unbroadcast", "tensor", 4),
    Task("1.2", "backward of +, - and unary -", "tensor", 4, asks_judge=("unbroadcast",)),
    Task("1.3", "backward of * and /", "tensor", 4, asks_judge=("unbroadcast",)),
    Task("1.4", "backward of @", "tensor", 5),
    Task("1.5", "backward of **, exp and log", "tensor", 5),
    Task("1.6", "backward of relu, tanh and sigmoid", "tensor", 5),
    Task("1.7", "backward of sum, mean and square_mean", "tensor", 5),
    Task("1.8", "backward of reshape and .T", "tensor", 3),
    Task("2.1", "backward(): topological order and the chain rule", "tensor", 8),
    Task("2.2", "backward(): seeding, accumulation and errors", "tensor", 5),
    Task("2.3", "no_grad()", "tensor", 4),
    Task("2.4", "backward() on deep graphs", "tensor", 3),
    Task("3.1", "SGD: zero_grad and step", "optim", 4),
    Task("3.2", "SGD: momentum, weight decay and state dict", "optim", 4),
    Task("3.3", "Adam", "optim", 5),
    Task("4.1", "DataLoader: batching and coverage", "data", 4),
    Task("4.2", "DataLoader: shuffling", "data", 3),
    Task("5.1", "train_epoch", "train", 5),
    Task("5.2", "evaluate", "train", 3),
    Task("5.3", "gradient accumulation and clip_grad_norm", "train", 4),
    Task("5.4", "fit reaches the noise floor", "train", 5, asks_judge=("epochs",), whole_stack=True),
    Task("5.5", "fit: checkpoint and resume", "train", 4, asks_judge=("epochs",)),
    Task("6.1", "fit_torch on the CPU", "torch_loop", 4),
    Task("6.2", "fit_torch on CUDA", "torch_loop", 0),
)

BY_ID = {task.id: task for task in TASKS}
TOTAL_POINTS = sum(task.points for task in TASKS)
# The modules a submission is graded on, in the table's order.
GRADED_MODULES = tuple(dict.fromkeys(task.module for task in TASKS))
assert TOTAL_POINTS == 100, TOTAL_POINTS

# The whole grade's bound, in seconds (``grade --deadline``): the reference takes about 12 s, a slow but honest
# submission a minute or two; past it, the tasks not finished fail (graders.judge.grade).
GRADE_DEADLINE = 600.0
