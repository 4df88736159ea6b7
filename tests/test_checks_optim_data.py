"""Do the checks of tasks 3.1-3.3 (SGD, Adam) and 4.1-4.2 (the DataLoader) grade right?

The reference earns full marks, the stubs are "not attempted", correct code in
another style passes, and each known-wrong submission (solutions/ with one
mistake put in by a string replacement) loses exactly the tasks it must, with
a message that names the task and the mistake. The grader's numpy model of
the updates, which names classic mistakes in hints, agrees with torch.optim.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from graders import messages as msg
from graders.judge.checks import optim as optim_checks
from graders.judge.grade import grade
from graders.paths import EXERCISES, SOLUTIONS

OPTIM_TASKS = ("3.1", "3.2", "3.3")
DATA_TASKS = ("4.1", "4.2")
TASKS_OF = {"optim.py": OPTIM_TASKS, "data.py": DATA_TASKS}
MAX_LINES = 12


def submission(tmp_path: Path, name: str, patches: dict[str, list[tuple[str, str]]]) -> Path:
    """solutions/*.py copied to ``tmp_path/name``, with each (find, replace) applied to its file."""
    folder = tmp_path / name
    folder.mkdir()
    for source in SOLUTIONS.glob("*.py"):
        shutil.copyfile(source, folder / source.name)
    for file, replacements in patches.items():
        text = (folder / file).read_text()
        for find, replace in replacements:
            assert text.count(find) == 1, f"{name}: {find!r} occurs {text.count(find)} times in {file}"
            text = text.replace(find, replace)
        (folder / file).write_text(text)
    return folder


def statuses(report) -> dict[str, str]:
    return {result.task.id: result.status for result in report.results}


@dataclass(frozen=True)
class Wrong:
    name: str
    file: str
    patches: tuple[tuple[str, str], ...]
    loses: tuple[str, ...]
    says: str  # a phrase every lost task's message must hold


ZERO_GRAD = ("            p.grad = None\n", "            p.grad = np.zeros_like(p.data)\n")
SGD_UPDATE = "            p.data -= self.lr * d\n"
SKIP_NONE = "            if p.grad is None:\n                continue\n            d = p.grad + self.weight_decay"
SGD_BUFFER = "                self.state[key] = d.copy() if buf is None else self.momentum * buf + d\n"
ADAM_UPDATE = ("            denom = np.sqrt(v) / np.sqrt(1 - b2**t) + self.eps\n"
               "            p.data -= (self.lr / (1 - b1**t)) * m / denom\n")
LENGTH = "return n // b if self.drop_last else -(-n // b)"
ORDER = "order = self.rng.permutation(n) if self.shuffle else np.arange(n)"
BATCH = "yield Tensor(self.X[idx]), Tensor(self.Y[idx])"

# One for each task, each losing that task alone: run on every test run.
WRONG = (
    Wrong("zero_grad sets zeros", "optim.py", (ZERO_GRAD,), ("3.1",), "p0.grad is an array of zeros, expected None"),
    Wrong("momentum buffer aliases the first grad", "optim.py",
          ((SGD_BUFFER, SGD_BUFFER.replace("d.copy()", "d")),), ("3.2",), "buf = d.copy()"),
    Wrong("Adam without bias correction", "optim.py",
          ((ADAM_UPDATE, "            p.data -= self.lr * m / (np.sqrt(v) + self.eps)\n"),), ("3.3",),
          "bias correction"),
    Wrong("len ignores drop_last", "data.py", ((LENGTH, "return -(-n // b)"),), ("4.1",),
          "with drop_last=True the last, smaller batch is left out"),
    Wrong("shuffles with numpy's global generator", "data.py",
          ((ORDER, ORDER.replace("self.rng.permutation", "np.random.permutation")),), ("4.2",),
          "self.rng.permutation(n)"),
)

# More mistakes, slower to run all together.
MORE_WRONG = (
    Wrong("step rebinds p.data", "optim.py", ((SGD_UPDATE, "            p.data = p.data - self.lr * d\n"),),
          ("3.1", "3.2"), "p0.data is a new array"),
    Wrong("step forgets to skip grad None", "optim.py", ((SKIP_NONE, "            d = p.grad + self.weight_decay"),),
          ("3.1", "3.2"), "if p.grad is None: continue"),
    Wrong("step climbs the gradient", "optim.py", ((SGD_UPDATE, "            p.data += self.lr * d\n"),),
          ("3.1", "3.2"), "wrong p0 after step 1"),
    Wrong("momentum averaged", "optim.py",
          ((SGD_BUFFER, SGD_BUFFER.replace("+ d\n", "+ (1 - self.momentum) * d\n")),), ("3.2",), "(1 - momentum)"),
    Wrong("weight decay after momentum", "optim.py",
          (("            d = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n",
            "            d = p.grad\n"),
           (SGD_UPDATE, "            p.data -= self.lr * (d + self.weight_decay * p.data)\n")),
          ("3.2",), "it goes into d first"),
    Wrong("momentum buffers kept outside the state dict", "optim.py",
          (("                buf = self.state.get(key)\n",
            "                buf = vars(self).setdefault('bufs', {}).get(key)\n"),
           (SGD_BUFFER + "                d = self.state[key]\n",
            "                self.bufs[key] = d.copy() if buf is None else self.momentum * buf + d\n"
            "                d = self.bufs[key]\n")),
          ("3.2",), "stepped like a new one"),
    Wrong("state dict holds None", "optim.py",
          (("        return {key: np.copy(value)", "        return {'lr': None} | {key: np.copy(value)"),),
          ("3.2", "3.3"), "entries that are neither arrays nor numbers: 'lr' (NoneType)"),
    Wrong("Adam eps inside the square root", "optim.py",
          ((ADAM_UPDATE, "            denom = np.sqrt(v / (1 - b2**t) + self.eps)\n"
                         "            p.data -= (self.lr / (1 - b1**t)) * m / denom\n"),),
          ("3.3",), "inside the square root"),
    Wrong("Adam counts steps for the optimizer", "optim.py",
          (("        b1, b2 = self.betas\n",
            "        b1, b2 = self.betas\n        self.state['calls'] = self.state.get('calls', 0) + 1\n"),
           ('            t = self.state.get(f"step.{i}", 0) + 1\n', "            t = self.state['calls']\n")),
          ("3.3",), "t is per parameter"),
    Wrong("AdamW's decoupled decay", "optim.py",
          (("            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n",
            "            g = p.grad\n            p.data -= self.lr * self.weight_decay * p.data\n"),),
          ("3.3",), "AdamW"),
    Wrong("Adam rebinds p.data", "optim.py",
          ((ADAM_UPDATE, ADAM_UPDATE.replace("p.data -= ", "p.data = p.data - ")),), ("3.3",), "in place"),
    Wrong("len rounds down", "data.py", ((LENGTH, "return n // b"),), ("4.1",),
          "the last, smaller batch comes too (here of size 2)"),
    Wrong("batches require grad", "data.py", ((BATCH, BATCH.replace("X[idx])", "X[idx], requires_grad=True)")),),
          ("4.1",), "xb.requires_grad of batch 1 is True, expected False"),
    Wrong("never shuffles", "data.py", ((ORDER, "order = np.arange(n)"),), ("4.2",), "came in the data's order"),
    Wrong("one permutation for every epoch", "data.py",
          (("        self.rng = np.random.default_rng() if rng is None else rng\n",
            "        self.rng = np.random.default_rng() if rng is None else rng\n"
            "        self.fixed = self.rng.permutation(len(self.X))\n"),
           (ORDER, "order = self.fixed if self.shuffle else np.arange(n)")),
          ("4.2",), "draw a fresh permutation at every iter()"),
    Wrong("a generator of its own", "data.py",
          (("        self.rng = np.random.default_rng() if rng is None else rng\n",
            "        self.rng = np.random.default_rng(0)\n"),), ("4.2",), "yielded the same order"),
    Wrong("Y shuffled apart from X", "data.py", ((BATCH, BATCH.replace("Y[idx]", "Y[np.sort(idx)]")),), ("4.2",),
          "X and Y no longer line up"),
    Wrong("batches cast to float32", "data.py",
          ((BATCH, "yield Tensor(self.X[idx].astype(np.float32)), Tensor(self.Y[idx].astype(np.float32))"),),
          ("4.1", "4.2"), "holds the data rounded to float32"),
    Wrong("shuffles the caller's arrays in place", "data.py",
          ((ORDER, "order = np.arange(n)\n        if self.shuffle:\n            p = self.rng.permutation(n)\n"
                   "            self.X[:], self.Y[:] = self.X[p], self.Y[p]"),),
          ("4.2",), "reordered or rewrote its caller's arrays in place"),
)


def assert_loses_exactly(tmp_path: Path, wrong: Wrong) -> None:
    tasks = TASKS_OF[wrong.file]
    report = grade(submission(tmp_path, wrong.name.replace(" ", "_"), {wrong.file: list(wrong.patches)}),
                   task_ids=tasks)
    got = statuses(report)
    assert {task for task, status in got.items() if status != "passed"} == set(wrong.loses), \
        "\n\n".join(r.message for r in report.results)
    for result in report.results:
        if result.task.id in wrong.loses:
            assert result.status == "failed" and result.score == 0, result.message
            assert result.message.startswith(f"Task {result.task.id} ("), result.message
            assert wrong.says in result.message, result.message
            assert len(result.message.splitlines()) <= MAX_LINES, result.message


@pytest.mark.parametrize("wrong", WRONG, ids=lambda w: w.name)
def test_a_known_wrong_submission_loses_exactly_its_own_task(tmp_path, wrong):
    """Does this mistake cost its task, with a message naming the task and the mistake, and nothing else in its file?"""
    assert_loses_exactly(tmp_path, wrong)


@pytest.mark.slow
@pytest.mark.parametrize("wrong", MORE_WRONG, ids=lambda w: w.name)
def test_more_known_wrong_submissions_lose_exactly_their_tasks(tmp_path, wrong):
    """Does each further classic mistake cost exactly the tasks it touches, with a message that names it?"""
    assert_loses_exactly(tmp_path, wrong)


REWRITES_ANSWERS = """
import sys as _sys

_worker = _sys.modules.get("worker.main")
if _worker is not None:  # imported by the grader's worker: answer every later request with nothing
    _worker.VERBS["{verb}"] = lambda **request: {answer}
"""


def test_a_submission_that_rewrites_the_workers_answers_gains_nothing(tmp_path):
    """Does code that swaps the worker's handlers for ones answering with nothing lose its tasks, not pass them?"""
    folder = submission(tmp_path, "rewrites_answers", {})
    for file, verb, answer in (("optim.py", "optimizer_run", '{"steps": [], "in_place": []}'),
                               ("data.py", "loader_epochs", '{"loaders": [], "length": None}')):
        with open(folder / file, "a") as f:
            f.write(REWRITES_ANSWERS.replace("{verb}", verb).replace("{answer}", answer))
    report = grade(folder, task_ids=OPTIM_TASKS + DATA_TASKS)
    assert report.score == 0, "\n\n".join(r.message for r in report.results)
    assert all("came back incomplete" in r.message for r in report.results), [r.message for r in report.results]


def test_the_reference_earns_full_marks_on_tasks_3_and_4():
    """Does solutions/ pass 3.1-3.3 and 4.1-4.2, with Hypothesis examples drawn for each?"""
    report = grade(SOLUTIONS, task_ids=OPTIM_TASKS + DATA_TASKS)
    assert statuses(report) == dict.fromkeys(OPTIM_TASKS + DATA_TASKS, "passed"), \
        "\n".join(r.message for r in report.results)
    assert report.score == report.max_score == 20
    assert all(result.examples > 0 for result in report.results)


def test_the_stubs_are_not_attempted():
    """Does exercises/ get "not attempted" and no points on each of 3.1-3.3 and 4.1-4.2?"""
    report = grade(EXERCISES, task_ids=OPTIM_TASKS + DATA_TASKS)
    assert statuses(report) == dict.fromkeys(OPTIM_TASKS + DATA_TASKS, "not attempted")
    assert report.score == 0
    for result in report.results:
        assert result.message.startswith(f"Task {result.task.id} not attempted yet"), result.message


def test_plain_sgd_without_momentum_or_decay_leaves_3_2_not_attempted(tmp_path):
    """Task 3.1 done, 3.2 not begun (step ignores momentum and weight_decay): is 3.2 "not attempted", saying
    what is ignored and no formula, while 3.1 passes? And with momentum written but weight decay not, "failed"?"""
    no_decay = ("            d = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n",
                "            d = p.grad\n")
    plain = submission(tmp_path, "plain", {"optim.py": [no_decay, ("            if self.momentum:\n",
                                                                  "            if False:\n")]})
    report = grade(plain, task_ids=("3.1", "3.2"))
    assert statuses(report) == {"3.1": "passed", "3.2": "not attempted"}, "\n".join(r.message for r in report.results)
    message = report.results[1].message
    assert message.startswith("Task 3.2 not attempted yet") and "ignores momentum and weight_decay" in message
    assert "buf =" not in message, "no formula in the message"
    half = submission(tmp_path, "half", {"optim.py": [no_decay]})
    assert statuses(grade(half, task_ids=("3.2",))) == {"3.2": "failed"}


def test_correct_code_in_another_style_passes(tmp_path):
    """Textbook Adam, an in-place momentum buffer, rng.shuffle and batches as lists: do they all pass?"""
    folder = submission(tmp_path, "other_style", {
        "optim.py": [
            (ADAM_UPDATE, "            m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)\n"
                          "            p.data -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)\n"),
            (SGD_BUFFER, "                if buf is None:\n"
                         "                    self.state[key] = np.array(d)  # an array even for a 0-d p\n"
                         "                else:\n"
                         "                    buf *= self.momentum\n"
                         "                    buf += d\n"),
            (SGD_UPDATE, "            p.data[...] = p.data - self.lr * d\n"),
        ],
        "data.py": [
            (ORDER, "order = np.arange(n)\n        if self.shuffle:\n            self.rng.shuffle(order)"),
            (BATCH, "yield [Tensor(self.X[idx]), Tensor(self.Y[idx])]"),
        ],
    })
    report = grade(folder, task_ids=OPTIM_TASKS + DATA_TASKS)
    assert report.score == report.max_score, "\n\n".join(r.message for r in report.results)


# ----- the grader's own model of the updates -----
RUNS = [
    optim_checks.runs("SGD", optim_checks.SGD_FULL, max_steps=4, resume=True),
    optim_checks.runs("Adam", optim_checks.ADAM, max_steps=4, resume=True),
]


@pytest.mark.parametrize("strategy", RUNS, ids=["SGD", "Adam"])
def test_the_numpy_model_of_each_update_agrees_with_torch_optim(strategy):
    """Without a mistake, does the model that names mistakes step exactly as torch.optim does?"""
    @settings(max_examples=60, derandomize=True, database=None, deadline=None)
    @given(strategy)
    def agrees(run):
        for ours, theirs in zip(optim_checks.model_steps(run), optim_checks.torch_steps(run), strict=True):
            for a, b in zip(ours, theirs, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)

    agrees()


HYPERS_APART = {
    "SGD": ({"lr": 0.1, "momentum": 0.9}, {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1}),
    "Adam": ({"lr": 0.1, "betas": (0.5, 0.9), "eps": 1e-3, "weight_decay": 0.1},),
}


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_each_modelled_mistake_changes_some_run(kind):
    """Does every modelled mistake change the trajectory of a run like the fixed ones, so its hint can be given?"""
    runs = [optim_checks.Run(kind, hyper, optim_checks.START,
                             optim_checks.gradients(4, seed=1, none={(1, 1), (2, 0)}), save_after=3)
            for hyper in HYPERS_APART[kind]]
    for mistake in optim_checks.MISTAKES[kind]:
        assert mistake in msg.HINT_OPTIM_MISTAKES
        assert any(not np.allclose(a, b) for run in runs
                   for rows in zip(optim_checks.model_steps(run), optim_checks.model_steps(run, mistake))
                   for a, b in zip(*rows)), mistake
