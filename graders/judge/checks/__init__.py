"""The checks, one module per group of tasks, and the table of which function grades which task."""

from __future__ import annotations

from collections.abc import Callable


def checks() -> dict[str, Callable]:
    """Every task's check, written out: the task id -> the function that runs its ladder. The modules import
    torch and Hypothesis, so they load here, when a grade needs them, not when graders.judge loads."""
    from graders.judge.checks import checkpoint, data, engine, loop, ops, optim, torch_loop

    return {
        "1.1": ops.unbroadcast,
        "1.2": ops.add_sub_neg,
        "1.3": ops.mul_div,
        "1.4": ops.matmul,
        "1.5": ops.pow_exp_log,
        "1.6": ops.relu_tanh_sigmoid,
        "1.7": ops.reductions,
        "1.8": ops.reshape_transpose,
        "2.1": engine.topological_order,
        "2.2": engine.seeding_accumulation_errors,
        "2.3": engine.no_grad,
        "2.4": engine.deep_graphs,
        "3.1": optim.sgd_step,
        "3.2": optim.sgd_momentum_decay_state,
        "3.3": optim.adam,
        "4.1": data.batching,
        "4.2": data.shuffling,
        "5.1": loop.train_epoch,
        "5.2": loop.evaluate,
        "5.3": loop.accumulation_and_clipping,
        "5.4": loop.fit,
        "5.5": checkpoint.checkpoint,
        "6.1": torch_loop.fit_torch_cpu,
        "6.2": torch_loop.fit_torch_cuda,
    }
