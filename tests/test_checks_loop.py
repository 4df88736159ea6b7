"""Do the loop checks (tasks 5.1-5.5, 6.1-6.2) pass the reference, stop at the stubs, and fail known-wrong loops?

Each known-wrong submission is solutions/ with one thing broken by a string
replacement; it must lose exactly its task among the tasks of its file, with
the message the student would read.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from graders import messages as msg
from graders import paths
from graders.judge.checks import loop, trajectory
from graders.judge.checks import torch_loop as torch_checks
from graders.judge.grade import FAILED, NOT_ATTEMPTED, PASSED, SKIPPED, grade
from graders.tasks import BY_ID
from graders.worker import verbs_loop
from graders.worker.verbs_torch import SGD as MirrorSGD

TRAIN_TASKS = ("5.1", "5.2", "5.3", "5.4", "5.5")
TORCH_TASKS = ("6.1", "6.2")
LOOP_TASKS = TRAIN_TASKS + TORCH_TASKS
CUDA_STATUS = PASSED if torch.cuda.is_available() else SKIPPED


def submission(tmp_path, file: str | None = None, *replacements: tuple[str, str], only=None):
    """A copy of solutions/ (or of only the ``only`` files) with ``file`` changed by each (old, new)."""
    folder = tmp_path / "submission"
    shutil.copytree(paths.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if only is not None:
        for path in folder.glob("*.py"):
            if path.name not in only:
                path.unlink()
    if file is not None:
        text = (folder / file).read_text()
        for old, new in replacements:
            assert text.count(old) == 1, f"{old!r} is not in {file} exactly once"
            text = text.replace(old, new)
        (folder / file).write_text(text)
    return folder


def results(folder, task_ids) -> dict:
    return {r.task.id: r for r in grade(folder, task_ids=task_ids).results}


def head(task_id: str) -> dict:
    return msg.header(BY_ID[task_id])


def assert_loses_only(results_by_id: dict, lost: str) -> str:
    """Only ``lost`` failed among the graded tasks; returns its message. 6.2 runs the same checks as 6.1 on
    CUDA, so where a GPU is present a mistake that loses 6.1 loses 6.2 too; elsewhere 6.2 is skipped."""
    def status(task: str) -> str:
        if task == lost or (task == "6.2" and lost == "6.1" and CUDA_STATUS == PASSED):
            return FAILED
        return CUDA_STATUS if task == "6.2" else PASSED

    expected = {task: status(task) for task in results_by_id}
    assert {task: r.status for task, r in results_by_id.items()} == expected, \
        "\n\n".join(r.message for r in results_by_id.values() if r.status != expected[r.task.id])
    return results_by_id[lost].message


# ----- the reference and the stubs -----


def test_the_solutions_pass_every_loop_task(tmp_path):
    """Does the reference solution pass 5.1-5.5 and 6.1 (6.2 skipped without CUDA), well inside the time budget?"""
    report = grade(submission(tmp_path), task_ids=LOOP_TASKS)
    statuses = {r.task.id: r.status for r in report.results}
    assert statuses == {**{t: PASSED for t in LOOP_TASKS}, "6.2": CUDA_STATUS}, \
        "\n".join(r.message for r in report.results)
    assert report.score == sum(BY_ID[t].points for t in LOOP_TASKS)


def test_the_exercises_are_not_attempted():
    """Do the stubs of exercises/ read as 'not attempted' for every loop task (6.2 skipped without CUDA)?"""
    report = grade(paths.EXERCISES, task_ids=LOOP_TASKS)
    statuses = {r.task.id: r.status for r in report.results}
    assert statuses == {**{t: NOT_ATTEMPTED for t in LOOP_TASKS}, "6.2": SKIPPED if CUDA_STATUS == SKIPPED
                        else NOT_ATTEMPTED}
    assert report.results[0].message == msg.NOT_ATTEMPTED.format(task="5.1", what="train_epoch", file="train.py")
    assert report.results[4].message == msg.NOT_ATTEMPTED.format(task="5.5", what="save a checkpoint",
                                                                 file="train.py")


def test_without_cuda_task_6_2_is_skipped_and_carries_no_points(tmp_path, monkeypatch):
    """Without CUDA, is 6.2 reported as skipped with the no-CUDA line, and out of no points?"""
    monkeypatch.setattr(torch_checks.reference, "cuda_available", lambda: False)
    [result] = grade(submission(tmp_path), task_ids=("6.2",)).results
    assert (result.status, result.score, result.max_score) == (SKIPPED, 0.0, 0.0)
    assert result.message == msg.SKIPPED_NO_CUDA.format(**head("6.2"))


def test_with_cuda_task_6_2_runs_the_check_of_6_1_on_cuda(tmp_path, monkeypatch):
    """Where CUDA is present, does 6.2 run 6.1's very check, with only the device changed?"""
    devices = []
    monkeypatch.setattr(torch_checks.reference, "cuda_available", lambda: True)
    monkeypatch.setattr(torch_checks, "check_fit_torch", lambda ctx, device: devices.append((ctx.task.id, device)))
    grade(submission(tmp_path), task_ids=TORCH_TASKS)
    assert devices == [("6.1", torch_checks.JUDGES_DEVICE), ("6.2", "cuda")]


def test_the_mirror_sgd_steps_exactly_like_torch_optim_sgd():
    """Does the SGD handed to fit_torch (torch.optim's arithmetic, without its import cost) match torch.optim.SGD?"""
    def run(optimizer_class):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).double()
        optimizer = optimizer_class(net.parameters(), lr=0.05, momentum=0.9)
        x = torch.linspace(-2.0, 2.0, 16, dtype=torch.float64).reshape(-1, 1)
        for _ in range(5):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(net(x), torch.sin(2 * x)).backward()
            optimizer.step()
        return [p.detach().numpy() for p in net.parameters()]

    for mirror, real in zip(run(MirrorSGD), run(torch.optim.SGD)):
        np.testing.assert_array_equal(mirror, real)


def test_the_judge_and_the_worker_compute_the_weighted_loss_its_message_defines():
    """msg.LOSS_WEIGHTED is the weighted loss's one definition; the judge (trajectory) and the worker (verbs_loop),
    which share no code, each compute it: do both compute the formula the message writes, which tells a call
    loss_fn(target, prediction) from the right one?"""
    call, formula = msg.LOSS_WEIGHTED.split(" = ", 1)
    assert call == "loss_fn(prediction, target)"
    rng = np.random.default_rng(0)
    prediction, target = rng.standard_normal((2, 7, 1))
    described = eval(formula, {"__builtins__": {}, "mean": np.mean}, {"prediction": prediction, "target": target})
    judge = trajectory.weighted_loss(torch.from_numpy(prediction), torch.from_numpy(target)).item()
    worker = verbs_loop.weighted_loss(prediction, target)
    np.testing.assert_allclose([judge, worker], [described, described], rtol=1e-13, atol=0)
    swapped = eval(formula, {"__builtins__": {}, "mean": np.mean}, {"prediction": target, "target": prediction})
    assert not np.isclose(described, swapped)


# ----- one known-wrong submission per task -----


def test_keeping_the_loss_tensors_loses_5_1_by_the_workers_memory(tmp_path):
    """A train_epoch that keeps every loss Tensor (and reads them with .item() only at the end) computes every number
    right, but keeps every batch's graph alive: does it lose 5.1 (and only 5.1: 5.3 grades the numbers) by the
    worker's memory, which the judge reads from the kernel, with a message that names .item()?"""
    folder = submission(tmp_path, "train.py",
                        ("losses.append(loss.item())", "losses.append(loss)"),
                        ("    return float(np.mean(losses))\n    ### END SOLUTION\n\n\ndef _step",
                         "    return float(np.mean([l.item() for l in losses]))\n    ### END SOLUTION\n\n\ndef _step"))
    by_id = results(folder, ("5.1", "5.3"))
    assert (by_id["5.1"].status, by_id["5.3"].status) == (FAILED, PASSED), by_id["5.1"].message
    assert by_id["5.1"].message.startswith(msg.LOSSES_KEPT.split("{batches}")[0].format(
        function="train_epoch", **head("5.1"))), by_id["5.1"].message
    assert ".item()" in by_id["5.1"].message
    assert by_id["5.1"].data["memory"]["mib"] > 0.9 * loop.MEMORY_BATCHES * loop.BALLAST_MIB


def test_a_loop_that_keeps_floats_keeps_5_1_and_its_memory_stays_low(tmp_path):
    """The reference, and a train_epoch that keeps a running total of loss.item() (floats, no graph): do both keep
    5.1, with the worker's memory rising by about the two graphs a loop holds at once, well under the bound?"""
    for folder in (submission(tmp_path), submission(tmp_path / "total", "train.py", (
            "    losses, pending = [], 0\n", "    losses, pending, total = [], 0, 0.0\n"),
            ("        losses.append(loss.item())\n", "        losses.append(0)\n        total += loss.item()\n"),
            ("    return float(np.mean(losses))\n    ### END SOLUTION\n\n\ndef _step",
             "    return total / len(losses)\n    ### END SOLUTION\n\n\ndef _step"))):
        [result] = grade(folder, task_ids=("5.1",)).results
        assert result.status == PASSED and result.message == msg.PASSED.format(**head("5.1")), result.message
        assert result.data["memory"]["mib"] < loop.LET_GO_MIB + loop.BALLAST_MIB < loop.KEPT_BOUND_MIB


def test_not_restoring_the_mode_loses_only_5_2(tmp_path):
    """Does an evaluate that always ends in training mode lose 5.2 alone, naming the model it left wrong?"""
    folder = submission(tmp_path, "train.py", ("model.train(was_training)", "model.train()"))
    message = assert_loses_only(results(folder, TRAIN_TASKS), "5.2")
    assert message == msg.LOOP_MODE.format(where="after evaluate of a model in eval mode", subject="the model",
                                           got="in training mode", expected="in eval mode",
                                           hint=msg.HINT_RESTORE_MODE, **head("5.2"))


def test_not_dividing_by_accumulate_loses_only_5_3(tmp_path):
    """Does a train_epoch that backpropagates undivided micro-batch losses lose 5.3 alone, with that hint?"""
    folder = submission(tmp_path, "train.py", ("        (loss / accumulate).backward()", "        loss.backward()"))
    message = assert_loses_only(results(folder, TRAIN_TASKS), "5.3")
    assert message.startswith(msg.WRONG_VALUE_HEAD.format(what="layers.0.weight after one epoch", **head("5.3")))
    assert message.endswith(msg.HINT.format(hint=msg.HINT_NOT_DIVIDED))


def test_forgetting_val_loss_in_fit_loses_only_5_4(tmp_path):
    """Does a fit that never validates lose 5.4 alone (5.5 holds the resumed run to the student's own fit)?"""
    folder = submission(tmp_path, "train.py", ('        if val_loader is not None:\n            history["val_loss"]',
                                               '        if False:\n            history["val_loss"]'))
    message = assert_loses_only(results(folder, TRAIN_TASKS), "5.4")
    assert message == msg.WRONG_KIND.format(what='history["val_loss"] from fit', got="a list of 0",
                                            expected="3 (one per epoch)", **head("5.4"))


def test_saving_with_np_savez_to_a_bare_name_loses_only_5_5(tmp_path):
    """Does a checkpoint written with np.savez(path) (so at path + '.npz') lose 5.5 alone, with that hint?"""
    folder = submission(tmp_path, "train.py",
                        ('    tmp = f"{os.fspath(path)}.tmp"\n    with open(tmp, "wb") as f:\n        np.savez(f,',
                         "    if True:\n        np.savez(path,"),
                        ("    os.replace(tmp, path)\n", ""))
    message = assert_loses_only(results(folder, TRAIN_TASKS), "5.5")
    assert message == msg.CKPT_NOT_AT_PATH.format(path="checkpoint", found=msg.CKPT_FOUND.format(
        names="'checkpoint.npz'"), hint=msg.HINT_CKPT_NPZ, **head("5.5"))


def test_fit_torch_left_in_eval_mode_after_validation_loses_6_1(tmp_path):
    """Does a fit_torch that calls model.train() once, before the epochs, lose 6.1 at epoch 2's first batch?"""
    folder = submission(tmp_path, "torch_loop.py", ("    for _ in range(epochs):\n        model.train()",
                                                    "    model.train()\n    for _ in range(epochs):"))
    message = assert_loses_only(results(folder, TORCH_TASKS), "6.1")
    assert message == msg.LOOP_MODE.format(where="at forward 7 (a training batch)", subject="the model",
                                           got="in eval mode", expected="in train mode", hint=msg.HINT_TORCH_TRAIN,
                                           **head("6.1"))


def test_the_end_to_end_rung_computes_the_mse_itself(tmp_path):
    """With an SGD that never moves the weights, does 5.4 fail on the MSE the grader computed from them?"""
    folder = submission(tmp_path, "optim.py", ("            p.data -= self.lr * d\n", "            pass\n"))
    [result] = grade(folder, task_ids=("5.4",)).results
    assert result.status == FAILED
    assert result.message.startswith(msg.FIT_E2E_ABOVE_BAR.split("{mse")[0].format(
        setup=msg.FIT_E2E_SETUP.format(lr=0.02, batch_size=32, epochs=300, data=msg.E2E_LESSON_DATA),
        **head("5.4")))


def test_the_end_to_end_rung_replays_the_loaders_own_permutation(tmp_path):
    """Does a DataLoader that shuffles its own way (rng.shuffle of the indices, where the reference draws
    rng.permutation) still pass 5.4: the judge replays the run over the batches the loader yielded?"""
    folder = submission(tmp_path, "data.py", (
        "order = self.rng.permutation(n) if self.shuffle else np.arange(n)",
        "order = np.arange(n)\n        if self.shuffle:\n            self.rng.shuffle(order)"))
    [result] = grade(folder, task_ids=("5.4",)).results
    assert result.status == PASSED, result.message


def test_the_end_to_end_rung_wants_the_lessons_run(tmp_path):
    """With an SGD whose steps are 10% too long, the run still reaches the noise floor: does 5.4 fail on the judge's
    replay of the lesson's run, saying what it replayed?"""
    folder = submission(tmp_path, "optim.py", ("            p.data -= self.lr * d\n",
                                               "            p.data -= 1.1 * self.lr * d\n"))
    [result] = grade(folder, task_ids=("5.4",)).results
    assert result.status == FAILED
    assert result.message.startswith(msg.WRONG_VALUE_HEAD.format(what="layers.0.weight after the lesson's run",
                                                                 **head("5.4")))
    assert msg.FIT_E2E_REPLAY.format(seed=0, lr=0.02) in result.message


def test_the_end_to_end_rung_wants_one_pass_per_epoch(tmp_path):
    """Does a fit that makes an extra pass over its training loader at the end (for a final training loss) fail 5.4,
    saying so? (The judge's replay follows the loader's passes, one per epoch.)"""
    folder = submission(tmp_path, "train.py", ("    return history\n    ### END SOLUTION",
                                               "    history[\"final\"] = evaluate(model, train_loader, loss_fn)\n"
                                               "    return history\n    ### END SOLUTION"))
    [result] = grade(folder, task_ids=("5.4",)).results
    assert result.message == msg.FIT_E2E_PASSES.format(
        got=301, epochs=300, setup=msg.FIT_E2E_SETUP.format(lr=0.02, batch_size=32, epochs=300,
                                                            data=msg.E2E_LESSON_DATA), **head("5.4"))


def test_the_end_to_end_rung_needs_the_whole_stack(tmp_path):
    """Does a submission of train.py alone pass 5.1 but fail 5.4's end-to-end rung, naming the missing file?"""
    by_id = results(submission(tmp_path, only={"train.py"}), ("5.1", "5.4"))
    assert by_id["5.1"].status == PASSED
    assert by_id["5.4"].message == msg.FIT_E2E_MISSING.format(file="tensor.py", **head("5.4"))


# ----- more known mistakes (slower: one grading each) -----

SLOW_TRAIN_CASES = {
    "return the loss Tensor": (
        "5.1", [("losses.append(loss.item())", "losses.append(loss)"),
                ("    return float(np.mean(losses))\n    ### END SOLUTION\n\n\ndef _step",
                 "    return sum(losses[1:], losses[0]) / len(losses)\n    ### END SOLUTION\n\n\ndef _step")],
        msg.WRONG_KIND.format(what="the value train_epoch returned", got="a Tensor",
                              expected=msg.LOOP_FLOAT.format(how="read the loss with .item()"), **head("5.1"))),
    "forget model.train()": (
        "5.1", [("    model.train()\n    losses, pending", "    losses, pending")],
        msg.HINT.format(hint=msg.HINT_MODES_SEEN.format(what="weights", modes=msg.MODES_EVAL_GRAD,
                                                        hint=msg.HINT_TRAIN_MODE))),
    "forget model.eval()": (
        "5.2", [("    model.eval()\n    try:", "    try:")],
        msg.HINT.format(hint=msg.HINT_MODES_SEEN.format(what="losses", modes=msg.MODES_TRAINING_NO_GRAD,
                                                        hint=msg.HINT_EVAL_MODE))),
    "forget no_grad()": (
        "5.2", [("        with no_grad():\n            losses", "        if True:\n            losses")],
        msg.HINT.format(hint=msg.HINT_MODES_SEEN.format(what="losses", modes=msg.MODES_EVAL_GRAD,
                                                        hint=msg.HINT_EVAL_NO_GRAD))),
    "clip without + 1e-6": (
        "5.3", [("scale = min(1.0, max_norm / (total + 1e-6))", "scale = min(1.0, max_norm / total)")],
        msg.HINT.format(hint=msg.HINT_CLIP_EPSILON)),
    "clip into new arrays": (
        "5.3", [("    for g in grads:\n        g *= scale", "    for p in params:\n        if p.grad is not None:\n"
                 "            p.grad = p.grad * scale")], msg.CLIP_REPLACED.format(index=0, **head("5.3"))),
    "fit without resuming": (
        "5.5", [("    if checkpoint is not None and os.path.exists(checkpoint):", "    if False:")],
        msg.HINT.format(hint=msg.HINT_CKPT_IGNORED)),
    "resume without the optimizer": (
        "5.5", [("        optimizer.load_state_dict(", "        (lambda state: None)(")],
        msg.HINT.format(hint=msg.HINT_CKPT_OPTIMIZER)),
    "load a checkpoint with pickles allowed": (
        "5.5", [("with np.load(path, allow_pickle=False) as saved:",
                 "with np.load(path, allow_pickle=True) as saved:")],
        msg.CKPT_UNPICKLED.format(**head("5.5"))),
    "call the loss with the target first": (
        "5.1", [("        loss = loss_fn(model(xb), yb)\n        (loss / accumulate)",
                 "        loss = loss_fn(yb, model(xb))\n        (loss / accumulate)")],
        msg.HINT.format(hint=msg.HINT_LOSS_ARGS)),
    "fit that drops clip_norm": (
        "5.4", [("accumulate=accumulate, clip_norm=clip_norm)", "accumulate=accumulate)")],
        msg.HINT.format(hint=msg.HINT_FIT_OPTIONS.format(options="clip_norm",
                                                         call="accumulate=accumulate, clip_norm=clip_norm"))),
    "fit that drops accumulate": (
        "5.4", [("accumulate=accumulate, clip_norm=clip_norm)", "clip_norm=clip_norm)")],
        msg.HINT.format(hint=msg.HINT_FIT_OPTIONS.format(options="accumulate",
                                                         call="accumulate=accumulate, clip_norm=clip_norm"))),
    "evaluate with the target first": (
        "5.2", [("losses = [loss_fn(model(xb), yb).item()", "losses = [loss_fn(yb, model(xb)).item()")],
        msg.HINT.format(hint=msg.HINT_LOSS_ARGS)),
}


@pytest.mark.slow
@pytest.mark.parametrize("mistake", list(SLOW_TRAIN_CASES))
def test_a_known_mistake_in_train_py_loses_only_its_task(tmp_path, mistake):
    """Does each classic mistake in train.py lose exactly its task, with its message (or hint line)?"""
    lost, replacements, text = SLOW_TRAIN_CASES[mistake]
    message = assert_loses_only(results(submission(tmp_path, "train.py", *replacements), TRAIN_TASKS), lost)
    assert message == text or message.endswith(text), message


@pytest.mark.slow
def test_dropping_zero_grad_loses_5_1_and_what_uses_train_epoch(tmp_path):
    """Does a train_epoch that never clears gradients lose 5.1 (with the hint), 5.3 (same function) and 5.4's
    end-to-end run, but keep 5.2 and 5.5 (fit is graded over the reference train_epoch)?"""
    folder = submission(tmp_path, "train.py", ("    optimizer.zero_grad()\n    for xb", "    for xb"),
                        ("    optimizer.step()\n    optimizer.zero_grad()", "    optimizer.step()"))
    by_id = results(folder, TRAIN_TASKS)
    assert {t: r.status for t, r in by_id.items()} == {"5.1": FAILED, "5.2": PASSED, "5.3": FAILED, "5.4": FAILED,
                                                       "5.5": PASSED}
    assert by_id["5.1"].message.endswith(msg.HINT.format(hint=msg.HINT_NO_ZERO_GRAD))


@pytest.mark.slow
def test_clip_that_indexes_each_grad_loses_only_5_3_on_a_0d_parameter(tmp_path):
    """Does a clip_grad_norm that scales with g[:] *= scale (fine for arrays of one or more axes) lose 5.3 alone,
    at the 0-d parameter, saying what it raised?"""
    folder = submission(tmp_path, "train.py", ("    for g in grads:\n        g *= scale",
                                               "    for g in grads:\n        g[:] *= scale"))
    message = assert_loses_only(results(folder, TRAIN_TASKS), "5.3")
    assert "IndexError" in message and "max_norm=0.1" in message, message


TORCH_MISTAKES = {
    "call the loss with the target first": (
        ("            loss = loss_fn(model(xb), yb)\n", "            loss = loss_fn(yb, model(xb))\n"),
        msg.HINT.format(hint=msg.HINT_LOSS_ARGS)),
    "keep only the last validation batch": (
        ('            history["val_loss"].append(sum(val) / len(val))',
         '            history["val_loss"].append(val[-1])'), 'history["val_loss"]'),
    "step before backward": (
        ("            loss.backward()\n            optimizer.step()\n",
         "            optimizer.step()\n            loss.backward()\n"),
        msg.HINT.format(hint=msg.HINT_TORCH_NEVER_STEPPED)),
    "clear the gradients once an epoch": (
        ("        losses = []\n        for xb, yb in loader:\n            xb, yb = xb.to(device), yb.to(device)\n"
         "            optimizer.zero_grad()\n",
         "        losses = []\n        optimizer.zero_grad()\n        for xb, yb in loader:\n"
         "            xb, yb = xb.to(device), yb.to(device)\n"), msg.HINT.format(hint=msg.HINT_TORCH_ZERO_GRAD_EPOCH)),
    "average the train losses over the examples": (
        ('            losses.append(loss.item())\n        history["train_loss"].append(sum(losses) / len(losses))\n',
         '            losses.append((loss.item() * len(xb), len(xb)))\n'
         '        history["train_loss"].append(sum(s for s, _ in losses) / sum(n for _, n in losses))\n'),
        'history["train_loss"]'),
    "sum the validation losses": (
        ('            history["val_loss"].append(sum(val) / len(val))',
         '            history["val_loss"].append(sum(val))'),
        'history["val_loss"]'),
}


@pytest.mark.slow
@pytest.mark.parametrize("mistake", list(TORCH_MISTAKES))
def test_a_known_mistake_in_fit_torch_loses_only_6_1(tmp_path, mistake):
    """Does each mistake in fit_torch that MSE or a single validation batch would hide lose 6.1 (and 6.2 where
    CUDA is), with its hint or naming the history it spoils?"""
    replacement, text = TORCH_MISTAKES[mistake]
    message = assert_loses_only(results(submission(tmp_path, "torch_loop.py", replacement), TORCH_TASKS), "6.1")
    assert message.endswith(text) or text in message.splitlines()[0], message


UNMOVED = {  # a fit_torch that leaves something behind: the change, what stayed, and how many of the 36 batch tensors
    "never moves its training batches": (("            xb, yb = xb.to(device), yb.to(device)\n", ""),
                                         "the inputs of batch 1 in pass 1 over the training loader", 18),
    # to a batch's own device: on a GPU the model's inputs stay on the CPU
    "moves its training inputs with xb.to(xb)": (("xb, yb = xb.to(device), yb.to(device)",
                                                  "xb, yb = xb.to(xb), yb.to(device)"),
                                                 "the inputs of batch 1 in pass 1 over the training loader", 9),
    "never moves its validation batches": (("model(xb.to(device)), yb.to(device))", "model(xb), yb)"),
                                           "the inputs of batch 1 in pass 1 over the validation loader", 18),
}


@pytest.mark.slow
@pytest.mark.parametrize("mistake", list(UNMOVED))
def test_fit_torch_that_leaves_batches_behind_loses_6_1_on_the_judges_device(tmp_path, mistake):
    """A fit_torch that leaves batches on the CPU: on the judge's device (6.1, simulated on the CPU) the first batch
    left behind meets the model there and torch's error for two devices is raised; does 6.1 fail naming that batch?
    On CUDA, does 6.2 fail naming the first batch left behind, as before?"""
    replacement, which, count = UNMOVED[mistake]
    graded = results(submission(tmp_path, "torch_loop.py", replacement), TORCH_TASKS)
    assert graded["6.1"].status == FAILED
    assert graded["6.1"].message == msg.TORCH_LEFT_BEHIND.format(
        device="meta", what=msg.TORCH_LEFT_BATCH.format(which=which), error=MIXED, hint=msg.HINT_TORCH_MOVE_BATCHES,
        **head("6.1"))
    if CUDA_STATUS == PASSED:
        assert graded["6.2"].message == msg.TORCH_BATCH_NOT_MOVED.format(
            count=count, total=36, device="cuda", which=which, **head("6.2"))
    else:
        assert graded["6.2"].status == SKIPPED


MIXED = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, meta and cpu!"


@pytest.mark.slow
def test_fit_torch_that_never_moves_the_model_loses_6_1_naming_the_model(tmp_path):
    """Does a fit_torch that moves every batch but never the model lose 6.1 on the judge's device, naming the
    model?"""
    graded = results(submission(tmp_path, "torch_loop.py", ("    model.to(device)\n", "")), ("6.1",))
    assert graded["6.1"].message == msg.TORCH_LEFT_BEHIND.format(
        device="meta", what=msg.TORCH_LEFT_MODEL.format(calls="none"), error=MIXED, hint=msg.HINT_TORCH_MOVE_MODEL,
        **head("6.1"))


@pytest.mark.slow
def test_fit_torch_that_moves_nothing_loses_6_1_by_its_numbers(tmp_path):
    """A fit_torch that computes on the CPU whatever device it is given meets no tensor on another device: does it
    lose 6.1 all the same, the probe's output having moved on the judge's device only, with a hint that says so?"""
    graded = results(submission(tmp_path, "torch_loop.py", ("    device = torch.device(device)\n",
                                                            '    device = torch.device("cpu")\n')), ("6.1",))
    assert graded["6.1"].message.endswith(msg.HINT.format(hint=msg.HINT_TORCH_NOT_MOVED)), graded["6.1"].message


@pytest.mark.slow
def test_fit_torch_that_keeps_a_running_total_of_loss_tensors_loses_6_1_by_the_workers_memory(tmp_path):
    """Does a fit_torch whose running total adds the loss Tensors (read with .item() once an epoch) lose 6.1 by the
    worker's memory, naming .item(), while a running total of float(loss) keeps it?"""
    epoch = ("            losses.append(loss.item())\n", "            losses.append(loss)\n")
    kept = results(submission(tmp_path, "torch_loop.py", epoch, (
        'history["train_loss"].append(sum(losses) / len(losses))',
        'history["train_loss"].append((sum(losses) / len(losses)).item())')), ("6.1",))["6.1"]
    assert kept.message.startswith(msg.LOSSES_KEPT.split("{batches}")[0].format(function="fit_torch",
                                                                               **head("6.1"))), kept.message
    floats = results(submission(tmp_path / "floats", "torch_loop.py", (
        "            losses.append(loss.item())\n", "            losses.append(float(loss))\n")), ("6.1",))["6.1"]
    assert floats.status == PASSED, floats.message


EMPTIES_ANSWERS = """

import sys as _sys

_worker = _sys.modules.get("worker.main")
if _worker is not None:  # imported by the grader's worker: every later answer to this verb is empty
    _worker.VERBS[{verb!r}] = lambda **request: {{}}
"""


@pytest.mark.slow
def test_an_answer_emptied_by_the_submission_is_its_failure_not_a_grader_error(tmp_path):
    """A submission that swaps the worker's handlers for train_epoch and the engine's graphs for ones answering {}
    (from its second request on: the first is answered before the submission is imported): does each task fail
    saying the answer came back incomplete, and neither read as the grader's own failure (which tells the student
    it is not their mistake)?"""
    folder = submission(tmp_path)
    for file, verb in (("train.py", "train_epoch_watched"), ("tensor.py", "graph")):
        with open(folder / file, "a") as f:
            f.write(EMPTIES_ANSWERS.format(verb=verb))
    by_id = results(folder, ("2.1", "5.1"))
    assert {task: r.status for task, r in by_id.items()} == dict.fromkeys(("2.1", "5.1"), FAILED), \
        "\n".join(r.message for r in by_id.values())
    assert all("came back incomplete" in r.message for r in by_id.values()), [r.message for r in by_id.values()]
