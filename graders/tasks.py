"""The task table: every graded unit, its id, title, file, points and check, and its route: the worker package its
check runs the student's code in, the verbs it sends there and the judge's answers that worker may ask for.

A task is one row here, and its id is written by hand nowhere else: everything that depends on a task reads it from
here. The checks (graders/judge/checks: ``Task.check``), the modules a submission is graded on, the worker processes
a grade starts, where each request goes and what each process may import or ask (graders.submission.layout,
graders.judge.routing, graders.isolation.worker_process), the scorecard's rows and the nbgrader cells read this
table; the public tests' markers (exercises/pytest.ini) and the contract's table of tasks are generated from it
(graders/course/tables.py). The op tasks' ops are the op registry's (graders/ops.py). A task's stub, public tests,
check, verbs and messages are listed by id in docs/development.md, held to this table by tests/test_structure.py.

Task 6.2 (fit_torch on CUDA) carries no points: most graders have no GPU, and
a grade must not depend on the machine that computed it. It is still run and
reported wherever CUDA is present.
"""

from __future__ import annotations

from dataclasses import dataclass

# ----- the workers' packages (graders.submission.layout lays them out; no other module spells their names) -----

# The hybrid package of every student module on its own (see package_of), and the whole stack's, every student module
# together, for 5.4's end-to-end run.
WHOLE_STACK = "sub_all"
# The student modules that may import torch (docs/contract.md): the worker of every other package refuses it.
TORCH_MODULES = ("torch_loop",)


def package_of(module: str) -> str:
    """The worker package (a hybrid of graders.submission.layout) that grades the student's ``module``: that file beside
    the given code for the rest."""
    return f"sub_{module}"


@dataclass(frozen=True)
class Oracle:
    """Answers a worker may ask the judge for mid-request instead of running the student's code for them
    (graders.judge.oracles), so a mistake there costs its own task's points once: only a process that sees the marker
    ``package`` may ask, and only for ``answers``. ``flag`` is the request's argument that asks for it, for a verb
    that some routes send with the oracle and others without (the worker reads it too)."""
    package: str
    answers: tuple[str, ...]
    flag: str = ""


UNBROADCAST = Oracle("judge_unbroadcast", ("unbroadcast",), flag="isolate_unbroadcast")
EPOCHS = Oracle("judge_epochs", ("train_epoch", "evaluate"))
ORACLES = (UNBROADCAST, EPOCHS)


@dataclass(frozen=True)
class Route:
    """One worker process a task's check asks: the package it imports, the verbs the check sends it (the worker's
    table, graders/worker/main.py) and the judge's answers it may ask for while it runs one."""
    package: str
    verbs: tuple[str, ...]
    oracle: Oracle | None = None

    @property
    def group(self) -> tuple[str, ...]:
        """The packages the process sees (graders.judge.routing.group_of): the hybrid and the oracle's marker."""
        return (self.package, self.oracle.package) if self.oracle else (self.package,)

    def asks(self, answer: str) -> bool:
        """Whether the process may ask the judge for ``answer`` (unbroadcast, train_epoch, evaluate)."""
        return self.oracle is not None and answer in self.oracle.answers


# ----- the tasks -----


@dataclass(frozen=True)
class Task:
    """One graded task: its id, title, the student's module it grades, its points, the check that grades it (a
    function of graders/judge/checks, as ``module.function``), and its route: the worker verbs its check sends, the
    oracle their worker may call, and the verbs of an end-to-end rung that runs the whole stack. The single place
    each of these is written."""
    id: str
    title: str
    module: str
    points: int
    check: str
    verbs: tuple[str, ...]
    # The oracle its check's worker may call: functions the judge answers in place of the student's own
    # (docs/design.md), so that a mistake in unbroadcast, or in train_epoch, costs its points once.
    oracle: Oracle | None = None
    # The verbs of an end-to-end rung that runs every file of the submission together (the lesson's run for 5.4).
    whole_stack: tuple[str, ...] = ()
    # The ops of the op registry (graders/ops.py) whose backward rules an op task grades, by name: the one place an op
    # is given its task (graders.ops.of_task, task_of).
    ops: tuple[str, ...] = ()

    @property
    def marker(self) -> str:
        """The task's pytest marker in the public tests (task1_4 for 1.4), held to exercises/pytest.ini by
        tests/test_structure.py."""
        return "task" + self.id.replace(".", "_")

    @property
    def route(self) -> Route:
        """Where the check runs the student's code: the hybrid of the task's module, its verbs and oracle."""
        return Route(package_of(self.module), self.verbs, self.oracle)

    @property
    def routes(self) -> tuple[Route, ...]:
        """Every worker process the check asks: its route, and the whole stack's where it has that rung."""
        return (self.route, Route(WHOLE_STACK, self.whole_stack)) if self.whole_stack else (self.route,)

    def route_of(self, verb: str) -> Route:
        """The route that sends ``verb``; ValueError for a verb the task table does not give this task (a check that
        asks what its row does not say is a bug of the graders, never the student's)."""
        for route in self.routes:
            if verb in route.verbs:
                return route
        raise ValueError(f"task {self.id} sends no {verb!r} (graders.tasks.TASKS gives it {self.verbs})")

    @property
    def worker_groups(self) -> tuple[tuple[str, ...], ...]:
        """The packages of each worker process its checks ask (graders.judge.routing.group_of)."""
        return tuple(route.group for route in self.routes)


OP_VERBS = ("op_backward", "op_cost")  # the verbs of every op task: the rule on drawn inputs, and its cost


def op_task(id: str, title: str, points: int, ops: tuple[str, ...], oracle: Oracle | None = None) -> Task:
    """A task that grades the backward rules of ``ops`` (names of graders/ops.py's registry) in tensor.py: one check
    for every such task (graders/judge/checks/ops.py's ``rules``)."""
    return Task(id, title, "tensor", points, "ops.rules", OP_VERBS, oracle=oracle, ops=ops)


TASKS = (
    Task("1.1", "unbroadcast", "tensor", 4, "ops.unbroadcast", ("unbroadcast", "unbroadcast_cost")),
    op_task("1.2", "backward of +, - and unary -", 4, ("add", "sub", "neg"), oracle=UNBROADCAST),
    op_task("1.3", "backward of * and /", 4, ("mul", "div"), oracle=UNBROADCAST),
    op_task("1.4", "backward of @", 5, ("matmul",)),
    op_task("1.5", "backward of **, exp and log", 5, ("pow", "exp", "log")),
    op_task("1.6", "backward of relu, tanh and sigmoid", 5, ("relu", "tanh", "sigmoid")),
    op_task("1.7", "backward of sum, mean and square_mean", 5, ("sum", "mean", "square_mean")),
    op_task("1.8", "backward of reshape and .T", 3, ("reshape", "T")),
    Task("2.1", "backward(): topological order and the chain rule", "tensor", 8, "engine.topological_order",
         ("graph",)),
    Task("2.2", "backward(): seeding, accumulation and errors", "tensor", 5, "engine.seeding_accumulation_errors",
         ("engine_errors", "graph", "program")),
    Task("2.3", "no_grad()", "tensor", 4, "engine.no_grad", ("no_grad_probe", "program")),
    Task("2.4", "backward() on deep graphs", "tensor", 3, "engine.deep_graphs", ("graph",)),
    Task("3.1", "SGD: zero_grad and step", "optim", 4, "optim.sgd_step", ("optimizer_run",)),
    Task("3.2", "SGD: momentum, weight decay and state dict", "optim", 4, "optim.sgd_momentum_decay_state",
         ("optimizer_run",)),
    Task("3.3", "Adam", "optim", 5, "optim.adam", ("optimizer_run",)),
    Task("4.1", "DataLoader: batching and coverage", "data", 4, "data.batching", ("loader_epochs",)),
    Task("4.2", "DataLoader: shuffling", "data", 3, "data.shuffling", ("loader_epochs",)),
    Task("5.1", "train_epoch", "train", 5, "loop.train_epoch", ("train_epoch_watched",)),
    Task("5.2", "evaluate", "train", 3, "loop.evaluate", ("evaluate_watched", "evaluate_interrupted")),
    Task("5.3", "gradient accumulation and clip_grad_norm", "train", 4, "loop.accumulation_and_clipping",
         ("clip", "train_epoch_watched")),
    Task("5.4", "fit reaches the noise floor", "train", 5, "loop.fit", ("fit_history",), oracle=EPOCHS,
         whole_stack=("fit_end_to_end",)),
    Task("5.5", "fit: checkpoint and resume", "train", 4, "checkpoint.checkpoint",
         ("fit_cut", "fit_resumed", "save_dies", "fit_dies", "resume_from_pickle"), oracle=EPOCHS),
    Task("6.1", "fit_torch on the CPU", "torch_loop", 4, "torch_loop.fit_torch_cpu", ("fit_torch_watched",)),
    Task("6.2", "fit_torch on CUDA", "torch_loop", 0, "torch_loop.fit_torch_cuda", ("fit_torch_watched",)),
)

BY_ID = {task.id: task for task in TASKS}


def oracles_of_verbs(tasks: tuple[Task, ...] = TASKS) -> tuple[dict[str, Oracle], dict[str, Oracle]]:
    """What the routes of ``tasks`` say of each verb's oracle: (the oracle of every verb that each route sending it
    asks with, as 5.4 and 5.5 send fit_history; the oracle of every verb that some routes send with it and others
    without, as 1.2 and 1.4 send op_backward: asked for only where the request sets the oracle's flag). ValueError for
    a verb that could not be routed: sent with two oracles, or with and without one that has no flag."""
    sent: dict[str, set] = {}
    for task in tasks:
        for route in task.routes:
            for verb in route.verbs:
                sent.setdefault(verb, set()).add(route.oracle)
    always, by_flag = {}, {}
    for verb, oracles in sent.items():
        asked = [oracle for oracle in oracles if oracle is not None]
        if len(asked) > 1 or (asked and None in oracles and not asked[0].flag):
            raise ValueError(f"{verb!r} is sent with {sorted(o.package for o in asked)}"
                             f"{' and without' if None in oracles else ''}: the worker cannot tell which it runs with")
        if asked:
            (by_flag if None in oracles else always)[verb] = asked[0]
    return always, by_flag


def points_of(task_id: str) -> int:
    """The points task ``task_id`` is worth: whatever its row says (no total is imposed). The one place a task's
    points are read for a total or a maximum."""
    return BY_ID[task_id].points


TOTAL_POINTS = sum(points_of(task.id) for task in TASKS)
# The modules a submission is graded on, in the table's order.
GRADED_MODULES = tuple(dict.fromkeys(task.module for task in TASKS))

# The whole grade's bound, in seconds (``grade --deadline``): the reference takes about 12 s, a slow but honest
# submission a minute or two; past it, the tasks not finished fail (graders.judge.grade).
GRADE_DEADLINE = 600.0
